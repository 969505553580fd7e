#include "figure.hpp"

#include "workbook.hpp"

#include <cstdarg>
#include <cstdio>

namespace wb {

void FigureTable::row(const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n < 0 || n >= static_cast<int>(sizeof line))
    throw std::logic_error(std::string("a figure row longer than 511 characters, from the format ") + format);
  rows_.emplace_back(line);
}

int FigureTable::save(const std::string& path, int measuringStep) const {
  if (path.empty()) return kExitOk;
  if (rows_.empty()) {
    std::remove(path.c_str());  // an older run's table must not pass for this run's
    std::printf("No table for %s: step %d measured nothing in this run.\n", path.c_str(), measuringStep);
    return kExitOk;
  }
  FILE* f = std::fopen(path.c_str(), "w");
  bool written = f != nullptr && std::fprintf(f, "%s\n", header_.c_str()) > 0;
  for (const std::string& r : rows_) written = written && std::fprintf(f, "%s\n", r.c_str()) > 0;
  if (f != nullptr) written = (std::fclose(f) == 0) && written;
  if (!written) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: cannot write %s: check that its folder exists and is writable\n", path.c_str());
    return kExitUsage;
  }
  std::printf("The table is in %s.\n", path.c_str());
  return kExitOk;
}

bool parseFigureArgs(int argc, char** argv, FigurePaths& paths, const char* csvExample, const char* pytorchExample) {
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    if (option == "--csv" && i + 1 < argc) {
      paths.csv = argv[++i];
    } else if (option == "--pytorch" && pytorchExample != nullptr && i + 1 < argc) {
      paths.pytorch = argv[++i];
    } else {
      if (pytorchExample == nullptr)
        std::fprintf(stderr, "usage: %s [--csv %s]\n", argv[0], csvExample);
      else
        std::fprintf(stderr, "usage: %s [--csv %s] [--pytorch %s]\n", argv[0], csvExample, pytorchExample);
      return false;
    }
  }
  return true;
}

}  // namespace wb

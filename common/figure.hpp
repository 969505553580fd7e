// A lesson's figure as a table: the rows its measuring step made, written as CSV where its command
// line asks (--csv PATH). record-outputs passes a path and copies the file beside the recorded
// output; the page generator draws it. A figure on a page therefore always comes from the run
// recorded beside it, never from an earlier one.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace wb {

class FigureTable {
 public:
  explicit FigureTable(std::string header) : header_(std::move(header)) {}

  // Adds one row, formatted as printf formats it ("%zu,pool (warm),%.3f").
  void row(const char* format, ...) __attribute__((format(printf, 2, 3)));

  // Where path is empty, does nothing. Otherwise writes the header and the rows there and says
  // where the table is; with no rows (step `measuringStep` measured nothing in this run: left out
  // under compute-sanitizer, or one GPU where it needs two) it removes any older file at path and
  // says why there is none. Returns the lesson's exit code: kExitOk, or kExitUsage after saying
  // that the file could not be written and what to check.
  int save(const std::string& path, int measuringStep) const;

 private:
  std::string header_;
  std::vector<std::string> rows_;
};

// The paths a lesson's command line may name: the figure's CSV to write and, in the projects
// (lessons 30-32), PyTorch's measurements to compare against.
struct FigurePaths {
  std::string csv, pytorch;
};

// Reads argv[1..argc): --csv PATH, and --pytorch PATH where pytorchExample is given. On anything
// else prints the usage line, with the example file names, to stderr and returns false: the
// lesson then ends with kExitUsage.
bool parseFigureArgs(int argc, char** argv, FigurePaths& paths, const char* csvExample,
                     const char* pytorchExample = nullptr);

}  // namespace wb

#include "scratch.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace wb {

ScratchDir::ScratchDir() {
  char templ[] = "/tmp/workbook-XXXXXX";
  if (!mkdtemp(templ)) throw std::runtime_error("cannot make a scratch folder in /tmp");
  path_ = templ;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::size_t regularFilesUnder(const std::string& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    n += it->is_regular_file();
  return n;
}

}  // namespace wb

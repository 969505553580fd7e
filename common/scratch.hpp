// Scratch folders for the lessons and tests that write files (damaged images, JIT caches).
// Needs no CUDA library.
#pragma once

#include <cstddef>
#include <string>

namespace wb {

// A fresh folder under /tmp (mkdtemp), removed with everything in it at scope exit. Throws
// std::runtime_error when none can be made.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// How many regular files lie in dir and its subfolders (0 when dir does not exist).
std::size_t regularFilesUnder(const std::string& dir);

}  // namespace wb

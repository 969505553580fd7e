// Wrong (R5): the fallback is created and returned, but CUDA_CACHE_PATH is never set to it
//
// The function computes the right answer and tells only its caller: the driver reads
// CUDA_CACHE_PATH at cuInit and never learns of the fallback, so it goes on failing to write the
// blocked folder. The second case fails `env("CUDA_CACHE_PATH") == s.fallback`.
#include "exercises.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace ex00 {

namespace {

namespace fs = std::filesystem;

// $HOME, or where the password database puts this user's home: a service started without a login
// shell often has no HOME.
std::string home() {
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  const passwd* user = getpwuid(getuid());
  return user && user->pw_dir ? user->pw_dir : "";
}

// The folder can be made and written: the nearest folder on its path that exists is a directory
// this process may write in and enter. A missing folder is not a problem; the driver creates it.
bool usable(const std::string& folder) {
  std::error_code ec;
  fs::path at = fs::absolute(folder, ec);
  while (!fs::exists(at, ec) && at.has_parent_path() && at.parent_path() != at) at = at.parent_path();
  return fs::is_directory(at, ec) && access(at.c_str(), W_OK | X_OK) == 0;
}

}  // namespace

JitCacheSetup prepareJitCache(const std::string& fallback) {
  JitCacheSetup s;
  const char* max = std::getenv("CUDA_CACHE_MAXSIZE");
  s.maxBytes = max && *max ? std::strtoull(max, nullptr, 10) : 1073741824ull;  // 64 bits: past 4 GiB too
  if (const char* off = std::getenv("CUDA_CACHE_DISABLE"); off && std::strcmp(off, "1") == 0) {
    s.enabled = false;
    return s;
  }
  const char* path = std::getenv("CUDA_CACHE_PATH");
  s.folder = path && *path ? std::string(path) : home() + "/.nv/ComputeCache";
  if (usable(s.folder)) return s;
  // Created before the variable names it: the environment never points at a folder that is not there.
  std::error_code ec;
  fs::create_directories(fallback, ec);
  if (!fs::is_directory(fallback, ec))
    throw std::runtime_error("the JIT cache " + s.folder + " cannot be written, and " + fallback + " cannot be created");
  s.folder = fallback;
  s.moved = true;
  return s;
}

}  // namespace ex00

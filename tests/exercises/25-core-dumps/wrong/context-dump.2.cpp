// Wrong (R3 R5): sets the attributes without making context current (no push)
//
// cuCoredumpSetAttribute reads like "set this attribute", and the context looks like the one in
// use; but it acts on the current context, which is the caller's. A and B keep their settings, and
// the caller's own context gets dumps on and the last path: the checks of A's and B's settings and
// of the caller's context's settings fail.
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace ex25 {

namespace {

// Pushes a context for a scope and pops it at the end, also when a call in between throws, so the
// caller's context stack is as it was.
class Pushed {
 public:
  explicit Pushed(CUcontext ctx) { CU_CHECK(cuCtxPushCurrent(ctx)); }
  ~Pushed() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  Pushed(const Pushed&) = delete;
  Pushed& operator=(const Pushed&) = delete;
};

#if CUDA_VERSION >= 12050
// A number attribute of the current context, in as many bytes as the driver expects for it (asked
// with value NULL).
void setContextNumber(CUcoredumpSettings which, long long value) {
  size_t size = 0;
  CU_CHECK(cuCoredumpGetAttribute(which, nullptr, &size));
  if (size == 0 || size > sizeof value) CU_CHECK(CUDA_ERROR_INVALID_VALUE);
  unsigned char bytes[sizeof value] = {};
  std::memcpy(bytes, &value, size);  // the low bytes, on a little-endian machine
  CU_CHECK(cuCoredumpSetAttribute(which, bytes, &size));
}
#endif

}  // namespace

// Per context: cuCoredumpSetAttribute acts on the current context, so `context` is pushed for the
// three calls and popped by the guard, whatever happens. The global settings, and so every other
// context and those created later, are left alone.
void dumpContextTo(CUcontext context, const std::string& path) {
  if (path.empty()) throw std::invalid_argument("dumpContextTo: an empty path names no file");
#if CUDA_VERSION >= 12050
  (void)context;
  setContextNumber(CU_COREDUMP_ENABLE_ON_EXCEPTION, 1);
  std::vector<char> file(path.begin(), path.end());
  file.push_back('\0');
  size_t size = file.size();
  CU_CHECK(cuCoredumpSetAttribute(CU_COREDUMP_FILE, file.data(), &size));
  setContextNumber(CU_COREDUMP_GENERATION_FLAGS, CU_COREDUMP_LIGHTWEIGHT_FLAGS | CU_COREDUMP_SKIP_ABORT);
#else
  (void)context;
  (void)path;
  throw std::runtime_error("CU_COREDUMP_GENERATION_FLAGS needs CUDA 12.5");
#endif
}

}  // namespace ex25

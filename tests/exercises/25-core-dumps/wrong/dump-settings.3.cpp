// Wrong (R4): reads the file into a fixed buffer of 256 bytes
//
// 256 bytes is more than any path in the team's tests; but cuda.h allows a path of up to 1023
// characters, and a job's folder can be deep. The check's path is over 600 characters: the driver
// refuses the read or cuts the path, and readDumpSettings(C) throws or returns a different file.
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
// An attribute's bytes, as many as the driver says it holds: asked with value NULL, the call puts
// that size in size. The global settings, or the current context's.
std::vector<unsigned char> attributeBytes(bool global, CUcoredumpSettings which) {
  size_t size = 0;
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(which, nullptr, &size) : cuCoredumpGetAttribute(which, nullptr, &size));
  std::vector<unsigned char> bytes(size);
  if (size == 0) return bytes;
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(which, bytes.data(), &size)
                  : cuCoredumpGetAttribute(which, bytes.data(), &size));
  return bytes;
}

// A number (a bool, the flags) in whatever width the driver gives it, up to 8 bytes.
unsigned long long numberOf(bool global, CUcoredumpSettings which) {
  const std::vector<unsigned char> bytes = attributeBytes(global, which);
  unsigned long long value = 0;
  if (bytes.empty() || bytes.size() > sizeof value) CU_CHECK(CUDA_ERROR_INVALID_VALUE);
  std::memcpy(&value, bytes.data(), bytes.size());  // the low bytes, on a little-endian machine
  return value;
}

// A string: up to its NUL, or the whole buffer if the driver wrote none.
std::string textOf(bool global, CUcoredumpSettings which) {
  char text[256] = {};
  size_t size = sizeof text;
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(which, text, &size) : cuCoredumpGetAttribute(which, text, &size));
  return std::string(text, strnlen(text, sizeof text));
}

DumpSettings read(bool global) {
  DumpSettings s;
  s.onException = numberOf(global, CU_COREDUMP_ENABLE_ON_EXCEPTION) != 0;
  s.file = textOf(global, CU_COREDUMP_FILE);
  s.flags = numberOf(global, CU_COREDUMP_GENERATION_FLAGS);
  return s;
}
#endif

}  // namespace

// cuCoredumpGetAttribute reads the current context's settings, so a given context is pushed for
// the reads (and popped by the guard, whatever happens); nullptr reads the global settings, which
// need no context at all.
DumpSettings readDumpSettings(CUcontext context) {
#if CUDA_VERSION >= 12050
  if (!context) return read(true);
  Pushed current(context);
  return read(false);
#else
  (void)context;
  throw std::runtime_error("CU_COREDUMP_GENERATION_FLAGS needs CUDA 12.5");
#endif
}

}  // namespace ex25

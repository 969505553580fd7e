// Wrong (R1): pushes and pops by hand, with the checked reads in between
//
// Push, read, pop reads as balanced, and it is when every read succeeds; but CU_CHECK throws past
// the pop, so a refused read leaves context pushed on the caller's thread. When the check makes a
// cuCoredumpGetAttribute call fail, the stack has C on top: the stack check of the failure case fails.
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
  const std::vector<unsigned char> bytes = attributeBytes(global, which);
  if (bytes.empty()) return "";
  const auto* text = reinterpret_cast<const char*>(bytes.data());
  return std::string(text, strnlen(text, bytes.size()));
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
  CU_CHECK(cuCtxPushCurrent(context));
  const DumpSettings s = read(false);
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
  return s;
#else
  (void)context;
  throw std::runtime_error("CU_COREDUMP_GENERATION_FLAGS needs CUDA 12.5");
#endif
}

}  // namespace ex25

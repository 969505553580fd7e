// Wrong (R6): passes each number in a width of its own choosing, without asking the driver's
//
// "A bool is an int, flags are 64 bits": the sizes look known from the types cuda.h names, so the
// call that asks for them seems one too many. But the reference gives the size as the driver's to
// say (asked with value NULL), and a width it does not expect is refused or read wrong on another
// driver. In "R2 R3 R4 R5 R6: dumpContextTo gives each context its own file ...", no size is asked:
// `enableSized` and `flagsSized` fail (or the driver refuses the width, and the call throws).
#include "exercises.hpp"

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
  if (which == CU_COREDUMP_ENABLE_ON_EXCEPTION) {
    int on = value != 0;
    size_t size = sizeof on;
    CU_CHECK(cuCoredumpSetAttribute(which, &on, &size));
    return;
  }
  size_t size = sizeof value;
  CU_CHECK(cuCoredumpSetAttribute(which, &value, &size));
}
#endif

}  // namespace

// Per context: cuCoredumpSetAttribute acts on the current context, so `context` is pushed for the
// three calls and popped by the guard, whatever happens. The global settings, and so every other
// context and those created later, are left alone.
void dumpContextTo(CUcontext context, const std::string& path) {
  if (path.empty()) throw std::invalid_argument("dumpContextTo: an empty path names no file");
#if CUDA_VERSION >= 12050
  Pushed current(context);
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

// Lesson 02: checking every call, in three stages.
//
// What you learn: every Driver API call returns a CUresult, and ignoring it lets a program run on
// with garbage. The print-and-return-bool checkDriver() found in many samples reports the error but
// leaves the caller to act on it, and it must itself survive cuGetErrorName failing. The course's
// CU_CHECK (common/cuda_check.hpp) evaluates the call once, throws wb::DriverError with the code,
// name, description, expression, file and line, and names the error even under the stub driver.
//
// Four real errors are provoked, each through all three stages: a call before cuInit, cuInit(1),
// popping an empty context stack, and an unknown code handed to cuGetErrorName.
//
// APIs: cuGetErrorName, cuGetErrorString, cuInit, cuDeviceGetCount, cuCtxPopCurrent
// Run:  ctest -R lesson02   (or build/lessons/lesson02-check-macro)
#include "workbook.hpp"

#include <cstdio>
#include <functional>
#include <string>

//! [stage1-ignored]
// Stage 1: the result is dropped. The call failed, count keeps whatever it held, and the program
// carries on as if there were -1 devices.
void stage1Ignored() {
  int count = -1;
  cuDeviceGetCount(&count);  // the CUresult is thrown away
  std::printf("  stage 1 (ignored): the program goes on with count = %d and no idea why\n", count);
}
//! [stage1-ignored]

//! [stage2-check-driver]
// Stage 2: the checkDriver() of many samples: print file, line, expression, name and description, and
// return false so the caller can react. Two traps: callers forget to look at the bool, and
// cuGetErrorName itself fails for a code it does not know (leaving the pointer NULL) and for every
// code under the stub driver, so the names must be checked before they are printed.
bool checkDriver(CUresult rc, const char* expression, const char* file, int line) {
  if (rc == CUDA_SUCCESS) return true;
  const char* name = nullptr;
  const char* text = nullptr;
  const CUresult nameRc = cuGetErrorName(rc, &name);
  const CUresult textRc = cuGetErrorString(rc, &text);
  std::printf("  stage 2 (checkDriver): %s:%d: %s failed: %s (%d): %s\n", file, line, expression,
              nameRc == CUDA_SUCCESS && name ? name : "<cuGetErrorName failed>", static_cast<int>(rc),
              textRc == CUDA_SUCCESS && text ? text : "<cuGetErrorString failed>");
  return false;
}
//! [stage2-check-driver]

//! [stage3-throwing]
// Stage 3: CU_CHECK throws; the error cannot be ignored, and one catch reports it.
void stage3Throwing(const std::function<void()>& checkedCall) {
  try {
    checkedCall();
    std::printf("  stage 3 (CU_CHECK): no error\n");
  } catch (const wb::DriverError& e) {
    std::printf("  stage 3 (CU_CHECK): threw wb::DriverError\n    what(): %s\n    code %d, name %s\n",
                e.what(), static_cast<int>(e.code()), e.name().c_str());
  }
}
//! [stage3-throwing]

//! [before-init]
void beforeInit() {
  stage1Ignored();
  int count = -1;
  checkDriver(cuDeviceGetCount(&count), "cuDeviceGetCount(&count)", __FILE__, __LINE__);
  stage3Throwing([&] { CU_CHECK(cuDeviceGetCount(&count)); });
}
//! [before-init]

//! [bad-flags]
void badInitFlags() {
  cuInit(1);  // the CUresult is thrown away
  std::printf("  stage 1 (ignored): cuInit(1) ran; "
              "nothing tells the program the driver is not initialised\n");
  checkDriver(cuInit(1), "cuInit(1)", __FILE__, __LINE__);
  stage3Throwing([] { CU_CHECK(cuInit(1)); });
}
//! [bad-flags]

//! [empty-stack]
void popEmptyStack() {
  CUcontext popped = nullptr;
  cuCtxPopCurrent(&popped);
  std::printf("  stage 1 (ignored): popped = %s, used later as if it were a context\n",
              wb::hex(popped).c_str());
  checkDriver(cuCtxPopCurrent(&popped), "cuCtxPopCurrent(&popped)", __FILE__, __LINE__);
  stage3Throwing([&] { CU_CHECK(cuCtxPopCurrent(&popped)); });
}
//! [empty-stack]

//! [unknown-code]
// 9999 stands for a code from a newer header than the driver's, or a corrupt value.
void unknownCode() {
  const auto unknown = static_cast<CUresult>(9999);
  const char* name = nullptr;
  const CUresult rc = cuGetErrorName(unknown, &name);
  std::printf("  cuGetErrorName(9999) returned %s (%d) and name = %s\n", wb::errorName(rc).c_str(),
              static_cast<int>(rc), name ? name : "NULL");
  std::printf("  stage 1 (ignored): printf(\"%%s\", name) with name == NULL is undefined behaviour\n");
  checkDriver(unknown, "unknown", __FILE__, __LINE__);
  stage3Throwing([&] { CU_CHECK(unknown); });
}
//! [unknown-code]

int main() {
  try {
    wb::checkEnvironment({});  // no variable changes what this lesson shows (device choice and the driver's log are noted)
    // Lesson 01 showed that this call answered before cuInit on driver 580. Here it also tells a machine without a
    // driver from one with: the stub driver fails it, and the program says so and stops.
    int version = 0;
    CU_CHECK(cuDriverGetVersion(&version));
    std::printf("Four errors, each seen through the three ways of handling a CUresult.\n");
    wb::step(1, "A call before cuInit");
    beforeInit();
    wb::step(2, "cuInit with flags other than 0");
    badInitFlags();
    CU_CHECK(cuInit(0));
    wb::step(3, "Popping a context off an empty stack");
    popEmptyStack();
    wb::step(4, "A code the driver does not know");
    unknownCode();
    std::printf("\nEvery later lesson wraps each call in CU_CHECK, and main() ends in one catch that gives each\n"
                "error its message and exit code (wb::reportFatal; README lists the codes).\n");
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

// What lesson 16's suites (tests/lesson16_launch_control.cpp) and its exercise checks
// (tests/exercises/exercise16_launch_control.cpp) both stand on: launch_control.fatbin loaded in the
// primary context, the kernels' attributes and occupancy, the hold kernel that keeps SMs busy until
// its gate opens, and the SMs the where kernel ran on.
#pragma once

#include "gate.hpp"
#include "launch_control.hpp"
#include "support.hpp"

namespace l16 {

inline int funcAttribute(CUfunction f, CUfunction_attribute what) {
  int value = 0;
  CU_CHECK(cuFuncGetAttribute(&value, what, f));
  return value;
}

inline int blocksPerSm(CUfunction f, int threads, size_t dynamicBytes) {
  int blocks = 0;
  CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, threads, dynamicBytes));
  return blocks;
}

inline CUfunction loadedHere(CUkernel kernel) {
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
#if CUDA_VERSION >= 12040
  CU_CHECK(cuFuncLoad(f));
#endif
  return f;
}

// The hold kernel's launch and the where kernel's SMs, as lesson 16's program has them
// (common/launch_control.hpp).
using wb::Holding;
using wb::smsOf;

// The primary context of device 0, current, and launch_control.fatbin loaded afresh.
struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
  CUlibrary library = nullptr;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("launch_control.fatbin").c_str(), nullptr, nullptr,
                                   0, nullptr, nullptr, 0));
  }
  ~Lab() { cuLibraryUnload(library); }
  CUdevice dev() const { return primary.device(); }
  int attribute(CUdevice_attribute what) const { return wbt::attribute(dev(), what); }
  CUkernel kernel(const char* name) const {
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, library, name));
    return k;
  }
  CUfunction fn(const char* name) const { return loadedHere(kernel(name)); }  // in the primary context
};

}  // namespace l16

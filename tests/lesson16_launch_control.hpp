// What lesson 16's suites (tests/lesson16_launch_control.cpp) and its exercise checks
// (tests/exercises/exercise16_launch_control.cpp) both stand on: launch_control.fatbin loaded in the
// primary context, the kernels' attributes and occupancy, the hold kernel that keeps SMs busy until
// its gate opens, and the SMs the where kernel ran on.
#pragma once

#include "gate.hpp"
#include "support.hpp"

#include <chrono>
#include <set>
#include <thread>

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


// One launch of hold in stream s; its destructor opens the gate and waits for it. Allocate what the
// host needs while it waits before making one: allocating or freeing pinned memory may wait for the
// device, which would wait for the gate.
class Holding {
 public:
  Holding(CUfunction hold, CUstream s, unsigned blocks, unsigned threads, double deadlineSeconds)
      : words_(1 + 2 * size_t{blocks}), blocks_(blocks) {
    CU_CHECK(cuEventCreate(&done_, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr gate = words_.device(0), state = words_.device(1), smOf = words_.device(1 + blocks);
    unsigned long long deadlineNs = static_cast<unsigned long long>(deadlineSeconds * 1e9);
    void* args[] = {&gate, &deadlineNs, &state, &smOf};
    CU_CHECK(cuLaunchKernel(hold, blocks, 1, 1, threads, 1, 1, 0, s, args, nullptr));
    CU_CHECK(cuEventRecord(done_, s));
  }
  ~Holding() {
    words_.write(0, 1);
    cuEventSynchronize(done_);
    cuEventDestroy(done_);
  }
  Holding(const Holding&) = delete;
  Holding& operator=(const Holding&) = delete;
  unsigned count(unsigned state) const {
    unsigned n = 0;
    for (unsigned b = 0; b < blocks_; ++b) n += words_.read(1 + b) == state;
    return n;
  }
  bool allArrived(double limitSeconds) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limitSeconds);
    while (count(0) != 0) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::yield();
    }
    return true;
  }
  std::set<unsigned> sms() const {
    std::set<unsigned> ids;
    for (unsigned b = 0; b < blocks_; ++b) ids.insert(words_.read(1 + blocks_ + b));
    return ids;
  }

 private:
  wb::PinnedWords words_;
  unsigned blocks_;
  CUevent done_ = nullptr;
};


inline std::set<unsigned> smsOf(CUfunction where, CUstream s, unsigned blocks, wb::PinnedWords& smOf) {
  CUdeviceptr p = smOf.device(0);
  void* args[] = {&p};
  CU_CHECK(cuLaunchKernel(where, blocks, 1, 1, 32, 1, 1, 0, s, args, nullptr));
  CU_CHECK(cuStreamSynchronize(s));
  std::set<unsigned> ids;
  for (unsigned b = 0; b < blocks; ++b) ids.insert(smOf.read(b));
  return ids;
}

}  // namespace l16

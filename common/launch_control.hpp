// The host side of kernels/launch_control.cu that lesson 16 (lessons/16-launch-control/main.cpp) and
// its tests (tests/lesson16_launch_control.hpp, which the suites and the exercise checks include)
// share: the hold kernel that keeps SMs busy until its gate opens, and the SMs the where kernel ran
// on. (The calls lesson 16 teaches, cuFuncGetAttribute, the occupancy calls and cuFuncLoad, stay in
// its program.)
#pragma once

#include "cuda_check.hpp"
#include "gate.hpp"  // wb::PinnedWords: words of pinned host memory that kernels read and write
#include "workbook.hpp"

#include <cuda.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

namespace wb {

//! [holding]
// One launch of hold: `blocks` blocks of `threads` threads in stream s, the gate, each block's state
// and SM in pinned words. The destructor opens the gate and waits for the kernel. Allocate what the
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
    open();
    cuEventSynchronize(done_);
    cuEventDestroy(done_);
  }
  Holding(const Holding&) = delete;
  Holding& operator=(const Holding&) = delete;
  void open() { words_.write(0, 1); }
  unsigned count(unsigned state) const;  // blocks in it: 0 not started, 1 waiting, 2 released, 3 timed out
  bool allArrived(double limitSeconds) const;  // every block arrived within the limit
  void expectResident(const std::string& what) const;  // every block arrived, within 5 s
  std::set<unsigned> sms() const;
 private:
  wb::PinnedWords words_;  // [0] the gate, [1, 1 + blocks) each block's state, then each block's SM
  unsigned blocks_;
  CUevent done_ = nullptr;
};
//! [holding]

inline unsigned Holding::count(unsigned state) const {
  unsigned n = 0;
  for (unsigned b = 0; b < blocks_; ++b) n += words_.read(1 + b) == state;
  return n;
}

// Never sleeping: it yields.
inline bool Holding::allArrived(double limitSeconds) const {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limitSeconds);
  while (count(0) != 0) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

inline void Holding::expectResident(const std::string& what) const {
  allArrived(5.0);
  wb::expect(count(0) == 0, what, std::to_string(count(0)) + " never started");
}

inline std::set<unsigned> Holding::sms() const {
  std::set<unsigned> ids;
  for (unsigned b = 0; b < blocks_; ++b) ids.insert(words_.read(1 + blocks_ + b));
  return ids;
}

// where over `blocks` blocks of 32 threads in stream s, into smOf (at least `blocks` words,
// allocated before: see Holding); the set of SMs the blocks ran on.
inline std::set<unsigned> smsOf(CUfunction where, CUstream s, unsigned blocks, wb::PinnedWords& smOf) {
  CUdeviceptr p = smOf.device(0);
  void* args[] = {&p};
  CU_CHECK(cuLaunchKernel(where, blocks, 1, 1, 32, 1, 1, 0, s, args, nullptr));
  CU_CHECK(cuStreamSynchronize(s));
  std::set<unsigned> ids;
  for (unsigned b = 0; b < blocks; ++b) ids.insert(smOf.read(b));
  return ids;
}

}  // namespace wb

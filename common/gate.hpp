// Deterministic pending work for lesson 09 and its tests: a gate kernel (kernels/streams.cu) that
// keeps a stream busy until the host opens it. Nothing sleeps and nothing waits forever: the
// kernel gives up by itself past its deadline, and a Gate left closed is opened by its destructor.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace wb {

// Words of pinned host memory that kernels read and write directly: mapped into the device's
// address space (the same address, with unified addressing) and pinned for every context. Zeroed.
class PinnedWords {
 public:
  explicit PinnedWords(std::size_t count);
  ~PinnedWords();
  PinnedWords(const PinnedWords&) = delete;
  PinnedWords& operator=(const PinnedWords&) = delete;
  unsigned read(std::size_t i) const { return words_[i]; }
  void write(std::size_t i, unsigned value) { words_[i] = value; }
  CUdeviceptr device(std::size_t i) const { return reinterpret_cast<CUdeviceptr>(words_ + i); }

 private:
  volatile unsigned* words_ = nullptr;
};

// One launch of the gate kernel in a stream of the current context: the stream is busy from
// here until open() (or the deadline). Its destructor opens it and waits for the kernel to end,
// so no kernel is left reading freed memory.
class Gate {
 public:
  enum Outcome { Waiting = 0, Released = 1, TimedOut = 2 };
  Gate(CUfunction gateKernel, CUstream stream, double deadlineSeconds = 10.0);
  ~Gate();
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  void open() { words_.write(0, 1); }
  // What the kernel reported: still waiting, released by open(), or gave up at its deadline.
  Outcome outcome() const { return static_cast<Outcome>(words_.read(1)); }

 private:
  PinnedWords words_{2};  // [0] the gate the kernel waits on, [1] its outcome
  CUevent done_ = nullptr;
};

// The three kernels of kernels/streams.cu, from a loaded library, each already loaded into the
// current context. Under lazy loading (the default on Linux since CUDA 12.2) a library's kernel is
// loaded into a context at its first launch there (or at cuKernelGetFunction), and loading may
// wait for the kernels running in the context; a gate that is waiting for
// the host, while the host waits for a stamp to load, would wait until its deadline. So load()
// launches each kernel once, harmlessly, and waits, before any gate is closed.
struct StreamKernels {
  CUfunction gate = nullptr, stamp = nullptr, burn = nullptr;
  static StreamKernels load(CUlibrary library);
};

}  // namespace wb

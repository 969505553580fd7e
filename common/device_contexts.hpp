// Working with the contexts of several devices from one thread: a context made current for a scope,
// device memory allocated, set, read back and freed in a named context, waiting for a context, a
// device's name, and the best time of a copy. Used by lesson 18 (lessons/18-multi-gpu/main.cpp) and
// its tests (tests/lesson18_multi_gpu.cpp).
#pragma once

#include "cuda_check.hpp"
#include "images.hpp"  // wb::Stopwatch

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace wb {

// Makes a context current for a scope and restores the one before: the current context decides
// which device a kernel runs on, and which context cuCtxEnablePeerAccess grants access to.
class On {
 public:
  explicit On(CUcontext ctx) { CU_CHECK(cuCtxPushCurrent(ctx)); }
  ~On() { CUcontext popped = nullptr; cuCtxPopCurrent(&popped); }
  On(const On&) = delete;
  On& operator=(const On&) = delete;
};

inline CUdeviceptr allocOn(CUcontext ctx, size_t bytes) {
  On current(ctx);
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAlloc(&p, bytes));
  return p;
}

inline void freeOn(CUcontext ctx, CUdeviceptr p) {
  On current(ctx);
  CU_CHECK(cuMemFree(p));
}

// n words at p, in ctx's device memory, set to word; the host waits for it.
inline void setWords(CUcontext ctx, CUdeviceptr p, unsigned word, size_t n) {
  On current(ctx);
  CU_CHECK(cuMemsetD32(p, word, n));
  CU_CHECK(cuCtxSynchronize());
}

// Waits for the work of ctx.
inline void synchronize(CUcontext ctx) {
  On current(ctx);
  CU_CHECK(cuCtxSynchronize());
}

template <class T>
std::vector<T> readBack(CUcontext ctx, CUdeviceptr p, size_t n) {
  On current(ctx);
  std::vector<T> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(T)));
  return v;
}

inline std::string deviceName(CUdevice dev) {
  char name[256] = {};
  CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
  return name;
}

//! [best-of-5]
// Best of 5 after a warm-up, in ms, by the host's clock around the whole copy (which returns once
// its bytes have arrived).
template <class Copy>
double bestMs(Copy&& copy) {
  copy();
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const Stopwatch clock;
    copy();
    best = std::min(best, clock.ms());
  }
  return best;
}
//! [best-of-5]

}  // namespace wb

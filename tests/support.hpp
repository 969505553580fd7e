// Helpers for the doctest suites: driver set-up, and owners that give every handle back even when
// an assertion ends a test early (REQUIRE throws, and the destructors still run).
#pragma once

#include <doctest/doctest.h>

#include "workbook.hpp"

#include <cstdio>
#include <vector>

namespace wbt {

inline int initDriver() {
  CU_CHECK(cuInit(0));
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  REQUIRE(count > 0);
  return count;
}

inline CUdevice device(int ordinal) {
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, ordinal));
  return dev;
}

inline int attribute(CUdevice dev, CUdevice_attribute attr) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, attr, dev));
  return value;
}

// The current context, or nullptr.
inline CUcontext current() {
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxGetCurrent(&ctx));
  return ctx;
}

// Free device memory as the current context's device reports it.
inline size_t freeMemory() {
  size_t free = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&free, &total));
  return free;
}

// A context made with cuCtxCreate (pushed, so current), destroyed at scope exit.
class OwnedContext {
 public:
  explicit OwnedContext(CUdevice dev, unsigned flags = 0) { CU_CHECK(wb::createContext(&ctx_, flags, dev)); }
  ~OwnedContext() {
    if (ctx_) cuCtxDestroy(ctx_);
  }
  OwnedContext(const OwnedContext&) = delete;
  OwnedContext& operator=(const OwnedContext&) = delete;
  CUcontext get() const { return ctx_; }
  // Destroys now, for tests about what destruction gives back.
  void destroy() {
    CU_CHECK(cuCtxDestroy(ctx_));
    ctx_ = nullptr;
  }

 private:
  CUcontext ctx_ = nullptr;
};

// A retain of a device's primary context, released at scope exit.
class RetainedPrimary {
 public:
  explicit RetainedPrimary(CUdevice dev) : dev_(dev) { CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev)); }
  ~RetainedPrimary() {
    if (ctx_) cuDevicePrimaryCtxRelease(dev_);
  }
  RetainedPrimary(const RetainedPrimary&) = delete;
  RetainedPrimary& operator=(const RetainedPrimary&) = delete;
  CUcontext get() const { return ctx_; }
  CUdevice device() const { return dev_; }

 private:
  CUdevice dev_;
  CUcontext ctx_ = nullptr;
};

// Pushes a context for the scope, so a test leaves the thread's stack as it found it.
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

// Device memory from cuMemAlloc in the current context, freed at scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { CU_CHECK(cuMemAlloc(&ptr_, bytes)); }
  ~DeviceBuffer() {
    if (ptr_) cuMemFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_;
};

}  // namespace wbt

// Reference solutions of lesson 04's exercises.
#include "exercises.hpp"

#include <utility>

namespace ex04 {

// One handle, one retain. The driver counts retains per device, so every holder of a handle must
// have taken one, and give exactly that one back.
PrimaryContext::PrimaryContext(CUdevice dev) {
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev));  // activates it on the first retain; pushes nothing
  dev_ = dev;
}

// A destructor cannot report a failure; a release can only fail for a handle that holds nothing.
PrimaryContext::~PrimaryContext() {
  if (ctx_) cuDevicePrimaryCtxRelease(dev_);
}

// A copy is a second holder, so it takes a retain of its own (none when the source is empty).
PrimaryContext::PrimaryContext(const PrimaryContext& other) {
  dev_ = other.dev_;
  if (other.ctx_) CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev_));
}

// Copy, then move: the new retain is taken before the old one is given back, so assigning a handle
// to itself (or to another holder of the same context) never drops the count to zero on the way.
PrimaryContext& PrimaryContext::operator=(const PrimaryContext& other) {
  if (this != &other) {
    PrimaryContext copy(other);
    *this = std::move(copy);
  }
  return *this;
}

// A move takes the retain over: the source holds nothing, so its destructor releases nothing.
PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept {
  dev_ = other.dev_;
  ctx_ = std::exchange(other.ctx_, nullptr);
}

// The target gives back what it held, then takes the source's retain.
PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    if (ctx_) cuDevicePrimaryCtxRelease(dev_);
    dev_ = other.dev_;
    ctx_ = std::exchange(other.ctx_, nullptr);
  }
  return *this;
}

CUcontext PrimaryContext::get() const { return ctx_; }

CUdevice PrimaryContext::device() const { return dev_; }

// Retain for the handle (it makes nothing current), push it over whatever the thread has current,
// allocate, pop back to exactly the stack the caller had, and give the retain back: the caller's
// own retain keeps the context, and this memory, alive.
CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CUdeviceptr p = 0;
  CUresult rc = cuCtxPushCurrent(primary);
  if (rc == CUDA_SUCCESS) {
    rc = cuMemAlloc(&p, bytes);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);  // back to the caller's stack, whether the allocation worked or not
  }
  cuDevicePrimaryCtxRelease(dev);
  CU_CHECK(rc);
  return p;
}

}  // namespace ex04

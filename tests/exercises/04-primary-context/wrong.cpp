// Deliberately wrong variants of lesson 04's exercises: each check must fail on them.
#include "exercises.hpp"

#include <utility>

namespace ex04 {

// Wrong: the copy operations copy the pointer and not the retain, which is what the compiler's
// would do ("the context is shared anyway"). Two handles then hold one retain: destroying the
// original of a copy releases the only retain and the context dies under the copy, so
// `witness.alive()` fails after `original.reset()`; the copy-assignment gives back a retain it never
// took, and self-assignment releases the only one (`witness.alive()` fails in both tests). The
// extra releases return CUDA_ERROR_INVALID_CONTEXT, which the destructor ignores: nothing crashes.
PrimaryContext::PrimaryContext(CUdevice dev) {
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev));
  dev_ = dev;
}

PrimaryContext::~PrimaryContext() {
  if (ctx_) cuDevicePrimaryCtxRelease(dev_);
}

PrimaryContext::PrimaryContext(const PrimaryContext& other) {
  dev_ = other.dev_;
  ctx_ = other.ctx_;
}

PrimaryContext& PrimaryContext::operator=(const PrimaryContext& other) {
  if (ctx_) cuDevicePrimaryCtxRelease(dev_);
  dev_ = other.dev_;
  ctx_ = other.ctx_;
  return *this;
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept {
  dev_ = other.dev_;
  ctx_ = std::exchange(other.ctx_, nullptr);
}

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

// Wrong: makes the primary context current with cuCtxSetCurrent and "cleans up" with
// cuCtxSetCurrent(nullptr). From a fresh thread that is right, but where the caller had its own
// context current, cuCtxSetCurrent replaced it on top of the stack and cuCtxSetCurrent(nullptr)
// popped the stack empty: the caller's context is no longer current, and
// `currentAfter == mine.get()` fails.
CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CUdeviceptr p = 0;
  CUresult rc = cuCtxSetCurrent(primary);
  if (rc == CUDA_SUCCESS) rc = cuMemAlloc(&p, bytes);
  cuCtxSetCurrent(nullptr);
  cuDevicePrimaryCtxRelease(dev);
  CU_CHECK(rc);
  return p;
}

}  // namespace ex04

// Wrong (R2 R6): the copy operations copy the pointer and not the retain, as the compiler's would ("the context is shared anyway")
//
// Two handles then hold one retain: destroying the original of a copy releases the only retain and
// the context dies under the copy, so `witness.alive()` fails after `original.reset()`; the
// copy-assignment gives back a retain it never took, and self-assignment releases the only one. The
// extra releases return CUDA_ERROR_INVALID_CONTEXT, which the destructor ignores: nothing crashes.
#include "exercises.hpp"

#include <utility>

namespace ex04 {

PrimaryContext::PrimaryContext(CUdevice dev) {
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev));  // activates it on the first retain; pushes nothing
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

}  // namespace ex04

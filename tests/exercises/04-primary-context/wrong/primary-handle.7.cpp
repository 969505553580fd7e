// Wrong (R1): the constructor does not check the retain's result, "retaining the primary context cannot fail"
//
// For a device that does not exist the retain fails and leaves ctx_ nullptr: a handle that holds
// nothing is made without a word, and the error surfaces later as a null context somewhere else.
// `!made` and `refused != CUDA_SUCCESS` fail.
#include "exercises.hpp"

#include <utility>

namespace ex04 {

PrimaryContext::PrimaryContext(CUdevice dev) {
  cuDevicePrimaryCtxRetain(&ctx_, dev);
  dev_ = dev;
}

PrimaryContext::~PrimaryContext() {
  if (ctx_) cuDevicePrimaryCtxRelease(dev_);
}

PrimaryContext::PrimaryContext(const PrimaryContext& other) {
  dev_ = other.dev_;
  if (other.ctx_) CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev_));
}

PrimaryContext& PrimaryContext::operator=(const PrimaryContext& other) {
  if (this != &other) {
    PrimaryContext copy(other);
    *this = std::move(copy);
  }
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

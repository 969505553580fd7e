// Wrong (R4): the move constructor takes the retain over but not the device, "ctx_ is what matters"
//
// The moved-to handle keeps dev_ 0: on device 0 that is right by accident. A handle of device 1
// moved once says device 0 and releases device 0's primary context instead of device 1's:
// `movedDevice == dev1` and `leaked1 == 0` fail.
// Two devices: with one GPU every handle is of device 0, which dev_ 0 happens to name.
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

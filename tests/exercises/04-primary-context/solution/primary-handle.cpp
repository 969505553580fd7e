// Reference solution of lesson 04's exercise primary-handle (lessons/04-primary-context/exercises.cpp).
#include "exercises.hpp"

#include <utility>

namespace ex04 {

// One handle, one retain. The driver counts retains per device, so every holder of a handle must
// have taken one, and give exactly that one back. A retain the driver refuses (a device that does not
// exist) leaves the handle unmade: CU_CHECK throws the refusal.
PrimaryContext::PrimaryContext(CUdevice dev) {
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev));  // activates it on the first retain; pushes nothing
  dev_ = dev;
}

// A destructor cannot report a failure; a release can only fail for a handle that holds nothing.
// It leaves every thread's current context alone: clearing it here would take the caller's away.
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

// A move takes the retain over, and the device with it: the source holds nothing, so its
// destructor releases nothing.
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

}  // namespace ex04

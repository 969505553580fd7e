// Wrong (R7): the destructor clears the current context before releasing, "so no thread points at a context that is gone"
//
// Lesson 04, step 5 clears the current context before the last release, in a program that made the
// primary context current itself. A handle never made anything current: cuCtxSetCurrent(nullptr)
// pops whatever the caller has on top of its stack. `stackAfter == "[caller's]"` fails.
#include "exercises.hpp"

#include <utility>

namespace ex04 {

PrimaryContext::PrimaryContext(CUdevice dev) {
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev));  // activates it on the first retain; pushes nothing
  dev_ = dev;
}

PrimaryContext::~PrimaryContext() {
  if (!ctx_) return;
  cuCtxSetCurrent(nullptr);
  cuDevicePrimaryCtxRelease(dev_);
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

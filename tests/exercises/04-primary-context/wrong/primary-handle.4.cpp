// Wrong (R3 R6): move-assignment takes the source's retain without giving back the one the target held
//
// The target's own retain is overwritten and never released: the primary context stays active for
// ever, with all its memory. `leaked == 0` after every handle has gone fails.
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
  dev_ = other.dev_;
  ctx_ = std::exchange(other.ctx_, nullptr);
}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    dev_ = other.dev_;
    ctx_ = std::exchange(other.ctx_, nullptr);
  }
  return *this;
}

CUcontext PrimaryContext::get() const { return ctx_; }

CUdevice PrimaryContext::device() const { return dev_; }

}  // namespace ex04

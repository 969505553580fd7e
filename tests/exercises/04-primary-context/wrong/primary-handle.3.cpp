// Wrong (R5): copy-assignment releases what the target holds first, then retains the source's, with no check for self-assignment
//
// Between two holders that order is fine. Assigning the only handle to itself releases the only
// retain: the context is torn down, with everything in it, before the retain that follows makes a
// new one. `witness.alive()` after `*first = same` fails.
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
  if (ctx_) cuDevicePrimaryCtxRelease(dev_);
  ctx_ = nullptr;
  dev_ = other.dev_;
  if (other.ctx_) CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev_));
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

// Wrong (R2): the constructor makes no context current with cuCtxSetCurrent(nullptr) before it loads
//
// "Load with no context current", read as an order. cuCtxSetCurrent(nullptr) pops the caller's
// context, and nothing puts it back: constructed with a created context current,
// `stackAfter == stack` fails.
#include "exercises.hpp"

namespace ex07 {

KernelSet::KernelSet(const std::string& imagePath) {
  CU_CHECK(cuCtxSetCurrent(nullptr));
  CU_CHECK(cuLibraryLoadFromFile(&library_, imagePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

KernelSet::~KernelSet() {
  if (library_) cuLibraryUnload(library_);
}

CUfunction KernelSet::function(const std::string& name) {
  const auto found = handedOut_.find(name);
  if (found != handedOut_.end()) return found->second;
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library_, name.c_str()));
  return handedOut_[name] = reinterpret_cast<CUfunction>(kernel);
}

}  // namespace ex07

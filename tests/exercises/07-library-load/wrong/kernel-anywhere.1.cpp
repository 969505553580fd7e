// Wrong (R4): caches what cuKernelGetFunction returns in the context current at the first request
//
// "A proper CUfunction, looked up once." That CUfunction belongs to that context alone: asked with
// no context current it cannot even be made (function() throws), and one made in device 0's primary
// context is refused by the context created after the load: `o.launch == CUDA_SUCCESS` fails.
#include "exercises.hpp"

namespace ex07 {

KernelSet::KernelSet(const std::string& imagePath) {
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
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
  return handedOut_[name] = f;
}

}  // namespace ex07

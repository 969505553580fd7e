// Wrong (R1): the constructor refuses to load with no context current, "a load needs a context"
//
// True of cuModuleLoad (lesson 06), and a library that came from there keeps the guard. But a
// library belongs to the process and cuLibraryLoadFromFile needs no context: a KernelSet made at
// start-up, before the application made any, throws CUDA_ERROR_INVALID_CONTEXT. In "R1 R2 R3: the
// constructor needs no context ...", constructed with no context current, it throws.
#include "exercises.hpp"

namespace ex07 {

KernelSet::KernelSet(const std::string& imagePath) {
  CUcontext current = nullptr;
  CU_CHECK(cuCtxGetCurrent(&current));
  if (!current) CU_CHECK(CUDA_ERROR_INVALID_CONTEXT);
  CU_CHECK(cuLibraryLoadFromFile(&library_, imagePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

KernelSet::~KernelSet() {
  if (library_) cuLibraryUnload(library_);  // a destructor must not throw; nothing to do on failure
}

CUfunction KernelSet::function(const std::string& name) {
  const auto found = handedOut_.find(name);
  if (found != handedOut_.end()) return found->second;
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library_, name.c_str()));
  return handedOut_[name] = reinterpret_cast<CUfunction>(kernel);
}

}  // namespace ex07

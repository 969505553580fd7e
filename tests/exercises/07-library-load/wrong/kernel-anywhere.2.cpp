// Wrong (R4): asks cuKernelGetFunction on every call, for the context current at the call
//
// "Not cached, so always the current context's." Right only when the function is launched where it
// was asked for: the check launches the pair asked for in device 0's primary context in the context
// created after the load, which refuses it (`o.launch == CUDA_SUCCESS` fails); with no context
// current, function() throws.
#include "exercises.hpp"

namespace ex07 {

KernelSet::KernelSet(const std::string& imagePath) {
  CU_CHECK(cuLibraryLoadFromFile(&library_, imagePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

KernelSet::~KernelSet() {
  if (library_) cuLibraryUnload(library_);
}

CUfunction KernelSet::function(const std::string& name) {
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library_, name.c_str()));
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
  return f;
}

}  // namespace ex07

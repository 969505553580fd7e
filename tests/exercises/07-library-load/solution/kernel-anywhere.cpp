// Reference solution of lesson 07's exercise kernel-anywhere (lessons/07-library-load/exercises.cpp).
#include "exercises.hpp"

namespace ex07 {

// A library belongs to the process, not to a context: cuLibraryLoadFromFile needs none current and
// creates none, and it leaves the context stack alone. The driver loads the image into a context the
// first time a kernel of it is used there, so contexts created after the load are served too.
KernelSet::KernelSet(const std::string& imagePath) {
  CU_CHECK(cuLibraryLoadFromFile(&library_, imagePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

KernelSet::~KernelSet() {
  if (library_) cuLibraryUnload(library_);  // a destructor must not throw; nothing to do on failure
}

// The CUkernel itself, cast to CUfunction, is what every context accepts: cuLaunchKernel resolves it
// in the context current at the launch (loading it there first if needed). Asking for it needs no
// context, and caching it is safe for the same reason. cuKernelGetFunction would give the current
// context's own CUfunction instead, which no other context accepts.
CUfunction KernelSet::function(const std::string& name) {
  const auto found = handedOut_.find(name);
  if (found != handedOut_.end()) return found->second;
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library_, name.c_str()));
  return handedOut_[name] = reinterpret_cast<CUfunction>(kernel);
}

}  // namespace ex07

// Wrong (R3): the destructor does not unload the library: "the driver frees it at exit"
//
// True at exit, but a plugin loaded and unloaded many times leaks a library each time, with its
// copies in every context that used it: after the KernelSet is destroyed
// `heldAfterDestruction == ""` fails ("1 library more").
#include "exercises.hpp"

namespace ex07 {

KernelSet::KernelSet(const std::string& imagePath) {
  CU_CHECK(cuLibraryLoadFromFile(&library_, imagePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

KernelSet::~KernelSet() {}

CUfunction KernelSet::function(const std::string& name) {
  const auto found = handedOut_.find(name);
  if (found != handedOut_.end()) return found->second;
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library_, name.c_str()));
  return handedOut_[name] = reinterpret_cast<CUfunction>(kernel);
}

}  // namespace ex07

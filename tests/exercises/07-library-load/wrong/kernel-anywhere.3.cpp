// Wrong (R2): the constructor retains device 0's primary context and loads with it current, "to be safe"
//
// "Loading needs a context." A library load needs none, and the retain keeps device 0's primary
// context (and its memory) alive for as long as the KernelSet lives, on a device the application may
// never use: `primaryUntouched` and `heldAfterConstruction == "1 library more"` fail.
#include "exercises.hpp"

namespace ex07 {

KernelSet::KernelSet(const std::string& imagePath) {
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxPushCurrent(primary));
  const CUresult rc = cuLibraryLoadFromFile(&library_, imagePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  cuCtxPopCurrent(&primary);
  CU_CHECK(rc);
}

KernelSet::~KernelSet() {
  if (library_) cuLibraryUnload(library_);
  CUdevice dev = 0;
  if (cuDeviceGet(&dev, 0) == CUDA_SUCCESS) cuDevicePrimaryCtxRelease(dev);
}

CUfunction KernelSet::function(const std::string& name) {
  const auto found = handedOut_.find(name);
  if (found != handedOut_.end()) return found->second;
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library_, name.c_str()));
  return handedOut_[name] = reinterpret_cast<CUfunction>(kernel);
}

}  // namespace ex07

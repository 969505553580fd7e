// Deliberately wrong variants of lesson 07's exercises: each check must fail on them.
#include "exercises.hpp"

namespace ex07 {

KernelSet::KernelSet(const std::string& imagePath) {
  CU_CHECK(cuLibraryLoadFromFile(&library_, imagePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

KernelSet::~KernelSet() {
  if (library_) cuLibraryUnload(library_);
}

// Wrong: "a proper CUfunction, looked up once": function() caches what cuKernelGetFunction returns
// in the context current at the first request. That CUfunction belongs to that context alone:
// launched in another device's primary context or in the context created after the load,
// cuLaunchKernel refuses it, and `o.launch == CUDA_SUCCESS` fails.
CUfunction KernelSet::function(const std::string& name) {
  const auto found = handedOut_.find(name);
  if (found != handedOut_.end()) return found->second;
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library_, name.c_str()));
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
  return handedOut_[name] = f;
}

// Wrong: "try the override, fall back if the driver refuses it": no reader, only the CUresult. For a
// fatbin cut to 300 bytes cuLibraryLoadFromFile returns CUDA_SUCCESS (it loads lazily), so the
// damaged file is the one returned, with fromOverride set; the child exits 11 and
// `end.code != 11` fails.
LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize) {
  (void)embeddedSize;
  LoadedLibrary loaded;
  if (cuLibraryLoadFromFile(&loaded.library, overridePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) ==
      CUDA_SUCCESS) {
    loaded.fromOverride = true;
    return loaded;
  }
  loaded.library = nullptr;
  CU_CHECK(cuLibraryLoadData(&loaded.library, embedded, nullptr, nullptr, 0, nullptr, nullptr, 0));
  return loaded;
}

}  // namespace ex07

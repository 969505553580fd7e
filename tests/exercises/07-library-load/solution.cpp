// Reference solutions of lesson 07's exercises.
#include "exercises.hpp"

namespace ex07 {

// A library belongs to the process, not to a context: cuLibraryLoadFromFile needs none current and
// creates none. The driver loads the image into a context the first time a kernel of it is used
// there, so contexts created after the load are served too.
KernelSet::KernelSet(const std::string& imagePath) {
  CU_CHECK(cuLibraryLoadFromFile(&library_, imagePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

KernelSet::~KernelSet() {
  if (library_) cuLibraryUnload(library_);  // a destructor must not throw; nothing to do on failure
}

// The CUkernel itself, cast to CUfunction, is what every context accepts: cuLaunchKernel resolves it
// in the context current at the launch (loading it there first if needed). Caching it is safe for
// the same reason. cuKernelGetFunction would give the current context's own CUfunction instead,
// which no other context accepts.
CUfunction KernelSet::function(const std::string& name) {
  const auto found = handedOut_.find(name);
  if (found != handedOut_.end()) return found->second;
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library_, name.c_str()));
  return handedOut_[name] = reinterpret_cast<CUfunction>(kernel);
}

// The reader checks every image before the driver sees a byte of it: an override that is missing,
// cut short or not a fatbin at all is never handed to cuLibraryLoadFromFile, which would accept a
// cut fatbin (it loads lazily) and fail, crash or hang later. The embedded image is checked too:
// the build could have embedded a damaged file. Neither load needs a context.
LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize) {
  LoadedLibrary loaded;
  if (wb::imageProblem(overridePath).empty()) {
    CU_CHECK(cuLibraryLoadFromFile(&loaded.library, overridePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    loaded.fromOverride = true;
    return loaded;
  }
  wb::verifyImageBytes(embedded, embeddedSize, wb::ImageKind::Fatbin, "the embedded fatbin");
  CU_CHECK(cuLibraryLoadData(&loaded.library, embedded, nullptr, nullptr, 0, nullptr, nullptr, 0));
  return loaded;
}

}  // namespace ex07

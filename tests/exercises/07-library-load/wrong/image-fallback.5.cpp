// Wrong (R4): pops the caller's context "to load with none current", and never pushes it back
//
// "Need no context and make none current", read as "have none current". The load indeed needs
// none, but the caller's context is gone from its stack: called with a context of the check's own
// current, `stackAfter == stack` fails.
#include "exercises.hpp"

namespace ex07 {

LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize) {
  CUcontext current = nullptr;
  CU_CHECK(cuCtxGetCurrent(&current));
  if (current) CU_CHECK(cuCtxPopCurrent(&current));
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

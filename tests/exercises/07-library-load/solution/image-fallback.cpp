// Reference solution of lesson 07's exercise image-fallback (lessons/07-library-load/exercises.cpp).
#include "exercises.hpp"

namespace ex07 {

// The reader checks every image before the driver sees a byte of it: an override that is missing,
// cut short or not a fatbin at all is never handed to cuLibraryLoadFromFile, which would accept a
// cut fatbin (it loads lazily) and fail, crash or hang later. The embedded image is checked too:
// the build could have embedded a damaged file, and then wb::verifyImageBytes throws before anything
// is loaded. Neither load needs a context, so the caller's stack is never touched.
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

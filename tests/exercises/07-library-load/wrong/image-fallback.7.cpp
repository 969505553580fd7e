// Wrong (R3): an embedded image the reader refuses gives back no library instead of throwing, "a loader never throws"
//
// "The caller checks library != nullptr." But an empty LoadedLibrary says nothing of why, and the
// task asks for the reader's wb::ImageError, which names the image and what is wrong with it. In
// "R3: an embedded image that does not pass the reader ...", `imageError` is false.
#include "exercises.hpp"

namespace ex07 {

LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize) {
  LoadedLibrary loaded;
  if (wb::imageProblem(overridePath).empty()) {
    CU_CHECK(cuLibraryLoadFromFile(&loaded.library, overridePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    loaded.fromOverride = true;
    return loaded;
  }
  try {
    wb::verifyImageBytes(embedded, embeddedSize, wb::ImageKind::Fatbin, "the embedded fatbin");
  } catch (const wb::ImageError&) {
    return loaded;  // no library: nothing loaded
  }
  CU_CHECK(cuLibraryLoadData(&loaded.library, embedded, nullptr, nullptr, 0, nullptr, nullptr, 0));
  return loaded;
}

}  // namespace ex07

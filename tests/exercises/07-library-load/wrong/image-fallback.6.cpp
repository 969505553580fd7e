// Wrong (R1): checks the override with wb::verifiedImagePath, which looks a name up in the kernel folder
//
// "The course's reader checks an image by its path." verifiedImagePath takes the name of an image in
// the course's kernel folder, not a path, so it never finds the operator's file and every call falls
// back: with an intact override, `loaded.fromOverride` is false.
#include "exercises.hpp"

namespace ex07 {

LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize) {
  LoadedLibrary loaded;
  std::string checked;
  try {
    checked = wb::verifiedImagePath(overridePath);
  } catch (const wb::ImageError&) {
    checked.clear();  // missing or damaged: the embedded image it is
  }
  if (!checked.empty()) {
    CU_CHECK(cuLibraryLoadFromFile(&loaded.library, checked.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    loaded.fromOverride = true;
    return loaded;
  }
  wb::verifyImageBytes(embedded, embeddedSize, wb::ImageKind::Fatbin, "the embedded fatbin");
  CU_CHECK(cuLibraryLoadData(&loaded.library, embedded, nullptr, nullptr, 0, nullptr, nullptr, 0));
  return loaded;
}

}  // namespace ex07

// Wrong (R2): tries the override and falls back only when the driver refuses it, with no reader
//
// "The driver will tell me if the file is bad." For a fatbin cut to 300 bytes cuLibraryLoadFromFile
// returns CUDA_SUCCESS (it loads lazily), so the damaged file is the one returned, with fromOverride
// set: the child exits 11 and `end.code != 11` fails.
#include "exercises.hpp"

namespace ex07 {

LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize) {
  LoadedLibrary loaded;
  if (cuLibraryLoadFromFile(&loaded.library, overridePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0) ==
      CUDA_SUCCESS) {
    loaded.fromOverride = true;
    return loaded;
  }
  loaded.library = nullptr;
  wb::verifyImageBytes(embedded, embeddedSize, wb::ImageKind::Fatbin, "the embedded fatbin");
  CU_CHECK(cuLibraryLoadData(&loaded.library, embedded, nullptr, nullptr, 0, nullptr, nullptr, 0));
  return loaded;
}

}  // namespace ex07

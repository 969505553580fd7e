// Wrong (R2): takes the override whenever a file is there, checking that it exists but not what is in it
//
// "Missing is the case to handle; an operator puts a good file there." A copy cut short exists too:
// it goes to cuLibraryLoadFromFile, which accepts it (it loads lazily), so the child exits 11 and
// `end.code != 11` fails.
#include "exercises.hpp"

#include <fstream>

namespace ex07 {

LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize) {
  LoadedLibrary loaded;
  if (std::ifstream(overridePath, std::ios::binary).good()) {
    CU_CHECK(cuLibraryLoadFromFile(&loaded.library, overridePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    loaded.fromOverride = true;
    return loaded;
  }
  wb::verifyImageBytes(embedded, embeddedSize, wb::ImageKind::Fatbin, "the embedded fatbin");
  CU_CHECK(cuLibraryLoadData(&loaded.library, embedded, nullptr, nullptr, 0, nullptr, nullptr, 0));
  return loaded;
}

}  // namespace ex07

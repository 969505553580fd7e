// Wrong (R3): checks the override with the reader but trusts the embedded image unchecked
//
// "It was compiled into the program, so it is whole." A build can embed a file cut short as easily as
// an operator can drop one: handed an embedded image whose size says 300 bytes, it loads it instead
// of throwing, and `imageError` is false (and `held == ""` fails).
#include "exercises.hpp"

namespace ex07 {

LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize) {
  (void)embeddedSize;
  LoadedLibrary loaded;
  if (wb::imageProblem(overridePath).empty()) {
    CU_CHECK(cuLibraryLoadFromFile(&loaded.library, overridePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    loaded.fromOverride = true;
    return loaded;
  }
  CU_CHECK(cuLibraryLoadData(&loaded.library, embedded, nullptr, nullptr, 0, nullptr, nullptr, 0));
  return loaded;
}

}  // namespace ex07

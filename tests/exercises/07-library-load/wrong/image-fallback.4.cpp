// Wrong (R4): retains device 0's primary context and pushes it around the load, and never releases it
//
// "A load needs a context", and the retain that made one current is forgotten once it is popped.
// Nothing is left current, but device 0's primary context stays alive for good, with its memory:
// after the call `held == "1 library more"` fails ("1 primary-context retain more, 1 library more").
#include "exercises.hpp"

namespace ex07 {

LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize) {
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxPushCurrent(primary));
  LoadedLibrary loaded;
  if (wb::imageProblem(overridePath).empty()) {
    CU_CHECK(cuLibraryLoadFromFile(&loaded.library, overridePath.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    loaded.fromOverride = true;
  } else {
    wb::verifyImageBytes(embedded, embeddedSize, wb::ImageKind::Fatbin, "the embedded fatbin");
    CU_CHECK(cuLibraryLoadData(&loaded.library, embedded, nullptr, nullptr, 0, nullptr, nullptr, 0));
  }
  CU_CHECK(cuCtxPopCurrent(&primary));
  return loaded;
}

}  // namespace ex07

// Wrong (R6): checkThisProcess passes CUDA_VERSION as the driver's version and the driver's as the toolkit's
//
// checkVersions itself is right, and on a machine whose driver matches the toolkit the swap shows
// nothing. When the check makes cuDriverGetVersion report a driver a major version older than
// CUDA_VERSION, the swapped call answers Full, and the check's
// `underOlder.level == ex12::Compatibility::None` fails.
#include "exercises.hpp"

#include <string>

namespace ex12 {

namespace {

std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

}  // namespace

VersionCheck checkVersions(int driverVersion, int toolkitVersion) {
  const std::string driver = "the driver supports CUDA " + majorMinor(driverVersion) +
                             ", this program was built with CUDA " + majorMinor(toolkitVersion);
  if (driverVersion >= toolkitVersion) return {Compatibility::Full, driver + ": fully supported"};
  if (driverVersion / 1000 == toolkitVersion / 1000)
    return {Compatibility::MinorVersion,
            driver + ": it runs under minor version compatibility, without the features newer than the driver, "
                     "and cannot compile this toolkit's PTX; ship cubins for every GPU, or install a driver for CUDA " +
                majorMinor(toolkitVersion) + " or newer"};
  return {Compatibility::None, driver + ": it cannot run; install a driver for CUDA " + majorMinor(toolkitVersion) +
                                   " or newer (or the CUDA forward compatibility package, on data-center GPUs)"};
}

VersionCheck checkThisProcess() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  return checkVersions(CUDA_VERSION, driver);
}

}  // namespace ex12

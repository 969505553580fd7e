// Wrong (R1): within one major version every difference in the minor version is MinorVersion, a newer driver's included
//
// "Different minor versions: minor version compatibility." But that name is for an older driver; a
// newer one supports the program fully. For a 12.8 driver and a 12.4 program the check expects Full
// and gets MinorVersion.
#include "exercises.hpp"

#include <string>

namespace ex12 {

namespace {

std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

}  // namespace

VersionCheck checkVersions(int driverVersion, int toolkitVersion) {
  const std::string driver = "the driver supports CUDA " + majorMinor(driverVersion) +
                             ", this program was built with CUDA " + majorMinor(toolkitVersion);
  if (driverVersion / 1000 == toolkitVersion / 1000 && driverVersion != toolkitVersion)
    return {Compatibility::MinorVersion,
            driver + ": the minor versions differ, it runs under minor version compatibility; install a driver for "
                     "CUDA " + majorMinor(toolkitVersion) + " or newer for every feature"};
  if (driverVersion >= toolkitVersion) return {Compatibility::Full, driver + ": fully supported"};
  return {Compatibility::None, driver + ": it cannot run; install a driver for CUDA " + majorMinor(toolkitVersion) +
                                   " or newer"};
}

VersionCheck checkThisProcess() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  return checkVersions(driver, CUDA_VERSION);
}

}  // namespace ex12

// Wrong (R1): any difference in the major version is None, a newer driver's included: "across major versions there is no promise"
//
// The promise that is missing across major versions is the old driver's; a newer driver runs
// programs of every older toolkit. For a 13.0 driver and a 12.8 program the check expects Full and
// gets None.
#include "exercises.hpp"

#include <string>

namespace ex12 {

namespace {

std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

}  // namespace

VersionCheck checkVersions(int driverVersion, int toolkitVersion) {
  const std::string driver = "the driver supports CUDA " + majorMinor(driverVersion) +
                             ", this program was built with CUDA " + majorMinor(toolkitVersion);
  if (driverVersion / 1000 != toolkitVersion / 1000)
    return {Compatibility::None, driver + ": a different major version; install a driver for CUDA " +
                                     majorMinor(toolkitVersion)};
  if (driverVersion >= toolkitVersion) return {Compatibility::Full, driver + ": fully supported"};
  return {Compatibility::MinorVersion,
          driver + ": it runs under minor version compatibility; install a driver for CUDA " +
              majorMinor(toolkitVersion) + " or newer for every feature"};
}

VersionCheck checkThisProcess() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  return checkVersions(driver, CUDA_VERSION);
}

}  // namespace ex12

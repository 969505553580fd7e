// Wrong (R2): compares the whole version numbers: "the driver must be at least as new as the toolkit"
//
// That refuses every program built with a newer minor version of the driver's own major version,
// which minor version compatibility runs: for a 12.4 driver and a 12.8 program the check expects
// MinorVersion and gets None.
#include "exercises.hpp"

#include <string>

namespace ex12 {

namespace {

std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

}  // namespace

VersionCheck checkVersions(int driverVersion, int toolkitVersion) {
  const std::string both = "the driver supports CUDA " + majorMinor(driverVersion) +
                           ", this program was built with CUDA " + majorMinor(toolkitVersion);
  if (driverVersion >= toolkitVersion) return {Compatibility::Full, both + ": fully supported"};
  return {Compatibility::None, both + ": install a driver for CUDA " + majorMinor(toolkitVersion) + " or newer"};
}

VersionCheck checkThisProcess() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  return checkVersions(driver, CUDA_VERSION);
}

}  // namespace ex12

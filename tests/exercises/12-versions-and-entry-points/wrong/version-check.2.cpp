// Wrong (R4): writes the minor version as version % 1000, so 12080 reads "12.80"
//
// The levels are all right and 13.0 still reads "13.0", but every other minor version is shown ten
// times too large, and "12.80" sends a deployer looking for a toolkit that does not exist. The
// check's `names(got.message, pair.driver)` fails for 12.8, 12.4 and 13.2.
#include "exercises.hpp"

#include <string>

namespace ex12 {

namespace {

std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000); }

}  // namespace

VersionCheck checkVersions(int driverVersion, int toolkitVersion) {
  const std::string driver = "the driver supports CUDA " + majorMinor(driverVersion) +
                             ", this program was built with CUDA " + majorMinor(toolkitVersion);
  if (driverVersion >= toolkitVersion) return {Compatibility::Full, driver + ": fully supported"};
  if (driverVersion / 1000 == toolkitVersion / 1000)
    return {Compatibility::MinorVersion,
            driver + ": it runs under minor version compatibility; install a driver for CUDA " +
                majorMinor(toolkitVersion) + " or newer for every feature"};
  return {Compatibility::None, driver + ": it cannot run; install a driver for CUDA " + majorMinor(toolkitVersion) +
                                   " or newer"};
}

VersionCheck checkThisProcess() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  return checkVersions(driver, CUDA_VERSION);
}

}  // namespace ex12

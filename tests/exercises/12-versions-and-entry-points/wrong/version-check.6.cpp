// Wrong (R3): any driver older than the toolkit is MinorVersion, an older major version's included
//
// "Older driver: minor version compatibility, with limits." But that promise holds within one major
// version only: a 12.8 driver does not run a program built with CUDA 13.0, and the log tells the
// deployer it will run with fewer features. For a 12.8 driver and a 13.0 program (and 11.8 against
// 12.0) the check expects None and gets MinorVersion, in "R1 R2 R3 R4: eight version pairs ...".
#include "exercises.hpp"

#include <string>

namespace ex12 {

namespace {

// "12.8" for 12080: the form cuDriverGetVersion's number and CUDA_VERSION are read in.
std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

}  // namespace

VersionCheck checkVersions(int driverVersion, int toolkitVersion) {
  const std::string driver = "the driver supports CUDA " + majorMinor(driverVersion) +
                             ", this program was built with CUDA " + majorMinor(toolkitVersion);
  if (driverVersion >= toolkitVersion) return {Compatibility::Full, driver + ": fully supported"};
  return {Compatibility::MinorVersion,  // older: minor version compatibility
          driver + ": it runs under minor version compatibility, without the features newer than the driver, "
                   "and cannot compile this toolkit's PTX; ship cubins for every GPU, or install a driver for CUDA " +
              majorMinor(toolkitVersion) + " or newer"};
}

// The driver this process runs on (cuDriverGetVersion needs no cuInit: a start-up check can run
// before anything else) against the cuda.h it was compiled with.
VersionCheck checkThisProcess() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  return checkVersions(driver, CUDA_VERSION);
}

}  // namespace ex12

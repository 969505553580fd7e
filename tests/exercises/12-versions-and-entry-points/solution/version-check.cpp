// Reference solution of lesson 12's exercise version-check (lessons/12-versions-and-entry-points/exercises.cpp).
#include "exercises.hpp"

#include <string>

namespace ex12 {

namespace {

// "12.8" for 12080: the form cuDriverGetVersion's number and CUDA_VERSION are read in.
std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

}  // namespace

// A driver at least as new as the toolkit runs it, across major versions too. Below that the major
// versions decide: within one, an older driver still runs the program (minor version
// compatibility), with limits; across them there is no such promise.
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

// The driver this process runs on (cuDriverGetVersion needs no cuInit: a start-up check can run
// before anything else) against the cuda.h it was compiled with.
VersionCheck checkThisProcess() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  return checkVersions(driver, CUDA_VERSION);
}

}  // namespace ex12

// Deliberately wrong variants of lesson 12's exercises: each check must fail on them.
#include "exercises.hpp"

#include <string>

namespace ex12 {

namespace {

std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

}  // namespace

// Wrong: reads the pointer instead of the status: "no pointer, so the driver lacks the function".
// For cuLibraryLoadData as of 11.8 the driver has the function (from 12.0 on), and the status says
// CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: the caller asked with the wrong version, and would
// blame the driver. The check's `tooOld.status == ex12::EntryPoint::NotInVersion` fails.
Resolved resolveEntryPoint(const char* symbol, int cudaVersion) {
  void* pfn = nullptr;
  const CUresult rc = cuGetProcAddress(symbol, &pfn, cudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  if (rc == CUDA_ERROR_INVALID_VALUE) return {EntryPoint::BeyondDriver, nullptr};
  CU_CHECK(rc);
  return pfn ? Resolved{EntryPoint::Found, pfn} : Resolved{EntryPoint::NotInDriver, nullptr};
}

// Wrong: compares the whole version numbers, "the driver must be at least as new as the toolkit".
// That refuses every program built with a newer minor version of the driver's own major version,
// which minor version compatibility runs: for a 12.4 driver and a 12.8 program the check expects
// MinorVersion and gets None.
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

// Wrong: tries the PTX first, "since PTX runs on every GPU", and the cubin only when the PTX fails.
// Every kernel loads, but on the GPUs the cubin was built for the driver compiles the PTX at every
// cold start instead of using the machine code that was shipped: the check's `!fromOwn.fromPtx` fails
// in the child with the JIT allowed.
LoadedKernel loadKernel(const std::vector<char>& cubin, const std::vector<char>& ptx, const char* name) {
  for (const std::vector<char>* image : {&ptx, &cubin}) {
    LoadedKernel k;
    CUresult rc = cuModuleLoadData(&k.module, image->data());
    if (rc == CUDA_SUCCESS) rc = cuModuleGetFunction(&k.function, k.module, name);
    if (rc == CUDA_SUCCESS) {
      k.fromPtx = image == &ptx;
      return k;
    }
    if (k.module) cuModuleUnload(k.module);
    if (image == &cubin) CU_CHECK(rc);
  }
  return {};
}

}  // namespace ex12

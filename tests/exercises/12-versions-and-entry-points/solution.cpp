// Reference solutions of lesson 12's exercises.
#include "exercises.hpp"

#include <string>

namespace ex12 {

namespace {

// "12.8" for 12080: the form cuDriverGetVersion's number and CUDA_VERSION are read in.
std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

// Loads image into the current context and gets the kernel name from it. Under lazy loading the
// load may succeed and the kernel fail, so both are the load; on failure nothing stays loaded.
CUresult tryLoad(const char* image, const char* name, LoadedKernel& into) {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  CUresult rc = cuModuleLoadData(&module, image);
  if (rc == CUDA_SUCCESS) rc = cuModuleGetFunction(&function, module, name);
  if (rc != CUDA_SUCCESS) {
    if (module) cuModuleUnload(module);
    return rc;
  }
  into.module = module;
  into.function = function;
  return CUDA_SUCCESS;
}

}  // namespace

// The status says why there is no pointer; the pointer alone cannot. A version newer than the driver
// is the one case the call itself refuses (CUDA_ERROR_INVALID_VALUE): any other failure is an error.
Resolved resolveEntryPoint(const char* symbol, int cudaVersion) {
  Resolved r;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = cuGetProcAddress(symbol, &r.pfn, cudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (rc == CUDA_ERROR_INVALID_VALUE) {
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    if (cudaVersion > driver) return {EntryPoint::BeyondDriver, nullptr};
  }
  CU_CHECK(rc);
  switch (status) {
    case CU_GET_PROC_ADDRESS_SUCCESS: r.status = EntryPoint::Found; break;
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: r.status = EntryPoint::NotInVersion; break;
    default: r.status = EntryPoint::NotInDriver; break;
  }
  if (r.status != EntryPoint::Found) r.pfn = nullptr;
  return r;
}

// The major versions first: across them there is no promise, whatever the minor versions say.
// Within one, an older driver still runs the program (minor version compatibility), with limits.
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

// cuDriverGetVersion needs no cuInit: a start-up check can run before anything else.
VersionCheck checkThisProcess() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  return checkVersions(driver, CUDA_VERSION);
}

// The cubin first: on a GPU it was built for it runs as it is. The PTX only where the cubin cannot
// run, and its error, not the cubin's, when it fails too: that one says why there is no kernel.
LoadedKernel loadKernel(const std::vector<char>& cubin, const std::vector<char>& ptx, const char* name) {
  LoadedKernel k;
  if (tryLoad(cubin.data(), name, k) == CUDA_SUCCESS) return k;
  CU_CHECK(tryLoad(ptx.data(), name, k));
  k.fromPtx = true;
  return k;
}

}  // namespace ex12

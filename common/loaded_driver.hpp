// The CUDA driver opened at run time: for a program that must start, and say something useful,
// on a machine without a driver (lesson 00), as lesson 12 step 4 teaches.
//
// A program linked against libcuda cannot start without it: the dynamic loader stops it before
// main, with exit code 127 and no CUresult. A program that opens libcuda.so.1 with dlopen instead
// always starts, and can tell "no driver" from "the toolkit's stub" from "too old a driver":
//
//   wb::LoadedDriver driver;                      // dlopen("libcuda.so.1"): the loader's choice
//   if (!driver.opened()) ...                     // no libcuda at all: openError() says why
//   int version = 0;
//   driver.version(&version);                     // CUDA_ERROR_STUB_LIBRARY from the stub
//   auto init = driver.find<PFN_cuInit_v2000>("cuInit", 2000);
//
// cuDriverGetVersion and cuGetProcAddress_v2 are taken with dlsym, by their exported names; every
// other function through cuGetProcAddress, by its base name and the CUDA version whose signature the
// caller casts it to (the PFN_<call>_v<version> types of cudaTypedefs.h). Needs the CUDA headers for
// the types, and no CUDA library.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_<call>_v<version>: the type of each driver function, by the version of its signature

#include <stdexcept>
#include <string>
#include <vector>

namespace wb {

class LoadedDriver {
 public:
  // Opens library with dlopen: a bare file name goes through the loader's search (LD_LIBRARY_PATH,
  // the ld.so cache, the default folders), a path with a '/' is that file. Never throws.
  explicit LoadedDriver(const std::string& library = "libcuda.so.1");
  // The library stays loaded: a driver that was initialised may have threads running in it.
  ~LoadedDriver() = default;
  LoadedDriver(const LoadedDriver&) = delete;
  LoadedDriver& operator=(const LoadedDriver&) = delete;

  bool opened() const { return handle_ != nullptr; }
  const std::string& asked() const { return asked_; }          // what dlopen was given
  const std::string& openError() const { return openError_; }  // dlerror()'s text when it failed
  // The file the loader opened (its link map's name, with links resolved), or "".
  const std::string& path() const { return path_; }

  // cuDriverGetVersion: every driver has it, and it needs no cuInit; the toolkit's stub answers
  // CUDA_ERROR_STUB_LIBRARY. CUDA_ERROR_NOT_FOUND where the library lacks it (not a CUDA driver).
  CUresult version(int* driverVersion) const;
  // Whether the library exports cuGetProcAddress_v2 (drivers of CUDA 12.0 and newer).
  bool hasProcAddress() const { return getProc_ != nullptr; }

  // A driver function by base name, as the signature CUDA version `since` gave it (cast to
  // PFN_<name>_v<since>), the legacy default stream for calls that take a stream; nullptr where
  // this driver lacks it (too old, or not a driver). status says why when it is not null.
  void* lookUp(const char* name, int since, CUdriverProcAddressQueryResult* status = nullptr,
               CUresult* answer = nullptr) const;
  template <typename F>
  F find(const char* name, int since) const {
    return reinterpret_cast<F>(lookUp(name, since));
  }

  // "CUDA_ERROR_NO_DEVICE (100)": the driver's name for the code, else the toolkit's cuda.h's, else
  // only the number. The stub answers nothing, so its codes are named by the toolkit's table.
  std::string describe(CUresult code) const;

 private:
  std::string asked_, openError_, path_;
  void* handle_ = nullptr;
  CUresult(CUDAAPI* version_)(int*) = nullptr;
  CUresult(CUDAAPI* getProc_)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*) = nullptr;
  CUresult(CUDAAPI* errorName_)(CUresult, const char**) = nullptr;
};

// The name cuda.h of the toolkit this was built with gives a code, or nullptr. The same generated
// table as wb::headerErrorName, for programs that do not link the driver.
const char* toolkitErrorName(CUresult code);

// ---- The driver functions lesson 00 calls (lessons/00-your-machine/main.cpp) --------------------

//! [entry-points]
// The driver functions lesson 00's later steps call, looked up by name and by the CUDA version of
// the signature each is cast to (lesson 12, step 3). One a driver lacks stays nullptr, and the step
// that needs it says so.
struct DriverApi {
  PFN_cuInit_v2000 cuInit = nullptr;
  PFN_cuDeviceGetCount_v2000 cuDeviceGetCount = nullptr;
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuDeviceGetName_v2000 cuDeviceGetName = nullptr;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
  PFN_cuDeviceTotalMem_v3020 cuDeviceTotalMem = nullptr;
  PFN_cuDeviceGetPCIBusId_v4010 cuDeviceGetPCIBusId = nullptr;
  PFN_cuModuleGetLoadingMode_v11070 cuModuleGetLoadingMode = nullptr;
  PFN_cuDeviceCanAccessPeer_v4000 cuDeviceCanAccessPeer = nullptr;
  PFN_cuDeviceGetP2PAttribute_v8000 cuDeviceGetP2PAttribute = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease = nullptr;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
  PFN_cuCtxSynchronize_v2000 cuCtxSynchronize = nullptr;
  PFN_cuCtxEnablePeerAccess_v4000 cuCtxEnablePeerAccess = nullptr;
  PFN_cuCtxDisablePeerAccess_v4000 cuCtxDisablePeerAccess = nullptr;
  PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
  PFN_cuMemFree_v3020 cuMemFree = nullptr;
  PFN_cuMemcpyHtoD_v3020 cuMemcpyHtoD = nullptr;
  PFN_cuMemcpyDtoH_v3020 cuMemcpyDtoH = nullptr;
  PFN_cuMemcpyPeer_v4000 cuMemcpyPeer = nullptr;
#if CUDA_VERSION >= 12040  // green contexts: 12.4's API
  PFN_cuDeviceGetDevResource_v12040 cuDeviceGetDevResource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 cuDevSmResourceSplitByCount = nullptr;
#endif
};
//! [entry-points]

// Every function of DriverApi, from d. The names of those every driver of CUDA 12.0 and newer has
// and d lacks go to missing; cuModuleGetLoadingMode and the green-context calls may be absent.
DriverApi lookUpAll(const LoadedDriver& d, std::vector<std::string>& missing);

// A driver call that failed where nothing should: lesson 00 reports the step it happened in as
// incomplete.
struct CallFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A call that must succeed here: otherwise throws CallFailed, "<call> returned <d.describe(rc)>".
void need(const LoadedDriver& d, CUresult rc, const char* call);

// A device's attribute, or -1 where the driver does not know it (an attribute newer than the driver).
int attribute(const LoadedDriver& d, const DriverApi& api, CUdevice dev, CUdevice_attribute which);

// Where the device sits on the PCI bus ("0000:3b:00.0"), the name NVML and other tools share.
std::string busId(const LoadedDriver& d, const DriverApi& api, CUdevice dev);

}  // namespace wb

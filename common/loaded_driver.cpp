#include "loaded_driver.hpp"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include <climits>

namespace wb {

namespace {

struct ErrorEntry {
  int code;
  const char* name;
  const char* description;
};

// {code, name, the cuda.h comment}, generated at configure time from the toolkit's cuda.h
// (cmake/WorkbookErrorTable.cmake): the names work where no driver can give them.
constexpr ErrorEntry kHeaderErrors[] = {
#include "cuda_error_table.inc"
};

// A link map's name with every symbolic link resolved: libcuda.so.1 -> libcuda.so.580.159.04.
std::string resolved(const char* path) {
  char real[PATH_MAX];
  return realpath(path, real) ? std::string(real) : std::string(path);
}

}  // namespace

const char* toolkitErrorName(CUresult code) {
  for (const auto& e : kHeaderErrors)
    if (e.code == static_cast<int>(code)) return e.name;
  return nullptr;
}

LoadedDriver::LoadedDriver(const std::string& library) : asked_(library) {
  dlerror();
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    openError_ = why ? why : "dlopen failed";
    return;
  }
  link_map* map = nullptr;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) path_ = resolved(map->l_name);
  // The two functions that come before cuGetProcAddress can: the version (every driver), and
  // cuGetProcAddress_v2 itself (CUDA 12.0 drivers on; cuGetProcAddress of 11.3 took no status).
  version_ = reinterpret_cast<decltype(version_)>(dlsym(handle_, "cuDriverGetVersion"));
  getProc_ = reinterpret_cast<decltype(getProc_)>(dlsym(handle_, "cuGetProcAddress_v2"));
  errorName_ = reinterpret_cast<decltype(errorName_)>(lookUp("cuGetErrorName", 6000));
}

CUresult LoadedDriver::version(int* driverVersion) const {
  return version_ ? version_(driverVersion) : CUDA_ERROR_NOT_FOUND;
}

void* LoadedDriver::lookUp(const char* name, int since, CUdriverProcAddressQueryResult* status, CUresult* answer) const {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = getProc_ ? getProc_(name, &pfn, since, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found)
                               : CUDA_ERROR_NOT_FOUND;
  if (status) *status = found;
  if (answer) *answer = rc;
  return rc == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS ? pfn : nullptr;
}

std::string LoadedDriver::describe(CUresult code) const {
  const char* name = nullptr;
  if (!errorName_ || errorName_(code, &name) != CUDA_SUCCESS || !name) name = toolkitErrorName(code);
  return std::string(name ? name : "unknown CUresult") + " (" + std::to_string(static_cast<int>(code)) + ")";
}

namespace {

// A function the driver must have; the names of those it lacks go to missing.
template <typename F>
void take(const LoadedDriver& d, F& into, const char* name, int since, std::vector<std::string>* missing = nullptr) {
  into = d.find<F>(name, since);
  if (!into && missing) missing->push_back(name);
}

}  // namespace

DriverApi lookUpAll(const LoadedDriver& d, std::vector<std::string>& missing) {
  DriverApi a;
  take(d, a.cuInit, "cuInit", 2000, &missing);
  take(d, a.cuDeviceGetCount, "cuDeviceGetCount", 2000, &missing);
  take(d, a.cuDeviceGet, "cuDeviceGet", 2000, &missing);
  take(d, a.cuDeviceGetName, "cuDeviceGetName", 2000, &missing);
  take(d, a.cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000, &missing);
  take(d, a.cuDeviceTotalMem, "cuDeviceTotalMem", 3020, &missing);
  take(d, a.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", 4010, &missing);
  take(d, a.cuModuleGetLoadingMode, "cuModuleGetLoadingMode", 11070);
  take(d, a.cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", 4000, &missing);
  take(d, a.cuDeviceGetP2PAttribute, "cuDeviceGetP2PAttribute", 8000, &missing);
  take(d, a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, &missing);
  take(d, a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000, &missing);
  take(d, a.cuCtxSetCurrent, "cuCtxSetCurrent", 4000, &missing);
  take(d, a.cuCtxSynchronize, "cuCtxSynchronize", 2000, &missing);
  take(d, a.cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", 4000, &missing);
  take(d, a.cuCtxDisablePeerAccess, "cuCtxDisablePeerAccess", 4000, &missing);
  take(d, a.cuMemAlloc, "cuMemAlloc", 3020, &missing);
  take(d, a.cuMemFree, "cuMemFree", 3020, &missing);
  take(d, a.cuMemcpyHtoD, "cuMemcpyHtoD", 3020, &missing);
  take(d, a.cuMemcpyDtoH, "cuMemcpyDtoH", 3020, &missing);
  take(d, a.cuMemcpyPeer, "cuMemcpyPeer", 4000, &missing);
#if CUDA_VERSION >= 12040
  take(d, a.cuDeviceGetDevResource, "cuDeviceGetDevResource", 12040);
  take(d, a.cuDevSmResourceSplitByCount, "cuDevSmResourceSplitByCount", 12040);
#endif
  return a;
}

void need(const LoadedDriver& d, CUresult rc, const char* call) {
  if (rc != CUDA_SUCCESS) throw CallFailed(std::string(call) + " returned " + d.describe(rc));
}

int attribute(const LoadedDriver& d, const DriverApi& api, CUdevice dev, CUdevice_attribute which) {
  int value = 0;
  const CUresult rc = api.cuDeviceGetAttribute(&value, which, dev);
  if (rc == CUDA_ERROR_INVALID_VALUE) return -1;
  need(d, rc, "cuDeviceGetAttribute");
  return value;
}

std::string busId(const LoadedDriver& d, const DriverApi& api, CUdevice dev) {
  char id[32] = {};
  need(d, api.cuDeviceGetPCIBusId(id, sizeof id, dev), "cuDeviceGetPCIBusId");
  return id;
}

}  // namespace wb

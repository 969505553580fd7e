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

}  // namespace wb

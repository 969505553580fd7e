// Wrong (R4): skips cuDriverGetVersion and asks cuGetProcAddress_v2 straight away
//
// "cuGetProcAddress says everything": it says neither that the library is the toolkit's stub nor
// that the driver predates tensor maps, only an error code, so the user cannot tell what to do.
// The stub case's `f.message.find("stub")` and the 11.8 case's `find("12.0")` fail.
#include "exercises.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace ex21 {

namespace {

[[noreturn]] void refuse(void* library, const std::string& path, const std::string& why) {
  if (library) dlclose(library);
  throw std::runtime_error(path + ": " + why);
}

}  // namespace

PFN_cuTensorMapEncodeTiled_v12000 findTensorMapEncoder(const std::string& libraryPath) {
  void* library = dlopen(libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    refuse(nullptr, libraryPath, std::string("dlopen failed: ") + (why ? why : "no reason given"));
  }
  using ProcAddress = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  const auto procAddress = reinterpret_cast<ProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (!procAddress) refuse(library, libraryPath, "no cuGetProcAddress_v2");
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = procAddress("cuTensorMapEncodeTiled", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !fn)
    refuse(library, libraryPath, "no cuTensorMapEncodeTiled at CUDA version 12000 (cuGetProcAddress answered " +
                                     std::to_string(static_cast<int>(rc)) + ", status " + std::to_string(status) + ")");
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);  // the library stays open: fn lives in it
}

}  // namespace ex21

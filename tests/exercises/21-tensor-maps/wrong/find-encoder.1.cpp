// Wrong (R5): asks cuGetProcAddress_v2 at CUDA_VERSION, the toolkit's version, instead of 12000
//
// "Ask for the newest": on a driver older than the toolkit, the reference's answer to a version
// newer than the driver is CUDA_ERROR_INVALID_VALUE, so the 12.4 driver gives nothing to a program
// built with 13.0. The check's 12.4 fake driver refuses it, and `REQUIRE_FALSE(f.threw)` fails.
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
  using Version = CUresult(CUDAAPI*)(int*);
  using ProcAddress = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  const auto version = reinterpret_cast<Version>(dlsym(library, "cuDriverGetVersion"));
  const auto procAddress = reinterpret_cast<ProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (!version) refuse(library, libraryPath, "no cuDriverGetVersion: not a CUDA driver");
  int driver = 0;
  const CUresult asked = version(&driver);
  if (asked == CUDA_ERROR_STUB_LIBRARY) refuse(library, libraryPath, "the CUDA toolkit's stub library, not a driver");
  if (asked != CUDA_SUCCESS || driver < 12000 || !procAddress)
    refuse(library, libraryPath, "not a driver of CUDA 12.0 or newer, which tensor maps need (version " +
                                     std::to_string(driver) + ", cuDriverGetVersion answered " +
                                     std::to_string(static_cast<int>(asked)) + ")");
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = procAddress("cuTensorMapEncodeTiled", &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (rc != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !fn)
    refuse(library, libraryPath, "no cuTensorMapEncodeTiled at CUDA version 12000 (cuGetProcAddress answered " +
                                     std::to_string(static_cast<int>(rc)) + ", status " + std::to_string(status) + ")");
  return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);  // the library stays open: fn lives in it
}

}  // namespace ex21

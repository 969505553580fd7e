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

#include <string>

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

}  // namespace wb

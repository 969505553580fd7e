// Wrong (R1): a library that cannot be opened is NoDriver, but why only names the library
//
// "Cannot open libcuda.so.1" reads complete, and dlerror() looks like noise to print. But it is
// the one text that says why: no such file, a wrong architecture, a missing dependency, no
// permission. The case of a path where no file is fails `none.why.find(openError) != npos`.
#include "exercises.hpp"

#include <dlfcn.h>

#include <string>

namespace ex00 {

namespace {

// "cuInit(0) returned 34": the call and its code by number, which a log reader can look up.
std::string returned(const char* call, CUresult rc) {
  return std::string(call) + " returned " + std::to_string(static_cast<int>(rc));
}

}  // namespace

// The library is opened, not linked: a program linked to libcuda never reaches this code where
// there is none. dlsym by the exported names: cuInit and cuDeviceGetCount were never versioned,
// and taking them before cuInit needs no cuGetProcAddress. The library stays open: a driver whose
// cuInit succeeded is in use.
CudaVerdict cudaUsable(const std::string& library) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    return {Cuda::NoDriver, library + " cannot be opened: is the NVIDIA driver installed?"};
  }
  using Init = CUresult(CUDAAPI*)(unsigned);
  using Count = CUresult(CUDAAPI*)(int*);
  const auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  const auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
  if (!init || !count) return {Cuda::Unusable, library + " has no cuInit or cuDeviceGetCount: it is not a CUDA driver"};
  const CUresult rc = init(0);
  switch (rc) {
    case CUDA_SUCCESS: break;
    case CUDA_ERROR_STUB_LIBRARY: return {Cuda::StubDriver, returned("cuInit(0)", rc) + ": " + library + " is the toolkit's stub"};
    case CUDA_ERROR_NO_DEVICE: return {Cuda::NoDevice, returned("cuInit(0)", rc) + ": no CUDA device is visible"};
    case CUDA_ERROR_NOT_INITIALIZED:
      return {Cuda::ForkedAfterInit, returned("cuInit(0)", rc) + ": this process was forked after its parent's cuInit"};
    default: return {Cuda::Unusable, returned("cuInit(0)", rc)};
  }
  int devices = 0;
  const CUresult counted = count(&devices);
  if (counted != CUDA_SUCCESS) return {Cuda::Unusable, returned("cuDeviceGetCount", counted)};
  if (devices == 0) return {Cuda::NoDevice, "cuInit(0) succeeded, and the driver counts no device"};
  return {Cuda::Usable, std::to_string(devices) + " CUDA device" + (devices == 1 ? "" : "s") + " through " + library};
}

}  // namespace ex00

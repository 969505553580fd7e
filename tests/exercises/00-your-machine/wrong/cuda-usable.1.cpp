// Wrong (R3 R4 R5): every cuInit failure is NoDriver: the stub, no device and a forked child look alike
//
// "If cuInit fails there is no driver" is the first thought, and the log line then sends whoever
// reads it to install a driver that is there. The check's stub case wants StubDriver
// (`stub.cuda == ex00::Cuda::StubDriver`), the CUDA_VISIBLE_DEVICES child NoDevice and the forked
// child ForkedAfterInit: each gets NoDriver.
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
    const char* why = dlerror();
    return {Cuda::NoDriver, library + " cannot be opened: " + (why ? why : "dlopen failed")};
  }
  using Init = CUresult(CUDAAPI*)(unsigned);
  using Count = CUresult(CUDAAPI*)(int*);
  const auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  const auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
  if (!init || !count) return {Cuda::Unusable, library + " has no cuInit or cuDeviceGetCount: it is not a CUDA driver"};
  const CUresult rc = init(0);
  if (rc != CUDA_SUCCESS) return {Cuda::NoDriver, returned("cuInit(0)", rc) + ": no usable driver"};
  int devices = 0;
  const CUresult counted = count(&devices);
  if (counted != CUDA_SUCCESS) return {Cuda::Unusable, returned("cuDeviceGetCount", counted)};
  if (devices == 0) return {Cuda::NoDevice, "cuInit(0) succeeded, and the driver counts no device"};
  return {Cuda::Usable, std::to_string(devices) + " CUDA device" + (devices == 1 ? "" : "s") + " through " + library};
}

}  // namespace ex00

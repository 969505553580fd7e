// Wrong (R1): makes device 0's primary context current for the load, so the module lands there
//
// "Loading needs a context; the primary one is always there." The caller's context is not device 0's
// primary one: the module and its functions belong to the primary context, and the caller's context
// refuses them. The check loads in a context it created, and there `result == ""` fails
// (cuLaunchKernel refuses a function of another context).
#include "exercises.hpp"

#include <vector>

namespace ex06 {

PtxLoad loadPtx(const std::string& ptx) {
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxPushCurrent(primary));
  std::vector<char> log(16 * 1024 + 1, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(log.size() - 1)};
  PtxLoad out;
  out.result = cuModuleLoadDataEx(&out.module, ptx.c_str(), 2, options, values);
  if (out.result != CUDA_SUCCESS) out.module = nullptr;
  out.errorLog = log.data();
  cuCtxPopCurrent(&primary);
  cuDevicePrimaryCtxRelease(dev);
  return out;
}

}  // namespace ex06

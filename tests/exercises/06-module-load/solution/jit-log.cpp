// Reference solution of lesson 06's exercise jit-log (lessons/06-module-load/exercises.cpp).
#include "exercises.hpp"

#include <vector>

namespace ex06 {

// The JIT writes its log into the caller's buffer, up to the size given; the size travels in the
// void* itself, and the driver writes back into that slot how much it used, so the option arrays are
// built afresh for every call. The buffer is zeroed and one byte longer than the size passed, so the
// log is always a C string; taking it as one drops the unused rest of the buffer. A fresh buffer per
// call means a log never carries an earlier load's errors. The load goes into the current context,
// whichever it is: nothing is pushed, retained or made.
PtxLoad loadPtx(const std::string& ptx) {
  std::vector<char> log(16 * 1024 + 1, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(log.size() - 1)};
  PtxLoad out;
  out.result = cuModuleLoadDataEx(&out.module, ptx.c_str(), 2, options, values);
  if (out.result != CUDA_SUCCESS) out.module = nullptr;  // nothing loaded: nothing for the caller to unload
  out.errorLog = log.data();
  return out;
}

}  // namespace ex06

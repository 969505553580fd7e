// Wrong (R4): keeps the log buffer and the option arrays in statics, made once for every call
//
// "No allocation per load." The size slot is in-out: the driver writes back how much of the buffer
// the first load used, and every later load is capped at that. The first log is short; the second
// names an instruction of 120 characters and comes back cut, so
// `contains(second.errorLog, kLongName)` fails.
#include "exercises.hpp"

namespace ex06 {

PtxLoad loadPtx(const std::string& ptx) {
  static char log[16 * 1024 + 1];
  static CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  static void* values[] = {log, reinterpret_cast<void*>(sizeof log - 1)};
  log[0] = '\0';
  PtxLoad out;
  out.result = cuModuleLoadDataEx(&out.module, ptx.c_str(), 2, options, values);
  if (out.result != CUDA_SUCCESS) out.module = nullptr;
  out.errorLog = log;
  return out;
}

}  // namespace ex06

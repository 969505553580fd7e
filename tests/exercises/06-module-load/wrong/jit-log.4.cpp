// Wrong (R3): gives the JIT an info log buffer (CU_JIT_INFO_LOG_BUFFER) and returns that as the log
//
// The two log options sit side by side and "the info log says what the compiler did". The JIT writes
// what is informational there and its errors into the error log only, so the log returned for the
// broken PTX does not name the bad instruction: `contains(first.errorLog, ...)` fails.
#include "exercises.hpp"

#include <vector>

namespace ex06 {

PtxLoad loadPtx(const std::string& ptx) {
  std::vector<char> log(16 * 1024 + 1, '\0');
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(log.size() - 1)};
  PtxLoad out;
  out.result = cuModuleLoadDataEx(&out.module, ptx.c_str(), 2, options, values);
  if (out.result != CUDA_SUCCESS) out.module = nullptr;
  out.errorLog = log.data();
  return out;
}

}  // namespace ex06

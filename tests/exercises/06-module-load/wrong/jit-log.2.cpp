// Wrong (R3): returns the whole log buffer as the log, not the C string the JIT wrote into it
//
// "The driver filled my buffer, so the buffer is the log": std::string(buffer, size) keeps the
// zeroed rest of the buffer, thousands of NUL bytes after the text, which a terminal hides and a log
// file or a JSON field does not. `!contains(first.errorLog, std::string(1, '\0'))` fails.
#include "exercises.hpp"

#include <vector>

namespace ex06 {

PtxLoad loadPtx(const std::string& ptx) {
  std::vector<char> log(16 * 1024, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(log.size())};
  PtxLoad out;
  out.result = cuModuleLoadDataEx(&out.module, ptx.c_str(), 2, options, values);
  if (out.result != CUDA_SUCCESS) out.module = nullptr;
  out.errorLog.assign(log.data(), log.size());
  return out;
}

}  // namespace ex06

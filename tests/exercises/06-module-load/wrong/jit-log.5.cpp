// Wrong (R2): checks the load with CU_CHECK, so refused PTX throws instead of coming back with its log
//
// "Every driver call goes through CU_CHECK." The DriverError carries the code, and the log that was
// the point never reaches the caller: the first loadPtx throws and the case fails with "threw".
#include "exercises.hpp"

#include <vector>

namespace ex06 {

PtxLoad loadPtx(const std::string& ptx) {
  std::vector<char> log(16 * 1024 + 1, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(log.size() - 1)};
  PtxLoad out;
  CU_CHECK(cuModuleLoadDataEx(&out.module, ptx.c_str(), 2, options, values));
  out.errorLog = log.data();
  return out;
}

}  // namespace ex06

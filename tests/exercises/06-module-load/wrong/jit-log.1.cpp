// Wrong (R3): loads with cuModuleLoadData and reports the CUresult's description as the log
//
// "The error code's description is the error message." It says that the compile failed, not what or
// where: `contains(first.errorLog, kShortName)` fails.
#include "exercises.hpp"

namespace ex06 {

PtxLoad loadPtx(const std::string& ptx) {
  PtxLoad out;
  out.result = cuModuleLoadData(&out.module, ptx.c_str());
  if (out.result != CUDA_SUCCESS) {
    out.module = nullptr;
    out.errorLog = wb::errorName(out.result) + ": " + wb::errorDescription(out.result);
  }
  return out;
}

}  // namespace ex06

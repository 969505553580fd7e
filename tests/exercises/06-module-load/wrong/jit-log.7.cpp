// Wrong (R5): compiles with the linker (cuLinkCreate), and returns on a failure before cuLinkDestroy
//
// "The linker takes the same log options and gives the cubin to load": a documented route to the
// JIT's log. Only the path that worked gives the link state back; refused PTX returns with its log
// and the link state still held. In "R2 R3 R4 R5: PTX with a mistake ...", `held == ""` fails
// (2 link states more).
#include "exercises.hpp"

#include <vector>

namespace ex06 {

PtxLoad loadPtx(const std::string& ptx) {
  std::vector<char> log(16 * 1024 + 1, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(log.size() - 1)};
  PtxLoad out;
  CUlinkState link = nullptr;
  out.result = cuLinkCreate(2, options, values, &link);
  if (out.result == CUDA_SUCCESS)
    out.result = cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1, "generated.ptx",
                               0, nullptr, nullptr);
  void* cubin = nullptr;
  size_t size = 0;
  if (out.result == CUDA_SUCCESS) out.result = cuLinkComplete(link, &cubin, &size);
  if (out.result == CUDA_SUCCESS) out.result = cuModuleLoadData(&out.module, cubin);
  out.errorLog = log.data();
  if (out.result != CUDA_SUCCESS) {
    out.module = nullptr;
    return out;
  }
  cuLinkDestroy(link);
  return out;
}

}  // namespace ex06

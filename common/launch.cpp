#include "launch.hpp"

#include "cuda_check.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace wb {

bool syncLaunches() {
  static const bool on = [] {
    const char* v = std::getenv("WORKBOOK_SYNC_LAUNCHES");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

void launch(CUfunction f, const char* name, unsigned blocks, unsigned threads, void** args, CUstream s,
            const char* file, int line) {
  const std::string what = std::string("cuLaunchKernel(") + name + ")";
  if (const CUresult rc = cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s, args, nullptr); rc != CUDA_SUCCESS)
    throwDriverError(rc, what.c_str(), file, line);
  if (!syncLaunches()) return;
  if (const CUresult rc = cuStreamSynchronize(s); rc != CUDA_SUCCESS)
    throwDriverError(rc, (what + ", then waited for (WORKBOOK_SYNC_LAUNCHES=1)").c_str(), file, line);
}

}  // namespace wb

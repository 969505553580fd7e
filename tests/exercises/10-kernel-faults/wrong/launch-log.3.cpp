// Wrong (R4): throws a copy of the list and keeps it, so the next error names the launches of the last one too
//
// The list is cleared only by a successful wait(): after a refused launch nobody waits, and the
// next refusal names both. The check's `refusedAgain.suspects == "too-wide-again"` fails
// ("too-wide,too-wide-again").
#include "exercises.hpp"

namespace ex10 {

LaunchLog::LaunchLog(CUstream stream, bool debug) {
  s_.stream = stream;
  s_.debug = debug;
}

void LaunchLog::launch(const std::string& name, CUfunction f, unsigned blocks, unsigned threads, void** args) {
  s_.since.push_back(name);
  const CUresult rc = cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s_.stream, args, nullptr);
  if (rc != CUDA_SUCCESS) throw LaunchError(rc, s_.since);
  if (s_.debug) wait();
}

void LaunchLog::wait() {
  const CUresult rc = cuStreamSynchronize(s_.stream);
  if (rc != CUDA_SUCCESS) throw LaunchError(rc, s_.since);
  s_.since.clear();
}

}  // namespace ex10

// Wrong (R5): debug mode trusts cuLaunchKernel's CUDA_SUCCESS ("the launch returned success, so the kernel ran") and does not wait
//
// The launch of scribble returns CUDA_SUCCESS, because it only queued the kernel; the fault shows
// at a later call. In the debug-mode child the check's `thrownBy == "launch(scribble)"` and
// `suspects == "scribble"` fail.
#include "exercises.hpp"

namespace ex10 {

LaunchLog::LaunchLog(CUstream stream, bool debug) {
  s_.stream = stream;
  s_.debug = debug;
}

void LaunchLog::launch(const std::string& name, CUfunction f, unsigned blocks, unsigned threads, void** args) {
  s_.since.push_back(name);
  const CUresult rc = cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s_.stream, args, nullptr);
  if (rc != CUDA_SUCCESS) {
    std::vector<std::string> suspects;
    suspects.swap(s_.since);
    throw LaunchError(rc, std::move(suspects));
  }
}

void LaunchLog::wait() {
  const CUresult rc = cuStreamSynchronize(s_.stream);
  std::vector<std::string> suspects;
  suspects.swap(s_.since);
  if (rc != CUDA_SUCCESS) throw LaunchError(rc, std::move(suspects));
}

}  // namespace ex10

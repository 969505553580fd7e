// Wrong (R1): passes threads as the grid and blocks as the block, the <<<blocks, threads>>> order misread
//
// cuLaunchKernel takes the grid's three dimensions first and the block's after: an easy pair to
// swap when the runtime's <<<blocks, threads>>> is in one's head. The sums still come out right
// (job_chunk strides over any grid), but a launch of 1 block of 2048 threads becomes 2048 blocks of
// one thread, which the driver accepts. In "R1 R2 R3 R4 R5: a refused launch ...", `refused.threw`
// fails.
#include "exercises.hpp"

namespace ex10 {

namespace {

// Throws the error with the launches since the last successful wait, and leaves the list empty.
[[noreturn]] void fail(std::vector<std::string>& since, CUresult rc) {
  std::vector<std::string> suspects;
  suspects.swap(since);
  throw LaunchError(rc, std::move(suspects));
}

}  // namespace

LaunchLog::LaunchLog(CUstream stream, bool debug) {
  s_.stream = stream;
  s_.debug = debug;
}

// The name goes on the list before the launch, so a launch the driver refuses names itself. In
// debug mode the wait right after it makes this launch the only one on the list when a fault
// shows: the CUresult of cuLaunchKernel says only whether the kernel was queued, never whether it ran.
void LaunchLog::launch(const std::string& name, CUfunction f, unsigned blocks, unsigned threads, void** args) {
  s_.since.push_back(name);
  const CUresult rc = cuLaunchKernel(f, threads, 1, 1, blocks, 1, 1, 0, s_.stream, args, nullptr);
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  if (s_.debug) wait();
}

// The log's stream alone: cuCtxSynchronize would also wait for every other stream of the context,
// work that is none of this log's business (and may wait for a long time).
void LaunchLog::wait() {
  const CUresult rc = cuStreamSynchronize(s_.stream);
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  s_.since.clear();
}

}  // namespace ex10

// Wrong (R4): a wait() that fails throws the list but keeps it, "the fault may still be among them"
//
// The launch's failure path empties the list, the wait's does not: "they are still the suspects
// until a wait succeeds". But the error has been reported with those names; the next error, about
// later launches, names them again, and a server logs the same innocent kernels twice. In "R3 R4: a
// wait() that fails ...", the suspects after it are "before-failed-wait,after-failed-wait,too-wide"
// and `after.suspects == "after-failed-wait,too-wide"` fails.
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
  const CUresult rc = cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s_.stream, args, nullptr);
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  if (s_.debug) wait();
}

// The log's stream alone: cuCtxSynchronize would also wait for every other stream of the context,
// work that is none of this log's business (and may wait for a long time).
void LaunchLog::wait() {
  const CUresult rc = cuStreamSynchronize(s_.stream);
  if (rc != CUDA_SUCCESS) throw LaunchError(rc, s_.since);  // kept: still the suspects
  s_.since.clear();
}

}  // namespace ex10

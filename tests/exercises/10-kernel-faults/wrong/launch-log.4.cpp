// Wrong (R2): waits with cuCtxSynchronize, "wait for the GPU", instead of synchronising the log's stream
//
// Every fault is still found, but wait() (and each debug-mode launch) now also waits for every
// other stream of the context, work that is none of the log's business and may take long. The
// ledger counts the cuCtxSynchronize calls: the check's `contextWaits == 0` and
// `debugContextWaits == 0` fail.
#include "exercises.hpp"

namespace ex10 {

namespace {

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

void LaunchLog::launch(const std::string& name, CUfunction f, unsigned blocks, unsigned threads, void** args) {
  s_.since.push_back(name);
  const CUresult rc = cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s_.stream, args, nullptr);
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  if (s_.debug) wait();
}

void LaunchLog::wait() {
  const CUresult rc = cuCtxSynchronize();
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  s_.since.clear();
}

}  // namespace ex10

// Wrong (R3): puts a launch on the list only once cuLaunchKernel has accepted it
//
// "Remember what was launched" read literally: a launch the driver refuses was never launched, so
// its error names only the launches before it, and none here. The check's
// `refused.suspects == "too-wide"` fails (the suspects are empty).
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
  const CUresult rc = cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, s_.stream, args, nullptr);
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  s_.since.push_back(name);
  if (s_.debug) wait();
}

void LaunchLog::wait() {
  const CUresult rc = cuStreamSynchronize(s_.stream);
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  s_.since.clear();
}

}  // namespace ex10

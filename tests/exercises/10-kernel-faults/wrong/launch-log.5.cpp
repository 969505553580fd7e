// Wrong (R1): launches into the NULL stream (the 0 of every sample) instead of the log's stream
//
// The launches work and wait() returns, but the kernels are not ordered after the work queued
// before them in the log's stream: with that stream held by a gate and a memset of the sum behind
// it, the kernel runs at once in the legacy stream, the memset then zeroes its sum, and the check's
// `firstSum == 14` fails.
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
  const CUresult rc = cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr);
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  if (s_.debug) wait();
}

void LaunchLog::wait() {
  const CUresult rc = cuStreamSynchronize(s_.stream);
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  s_.since.clear();
}

}  // namespace ex10

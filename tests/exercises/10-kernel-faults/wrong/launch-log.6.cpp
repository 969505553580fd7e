// Wrong (R3): a launch the driver refuses names only itself, "since that is the launch that failed"
//
// True of a refusal in isolation, but the kernels queued since the last successful wait may still
// fault, and a fault reported at this launch comes from one of them. After one good launch and a
// refused one the check's `second.suspects == "second-sum,too-wide-after"` fails ("too-wide-after").
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
    s_.since.clear();
    throw LaunchError(rc, {name});
  }
  if (s_.debug) wait();
}

void LaunchLog::wait() {
  const CUresult rc = cuStreamSynchronize(s_.stream);
  if (rc != CUDA_SUCCESS) {
    std::vector<std::string> suspects;
    suspects.swap(s_.since);
    throw LaunchError(rc, std::move(suspects));
  }
  s_.since.clear();
}

}  // namespace ex10

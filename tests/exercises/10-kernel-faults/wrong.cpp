// Deliberately wrong variants of lesson 10's exercises: each check must fail on them.
#include "exercises.hpp"
#include "process.hpp"

#include <cstdio>
#include <sstream>

namespace ex10 {

// Wrong: the retry limit counts the workers of the whole job that died ("give up after maxAttempts
// crashes"), not the attempts of each chunk. The chunk that faulted once is retried and finished,
// but when the chunk that always faults stops the second worker the supervisor gives up the job:
// the chunks after it are never run, and the check's `done` fails for them (and `workers == 4`,
// with two workers started).
std::vector<ChunkOutcome> runJob(const std::vector<std::string>& worker, const std::vector<unsigned>& chunks,
                                 unsigned maxAttempts, unsigned workerSeconds) {
  std::vector<ChunkOutcome> outcomes(chunks.size());
  size_t next = 0;
  unsigned crashes = 0;
  while (next < chunks.size() && crashes < maxAttempts) {
    std::vector<std::string> argv = worker;
    for (size_t i = next; i < chunks.size(); ++i) argv.push_back(std::to_string(chunks[i]));
    const wb::ProcessEnd end = wb::runProcess(argv, {}, workerSeconds);
    std::istringstream lines(end.output);
    for (std::string line; next < chunks.size() && std::getline(lines, line);) {
      unsigned id = 0;
      unsigned long long result = 0;
      if (std::sscanf(line.c_str(), "chunk %u done %llu", &id, &result) != 2 || id != chunks[next]) continue;
      outcomes[next].done = true;
      outcomes[next].result = result;
      ++outcomes[next].attempts;
      ++next;
    }
    if (next == chunks.size()) break;
    ++crashes;
    if (++outcomes[next].attempts >= maxAttempts) ++next;
  }
  return outcomes;
}

// Wrong: "a fault is a 7xx code": every code from 700 to 799 means restart, and nothing else. It
// restarts on errors that leave the context working, such as CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
// (712) from registering memory twice, and misses faults the reference numbers elsewhere: the
// check's `restart` fails for CUDA_ERROR_MPS_CLIENT_TERMINATED (810) and CUDA_ERROR_EXTERNAL_DEVICE
// (911) (and CUDA 13's CUDA_ERROR_CONTAINED, 226), and `!restart` for the double registration.
bool mustRestart(CUresult error) { return error >= 700 && error <= 799; }

LaunchLog::LaunchLog(CUstream stream, bool debug) {
  s_.stream = stream;
  s_.debug = debug;
}

// Wrong: the debug mode trusts cuLaunchKernel's CUresult ("the launch returned success, so the kernel
// ran") and does not wait. The launch of scribble returns CUDA_SUCCESS, the fault shows at a later
// call, and the check's `thrownBy == "launch(scribble)"` and `suspects == "scribble"` fail in debug
// mode.
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

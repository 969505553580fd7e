// Reference solutions of lesson 10's exercises.
#include "exercises.hpp"
#include "process.hpp"

#include <cstdio>
#include <sstream>

namespace ex10 {

// The supervisor keeps one index: the first chunk that is neither finished nor given up. Each
// worker gets the chunks from there on; its "chunk <id> done <result>" lines move the index on,
// one chunk at a time and only in order, so a line from a chunk out of turn counts for nothing.
// When the worker ended before its list did, the chunk at the index stopped it: one more attempt,
// and once it has had maxAttempts the index moves past it. Every worker either finishes a chunk or
// adds an attempt to one, so at most chunks x maxAttempts workers run, each ended by its time limit
// at the latest: the loop cannot run forever.
std::vector<ChunkOutcome> runJob(const std::vector<std::string>& worker, const std::vector<unsigned>& chunks,
                                 unsigned maxAttempts, unsigned workerSeconds) {
  std::vector<ChunkOutcome> outcomes(chunks.size());
  size_t next = 0;
  while (next < chunks.size()) {
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
    if (++outcomes[next].attempts >= maxAttempts) ++next;  // failed for good: the next worker starts after it
  }
  return outcomes;
}

// The codes whose description in cuda.h ends "To continue using CUDA, the process must be
// terminated and relaunched", and CUDA_ERROR_ASSERT ("The context cannot be used anymore, and must
// be destroyed": for a process on the primary context, lesson 10 showed every later call failing).
// Everything else was about the call that returned it. A production server might add codes the
// reference leaves open, such as CUDA_ERROR_ECC_UNCORRECTABLE or CUDA_ERROR_UNKNOWN.
bool mustRestart(CUresult error) {
  switch (error) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_MPS_CLIENT_TERMINATED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
#if CUDA_VERSION >= 13000  // not in 12.6's header
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
#endif
      return true;
    default:
      return false;
  }
}

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

void LaunchLog::wait() {
  const CUresult rc = cuStreamSynchronize(s_.stream);
  if (rc != CUDA_SUCCESS) fail(s_.since, rc);
  s_.since.clear();
}

}  // namespace ex10

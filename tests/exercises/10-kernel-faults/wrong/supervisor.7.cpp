// Wrong (R2): does not count an attempt for a worker killed by a signal, "killed from outside"
//
// "A worker ended by a signal was killed by an operator or the OOM killer: not its chunk's doing,
// so retry the chunk for free." But a chunk can kill its own worker (a crash in the host code, an
// abort), and the task counts every worker a chunk stopped, however it ended: such a chunk would be
// retried forever. The chunk whose worker kills itself once reports 1 attempt, and in "R1 R2 R3 R4
// R5: nine chunks ...", `attempts == expectedAttempts` fails for it.
#include "exercises.hpp"
#include "process.hpp"

#include <cstdio>
#include <sstream>

namespace ex10 {

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
      unsigned long long result = 0;  // a sum of squares: past 32 bits
      if (std::sscanf(line.c_str(), "chunk %u done %llu", &id, &result) != 2 || id != chunks[next]) continue;
      outcomes[next].done = true;
      outcomes[next].result = result;
      ++outcomes[next].attempts;
      ++next;
    }
    if (next == chunks.size()) break;
    if (end.signal != 0 && !end.timedOut) continue;  // killed from outside: retry the chunk, no attempt counted
    if (++outcomes[next].attempts >= maxAttempts) ++next;  // failed for good: the next worker starts after it
  }
  return outcomes;
}

}  // namespace ex10

// Wrong (R3): the retry limit counts the workers of the whole job that died, not the attempts of each chunk
//
// "Give up after maxAttempts crashes" reads like a retry limit. The chunk that faulted once is
// retried and finished, but when the chunk that always faults stops the second worker the
// supervisor gives up the job: the chunks after it are never run, and the check's `done` fails for
// them (and `workers == 5`, with two workers started).
#include "exercises.hpp"
#include "process.hpp"

#include <cstdio>
#include <sstream>

namespace ex10 {

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

}  // namespace ex10

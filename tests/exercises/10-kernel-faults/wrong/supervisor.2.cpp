// Wrong (R3): gives a chunk up only once it has had more than maxAttempts attempts
//
// An off-by-one between "attempts" and "retries": `>` where the attempt just counted is already
// the last one allowed. The chunk that always faults is run by a third worker, so the check's
// `attempts == expectedAttempts` and the log's `begun == expectedAttempts` fail for it (3, not 2),
// and `workers == 5` fails with six.
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
      unsigned long long result = 0;
      if (std::sscanf(line.c_str(), "chunk %u done %llu", &id, &result) != 2 || id != chunks[next]) continue;
      outcomes[next].done = true;
      outcomes[next].result = result;
      ++outcomes[next].attempts;
      ++next;
    }
    if (next == chunks.size()) break;
    if (++outcomes[next].attempts > maxAttempts) ++next;
  }
  return outcomes;
}

}  // namespace ex10

// Wrong (R5): reads the result a worker reports into a 32-bit unsigned
//
// `unsigned id, result` and "%u" for both: the ids fit, the sums do not (a chunk's sum of squares
// is past 2^32), so each result arrives cut to its low 32 bits. Every chunk is done after the right
// number of attempts, but the check's `result == sumOfSquares(...)` fails for each.
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
      unsigned id = 0, result = 0;
      if (std::sscanf(line.c_str(), "chunk %u done %u", &id, &result) != 2 || id != chunks[next]) continue;
      outcomes[next].done = true;
      outcomes[next].result = result;
      ++outcomes[next].attempts;
      ++next;
    }
    if (next == chunks.size()) break;
    if (++outcomes[next].attempts >= maxAttempts) ++next;
  }
  return outcomes;
}

}  // namespace ex10

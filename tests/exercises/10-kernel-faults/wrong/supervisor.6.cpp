// Wrong (R5): counts as attempts only the workers a chunk stopped, not the one that finished it
//
// "Attempts" read as "failed attempts": a chunk finished at once reports 0 and the chunk that
// faulted once reports 1, where ChunkOutcome counts every worker that worked on the chunk. The
// workers ran as they should, but the check's `attempts == expectedAttempts` fails for every
// finished chunk.
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
      ++next;
    }
    if (next == chunks.size()) break;
    if (++outcomes[next].attempts >= maxAttempts) ++next;
  }
  return outcomes;
}

}  // namespace ex10

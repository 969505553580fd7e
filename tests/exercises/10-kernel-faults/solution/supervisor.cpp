// Reference solution of lesson 10's exercise supervisor (lessons/10-kernel-faults/exercises.cpp).
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
      unsigned long long result = 0;  // a sum of squares: past 32 bits
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

}  // namespace ex10

// Wrong (R1): passes the chunk ids as one argument, "40 7 23 ...", as a shell command line would
//
// "The worker takes the chunk ids after its name": written as one string, the way system() or a
// shell script would pass them. But runProcess passes each element of argv as one argument, and the
// worker reads the first number of "40 7 23 ..." only: each worker does one chunk, and the
// supervisor takes the rest for chunks that stopped it. In "R1 R2 R3 R4 R5: nine chunks ...",
// `started == want` fails (and the attempts with it).
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
    std::string ids;
    for (size_t i = next; i < chunks.size(); ++i) ids += (ids.empty() ? "" : " ") + std::to_string(chunks[i]);
    argv.push_back(ids);
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

// Wrong (R4): after a worker dies, the next one gets the whole job again, less the chunks given up
//
// "Rerunning the job is simpler than tracking where it stopped, and the results are the same."
// The outcomes come out right, but every finished chunk is computed again by each later worker:
// the workers' log shows the first chunks begun five times, and the check's
// `begun == expectedAttempts` fails for them.
#include "exercises.hpp"
#include "process.hpp"

#include <cstdio>
#include <sstream>

namespace ex10 {

std::vector<ChunkOutcome> runJob(const std::vector<std::string>& worker, const std::vector<unsigned>& chunks,
                                 unsigned maxAttempts, unsigned workerSeconds) {
  std::vector<ChunkOutcome> outcomes(chunks.size());
  std::vector<bool> givenUp(chunks.size(), false);
  for (;;) {
    std::vector<size_t> order;  // the chunks this worker is given, by index
    std::vector<std::string> argv = worker;
    for (size_t i = 0; i < chunks.size(); ++i)
      if (!givenUp[i]) order.push_back(i), argv.push_back(std::to_string(chunks[i]));
    const wb::ProcessEnd end = wb::runProcess(argv, {}, workerSeconds);
    size_t reported = 0;
    std::istringstream lines(end.output);
    for (std::string line; reported < order.size() && std::getline(lines, line);) {
      unsigned id = 0;
      unsigned long long result = 0;
      if (std::sscanf(line.c_str(), "chunk %u done %llu", &id, &result) != 2 || id != chunks[order[reported]]) continue;
      ChunkOutcome& o = outcomes[order[reported]];
      if (!o.done) o.done = true, o.result = result, ++o.attempts;
      ++reported;
    }
    if (reported == order.size()) break;
    const size_t stopped = order[reported];
    if (++outcomes[stopped].attempts >= maxAttempts) givenUp[stopped] = true;
  }
  return outcomes;
}

}  // namespace ex10

// Wrong (R4): starts one worker per chunk, so that a fault can only ever cost its own chunk
//
// It looks safer and the outcomes are all right, but every chunk pays a process start with cuInit
// and a context (about a quarter of a second each), where the task starts a fresh worker only
// after one died: twelve workers run, and the check's `workers == 5` fails.
#include "exercises.hpp"
#include "process.hpp"

#include <cstdio>
#include <sstream>

namespace ex10 {

std::vector<ChunkOutcome> runJob(const std::vector<std::string>& worker, const std::vector<unsigned>& chunks,
                                 unsigned maxAttempts, unsigned workerSeconds) {
  std::vector<ChunkOutcome> outcomes(chunks.size());
  for (size_t i = 0; i < chunks.size(); ++i) {
    while (!outcomes[i].done && outcomes[i].attempts < maxAttempts) {
      std::vector<std::string> argv = worker;
      argv.push_back(std::to_string(chunks[i]));
      const wb::ProcessEnd end = wb::runProcess(argv, {}, workerSeconds);
      ++outcomes[i].attempts;
      std::istringstream lines(end.output);
      for (std::string line; std::getline(lines, line);) {
        unsigned id = 0;
        unsigned long long result = 0;
        if (std::sscanf(line.c_str(), "chunk %u done %llu", &id, &result) == 2 && id == chunks[i])
          outcomes[i].done = true, outcomes[i].result = result;
      }
    }
  }
  return outcomes;
}

}  // namespace ex10

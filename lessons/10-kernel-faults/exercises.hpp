// The exercises of lesson 10 (kernel faults): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise10_kernel_faults.cpp.
#pragma once

#include "workbook.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ex10 {

// What became of one chunk of a job that runJob ran.
struct ChunkOutcome {
  bool done = false;              // a worker reported it finished
  unsigned long long result = 0;  // the result that worker reported (when done)
  unsigned attempts = 0;          // the workers that worked on it: the one that finished it, and those it stopped
};

// Exercise 1: runs the chunks through worker processes, a fresh worker after each that died, each chunk tried at most maxAttempts times.
std::vector<ChunkOutcome> runJob(const std::vector<std::string>& worker, const std::vector<unsigned>& chunks,
                                 unsigned maxAttempts, unsigned workerSeconds);

// Exercise 2: whether the error a Driver API call returned leaves this process's CUDA unusable, so it must be replaced.
bool mustRestart(CUresult error);

// What a LaunchLog throws: the error, and the launches that may have caused it (given; nothing to write here).
class LaunchError : public std::runtime_error {
 public:
  LaunchError(CUresult code, std::vector<std::string> suspects)
      : std::runtime_error(describe(code, suspects)), code_(code), suspects_(std::move(suspects)) {}
  CUresult code() const noexcept { return code_; }
  // The names of the launches since the last successful wait, in launch order.
  const std::vector<std::string>& suspects() const noexcept { return suspects_; }

 private:
  static std::string describe(CUresult code, const std::vector<std::string>& suspects) {
    std::string text = wb::errorName(code) + " (" + std::to_string(static_cast<int>(code)) + ") after the launch" +
                       (suspects.size() == 1 ? " of " : "es of ");
    for (size_t i = 0; i < suspects.size(); ++i) text += (i ? ", " : "") + suspects[i];
    return text;
  }
  CUresult code_;
  std::vector<std::string> suspects_;
};

// Exercise 3: launches kernels in one stream so that an error, even an asynchronous fault, names the launches that may have caused it.
class LaunchLog {
 public:
  // Launches go into stream; with debug, each one waits for its kernel before it returns.
  LaunchLog(CUstream stream, bool debug);
  // Launches f over blocks x threads (one dimension) with args; any failure throws LaunchError.
  void launch(const std::string& name, CUfunction f, unsigned blocks, unsigned threads, void** args);
  // Waits for the stream; a failure throws LaunchError.
  void wait();

 private:
  // State you will need (change it as you like).
  struct State {
    CUstream stream = nullptr;
    bool debug = false;
    std::vector<std::string> since;  // the launches since the last successful wait
  } s_;
};

}  // namespace ex10

// Wrong (R4): reads each pipe to its end, one worker after another
//
// "Every pipe gets read in the end, so the order does not matter." While the pool reads worker 0's
// pipe, worker 3's fills up and worker 3 stops; in the check worker 0 ends only once worker 3 has
// written everything, so worker 0 is ended at its time limit, and `first == "worker 3 finished
// first\n"` fails.
#include "exercises.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace ex17 {

namespace {

// Ends the workers started so far and waits for them: what a pool that cannot start them all owes.
void abandon(const std::vector<pid_t>& pids, const std::vector<int>& reads) {
  for (pid_t pid : pids) kill(pid, SIGKILL);
  for (int fd : reads) close(fd);
  for (pid_t pid : pids)
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
}

}  // namespace

std::vector<std::string> runWorkers(const std::vector<std::string>& argv, unsigned n, unsigned limitSeconds) {
  if (argv.empty()) throw std::invalid_argument("runWorkers: argv names no program");
  std::vector<std::vector<std::string>> texts(n, argv);
  std::vector<std::vector<char*>> args(n);
  for (unsigned i = 0; i < n; ++i) {
    texts[i].push_back(std::to_string(i));
    for (std::string& a : texts[i]) args[i].push_back(a.data());
    args[i].push_back(nullptr);
  }
  std::vector<pid_t> pids;
  std::vector<int> reads;
  for (unsigned i = 0; i < n; ++i) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      abandon(pids, reads);
      throw std::runtime_error("runWorkers: pipe2 failed");
    }
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]), close(fds[1]);
      abandon(pids, reads);
      throw std::runtime_error("runWorkers: fork failed");
    }
    if (pid == 0) {
      dup2(fds[1], 1);
      alarm(limitSeconds);  // survives execv: the worker's own time limit
      execv(args[i][0], args[i].data());
      _exit(127);
    }
    close(fds[1]);  // the worker's copy is the only write end: its exit ends this pipe
    pids.push_back(pid);
    reads.push_back(fds[0]);
  }

  std::vector<std::string> out(n);
  for (unsigned i = 0; i < n; ++i) {
    char buf[65536];
    for (ssize_t got; (got = read(reads[i], buf, sizeof buf)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) break;
      out[i].append(buf, static_cast<size_t>(got));
    }
    close(reads[i]);
    int status = 0;
    while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) out[i].clear();
  }
  return out;
}

}  // namespace ex17

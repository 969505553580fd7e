// Wrong (R5): keeps what a worker wrote whatever its exit status
//
// "If it printed a result, the result is there." A worker that printed and then failed (exit code
// 3) or was killed has no result the caller can trust: `ends[1].empty()` and `ends[2].empty()` fail.
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
  std::vector<int> open(reads);
  for (unsigned left = n; left > 0;) {
    std::vector<pollfd> watch;
    std::vector<unsigned> which;
    for (unsigned i = 0; i < n; ++i)
      if (open[i] >= 0) watch.push_back({open[i], POLLIN, 0}), which.push_back(i);
    if (poll(watch.data(), watch.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;  // cannot happen with valid descriptors; the waits below still end every worker
    }
    for (size_t k = 0; k < watch.size(); ++k) {
      if (!watch[k].revents) continue;
      const unsigned i = which[k];
      char buf[65536];
      const ssize_t got = read(open[i], buf, sizeof buf);
      if (got > 0) {
        out[i].append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(open[i]);
        open[i] = -1, --left;
      }
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    if (open[i] >= 0) close(open[i]);
    while (waitpid(pids[i], nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  return out;
}

}  // namespace ex17

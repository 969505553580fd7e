#include "process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <stdexcept>

extern char** environ;

namespace wb {

ProcessEnd runProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extraEnv,
                      unsigned limitSeconds) {
  // Everything the child needs is built before fork: after it, the child only calls exec.
  std::vector<std::string> argText(argv), envText;
  for (char** e = environ; *e; ++e) envText.emplace_back(*e);
  envText.insert(envText.end(), extraEnv.begin(), extraEnv.end());
  std::vector<char*> args, env;
  for (auto& a : argText) args.push_back(a.data());
  args.push_back(nullptr);
  for (auto& e : envText) env.push_back(e.data());
  env.push_back(nullptr);

  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("runProcess: pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("runProcess: fork failed");
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    alarm(limitSeconds);
    execve(args[0], args.data(), env.data());
    _exit(127);
  }
  close(fds[1]);
  ProcessEnd end;
  char buf[4096];
  for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    end.output.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  if (WIFEXITED(status)) end.code = WEXITSTATUS(status);
  end.timedOut = end.signal == SIGALRM;
  return end;
}

std::string selfPath() {
  char path[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(path, static_cast<size_t>(n));
}

}  // namespace wb

#include "process.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <stdexcept>

extern char** environ;

namespace wb {

std::vector<std::string> childEnvironment(const std::vector<std::string>& env) {
  std::vector<std::string> result;
  for (char** e = environ; *e; ++e) result.emplace_back(*e);
  for (const std::string& change : env) {
    const std::string name = change.substr(0, change.find('='));
    result.erase(std::remove_if(result.begin(), result.end(),
                                [&](const std::string& e) { return e.compare(0, name.size() + 1, name + "=") == 0; }),
                 result.end());
    if (change.find('=') != std::string::npos) result.push_back(change);
  }
  return result;
}

ProcessEnd runProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      unsigned limitSeconds, const std::vector<int>& inherit) {
  // Everything the child needs is built before fork: after it, the child only calls exec.
  std::vector<std::string> argText(argv), envText = childEnvironment(env);
  std::vector<char*> args, envp;
  for (auto& a : argText) args.push_back(a.data());
  args.push_back(nullptr);
  for (auto& e : envText) envp.push_back(e.data());
  envp.push_back(nullptr);

  // Close-on-exec, so a child started by another thread at the same moment does not inherit this
  // pipe and hold it open (which would delay this reader's end of file until that child ends).
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("runProcess: pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("runProcess: fork failed");
  if (pid == 0) {
    dup2(fds[1], 1);  // dup2's copies are not close-on-exec: the program inherits them
    dup2(fds[1], 2);
    for (int fd : inherit) fcntl(fd, F_SETFD, 0);  // this child's own sockets survive its exec
    alarm(limitSeconds);
    execve(args[0], args.data(), envp.data());
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

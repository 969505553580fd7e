#include "process.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
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

namespace {

// The file of a child's record: WORKBOOK_CHILD_RECORDS/<program> <arguments> <NAME=value...>, with
// every character but letters, digits and ".=-" written as '_'; "" when the variable is not set.
std::string recordPath(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  const char* dir = std::getenv("WORKBOOK_CHILD_RECORDS");
  if (!dir || !*dir || argv.empty()) return "";
  std::string key = argv[0].substr(argv[0].find_last_of('/') + 1);
  for (size_t i = 1; i < argv.size(); ++i) key += " " + argv[i];
  std::vector<std::string> settings;
  for (const std::string& e : env)
    if (e.find('=') != std::string::npos) settings.push_back(e);
  std::sort(settings.begin(), settings.end());
  for (const std::string& e : settings) key += " " + e;
  for (char& c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '=' && c != '-') c = '_';
  return std::string(dir) + "/" + key.substr(0, 200);
}

// Written whole under another name, then renamed: a reader never sees half a record.
void record(const std::string& path, const ProcessEnd& end) {
  if (path.empty()) return;
  mkdir(std::getenv("WORKBOOK_CHILD_RECORDS"), 0755);  // the first record makes the folder
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    out << end.signal << ' ' << end.code << ' ' << (end.timedOut ? 1 : 0) << '\n' << end.output;
    if (!out) return;  // a record is a shortcut for a test: without it, the test runs the child itself
  }
  std::rename(partial.c_str(), path.c_str());
}

// Where WORKBOOK_CHILD_ENVIRONMENTS names a file, every child started appends one line to it: its
// arguments, then, tab-separated, each CUDA_ variable it inherits ("NAME=value"; not those its
// parent set for it on purpose). The environment check (tests/environment_check.cpp) reads it to
// see that a lesson's children run without the variables the lesson says they run without. One
// write per line, in append mode, so children started by several threads at once do not mix lines.
void noteEnvironment(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     const std::vector<std::string>& envText) {
  const char* file = std::getenv("WORKBOOK_CHILD_ENVIRONMENTS");
  if (!file || !*file) return;
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + a;
  for (const std::string& e : envText) {
    const std::string name = e.substr(0, e.find('='));
    bool set = false;
    for (const std::string& change : env) set = set || change.substr(0, change.find('=')) == name;
    if (name.compare(0, 5, "CUDA_") == 0 && !set) line += "\t" + e;
  }
  line += "\n";
  const int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;  // no line for this child: the check cannot see what it inherited
  const ssize_t written = write(fd, line.data(), line.size());
  (void)written;
  close(fd);
}

}  // namespace

std::optional<ProcessEnd> recordedRun(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  const std::string path = recordPath(argv, env);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  ProcessEnd end;
  int timedOut = 0;
  if (!(in >> end.signal >> end.code >> timedOut) || in.get() != '\n') return std::nullopt;
  end.timedOut = timedOut != 0;
  end.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return end;
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
  noteEnvironment(argv, env, envText);

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
  record(recordPath(argv, env), end);
  return end;
}

std::string selfPath() {
  char path[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(path, static_cast<size_t>(n));
}

}  // namespace wb

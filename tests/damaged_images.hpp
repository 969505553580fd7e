// The check every lesson that loads kernel images must pass: pointed (CUDA_WORKBOOK_KERNEL_DIR) at
// an empty folder, or at copies of the images cut to 300 bytes or cut in half, the program stops
// within seconds with wb::kExitBadImage and a message naming the file, its folder and where the
// folder came from. Without the reader in common/image_reader.hpp the driver hangs or crashes on
// some of these (DESIGN.md, "Damaged images").
#pragma once

#include "support.hpp"

#include <fcntl.h>
#include <signal.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace wbt {

struct ProgramEnd {
  int signal = 0;  // the signal that ended it, or 0
  int code = -1;   // its exit code otherwise
  std::string output;
};

// Runs program with extra environment variables, stdout and stderr captured. The child arms
// alarm(limitSeconds) before exec (an alarm survives exec), so a program that hangs is ended by
// SIGALRM: no test waits longer than that, and none sleeps.
inline ProgramEnd runProgram(const std::string& program, const std::vector<std::string>& extraEnv,
                             unsigned limitSeconds) {
  std::vector<std::string> envText;
  for (char** e = environ; *e; ++e) envText.emplace_back(*e);
  envText.insert(envText.end(), extraEnv.begin(), extraEnv.end());
  std::vector<char*> env;
  for (auto& e : envText) env.push_back(e.data());
  env.push_back(nullptr);
  std::string path = program;
  char* argv[] = {path.data(), nullptr};

  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    alarm(limitSeconds);
    execve(argv[0], argv, env.data());
    _exit(127);
  }
  close(fds[1]);
  ProgramEnd end;
  char buf[4096];
  for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    end.output.append(buf, static_cast<size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  if (WIFEXITED(status)) end.code = WEXITSTATUS(status);
  return end;
}

// A folder under /tmp, removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    char templ[] = "/tmp/workbook-images-XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Copies every image of the build's kernel folder into dir, keeping the first bytes of each that
// keep(size) says.
template <class Keep>
void copyImagesCut(const std::string& dir, Keep keep) {
  for (const auto& entry : std::filesystem::directory_iterator(wb::kernelDir())) {
    const std::string name = entry.path().filename();
    if (!entry.is_regular_file() || name.find(".CMake") != std::string::npos) continue;
    const std::string ext = entry.path().extension();
    if (ext != ".fatbin" && ext != ".cubin" && ext != ".ptx") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::ofstream(dir + "/" + name, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep(bytes.size())));
  }
}

inline void checkProgramRefusesDamagedImages(const std::string& program) {
  constexpr unsigned kLimitSeconds = 20;
  struct Case {
    const char* what;
    size_t (*keep)(size_t);  // nullptr: an empty folder
    const char* problem;
  };
  const Case cases[] = {
      {"an empty folder", nullptr, "no such file"},
      {"images cut to 300 bytes", [](size_t n) { return n < 300 ? n : size_t{300}; }, "cut short"},
      {"images cut in half", [](size_t n) { return n / 2; }, "cut short"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    ScratchDir dir;
    if (c.keep) copyImagesCut(dir.path(), c.keep);
    const ProgramEnd end = runProgram(program, {"CUDA_WORKBOOK_KERNEL_DIR=" + dir.path()}, kLimitSeconds);
    CAPTURE(end.output);
    CHECK_MESSAGE(end.signal != SIGALRM, "still running after " << kLimitSeconds << " s: it hung");
    CHECK(end.signal == 0);
    CHECK(end.code == wb::kExitBadImage);
    CHECK(end.output.find(dir.path() + "/") != std::string::npos);  // the file, by its full path
    CHECK(end.output.find(c.problem) != std::string::npos);
    CHECK(end.output.find("comes from CUDA_WORKBOOK_KERNEL_DIR") != std::string::npos);
  }
}

}  // namespace wbt

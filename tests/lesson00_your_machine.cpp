// Lesson 00's claims: the program starts without a driver and says why no CUDA program can run
// there (no libcuda, the toolkit's stub, no device visible, a child forked after cuInit), each with
// exit code 2; on a GPU machine it ends with 0 or 6; each finding that can be provoked is (a CUDA
// variable set, the stub on the loader's path, a JIT cache it cannot write, eager loading); its
// JSON holds the same findings as its report; and the survey's pieces in common/machine.hpp follow
// what NVIDIA documents. No case asserts one machine's numbers. The suite without-gpu runs on every
// machine under the toolkit's stub driver (ctest lesson00.without-gpu, label cpu).
#include "machine.hpp"
#include "scratch.hpp"
#include "support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#ifndef WORKBOOK_STUB_DRIVER_DIR  // lessons/CMakeLists.txt defines it where the build has the stub
#define WORKBOOK_STUB_DRIVER_DIR ""
#endif

namespace {

const std::string kProgram = WORKBOOK_LESSON_PROGRAM;
const std::string kStubDir = WORKBOOK_STUB_DRIVER_DIR;

// The program run as a child with the environment changed as wb::runProcess takes it.
wb::ProcessEnd run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv{kProgram};
  argv.insert(argv.end(), args.begin(), args.end());
  return wb::runProcess(argv, env, 120);
}

// A finding as the report or the JSON states it: its id and severity word.
using Findings = std::map<std::string, std::string>;

// The report's findings: every line "[severity] id" or "[severity] id (lesson NN)".
Findings reportFindings(const std::string& output) {
  Findings found;
  static const std::regex line(R"(^\[(ok|note|action|no-driver)\] ([A-Za-z0-9_.-]+)( \(lesson [0-9]+\))?$)");
  std::istringstream in(output);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) found[m[2]] = m[1];
  }
  return found;
}

// A small JSON reader, enough to prove the output is JSON and to read its findings back.
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  std::string text;  // a string's value, or a number's digits
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;
  const Json* at(const std::string& key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};

class JsonReader {
 public:
  explicit JsonReader(std::string text) : s_(std::move(text)) {}
  // The whole text as one value; throws std::runtime_error, naming the offset, where it is not JSON.
  Json document() {
    Json v = value();
    space();
    if (at_ != s_.size()) fail("text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("not JSON at offset " + std::to_string(at_) + ": " + what);
  }
  void space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  bool take(char c) {
    space();
    if (at_ < s_.size() && s_[at_] == c) return ++at_, true;
    return false;
  }
  std::string string() {
    if (!take('"')) fail("expected a string");
    std::string out;
    while (at_ < s_.size() && s_[at_] != '"') {
      char c = s_[at_++];
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character in a string");
      if (c == '\\') {
        if (at_ >= s_.size()) fail("a string cut short");
        const char e = s_[at_++];
        const std::string simple = "\"\\/bfnrt", meant = "\"\\/\b\f\n\r\t";
        if (e == 'u') {
          if (at_ + 4 > s_.size()) fail("a \\u escape cut short");
          c = static_cast<char>(std::stoi(s_.substr(at_, 4), nullptr, 16));
          at_ += 4;
        } else if (simple.find(e) != std::string::npos) {
          c = meant[simple.find(e)];
        } else {
          fail("an unknown escape");
        }
      }
      out += c;
    }
    if (!take('"')) fail("a string not closed");
    return out;
  }
  Json value() {
    Json v;
    space();
    if (at_ >= s_.size()) fail("expected a value");
    const char c = s_[at_];
    if (c == '{') {
      ++at_;
      v.kind = Json::Object;
      if (take('}')) return v;
      do {
        std::string key = string();
        if (!take(':')) fail("expected ':'");
        v.members.emplace_back(std::move(key), value());
      } while (take(','));
      if (!take('}')) fail("expected '}'");
    } else if (c == '[') {
      ++at_;
      v.kind = Json::Array;
      if (take(']')) return v;
      do v.items.push_back(value());
      while (take(','));
      if (!take(']')) fail("expected ']'");
    } else if (c == '"') {
      v.kind = Json::String;
      v.text = string();
    } else if (s_.compare(at_, 4, "true") == 0 || s_.compare(at_, 5, "false") == 0 || s_.compare(at_, 4, "null") == 0) {
      v.kind = c == 'n' ? Json::Null : Json::Bool;
      at_ += c == 'f' ? 5 : 4;
    } else {
      const size_t from = at_;
      while (at_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[at_])) || std::string("+-.eE").find(s_[at_]) != std::string::npos)) ++at_;
      if (at_ == from) fail("expected a value");
      v.kind = Json::Number;
      v.text = s_.substr(from, at_ - from);
    }
    return v;
  }
  std::string s_;
  size_t at_ = 0;
};

// The JSON report's exit code and findings; fails the case where it is not JSON of that shape.
struct JsonReport {
  int exitCode = -1;
  Findings findings;
  std::vector<Json> raw;
};
JsonReport readJson(const std::string& output) {
  JsonReport r;
  Json doc;
  REQUIRE_NOTHROW(doc = JsonReader(output).document());
  REQUIRE(doc.kind == Json::Object);
  const Json* code = doc.at("exitCode");
  const Json* findings = doc.at("findings");
  REQUIRE(code);
  REQUIRE(code->kind == Json::Number);
  REQUIRE(findings);
  REQUIRE(findings->kind == Json::Array);
  r.exitCode = std::stoi(code->text);
  for (const Json& f : findings->items) {
    REQUIRE(f.kind == Json::Object);
    for (const char* key : {"id", "severity", "basis", "what", "detail", "todo", "lesson"}) {
      CAPTURE(key);
      REQUIRE(f.at(key));
      CHECK(f.at(key)->kind == Json::String);
    }
    REQUIRE(f.at("step"));
    CHECK(f.at("step")->kind == Json::Number);
    r.findings[f.at("id")->text] = f.at("severity")->text;
    r.raw.push_back(f);
  }
  return r;
}

// The step marks of the program's eight steps, each once.
void checkEverySteps(const std::string& output) {
  for (int n = 1; n <= 8; ++n) {
    CAPTURE(n);
    CHECK(output.find("\n=== " + std::to_string(n) + ". ") != std::string::npos);
  }
}

// Every finding that needs action, or says no CUDA program runs here, says what to do.
void checkActionsSayWhatToDo(const JsonReport& r) {
  for (const Json& f : r.raw) {
    const std::string severity = f.at("severity")->text;
    if (severity != "action" && severity != "no-driver") continue;
    CAPTURE(f.at("id")->text);
    CHECK(!f.at("todo")->text.empty());
  }
}

// An environment variable set for a scope, put back as it was at its end.
class SetEnv {
 public:
  SetEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~SetEnv() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  SetEnv(const SetEnv&) = delete;
  SetEnv& operator=(const SetEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

void writeFile(const std::string& path, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out << std::string(bytes, 'x');
}

void copyFile(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
}

}  // namespace

TEST_SUITE("without-gpu") {
  TEST_CASE("the program needs no libcuda before main: the loader starts it on a machine without a driver") {
    const wb::DynamicSection program = wb::readDynamicSection(kProgram);
    REQUIRE(program.read);
    for (const std::string& library : program.needed) {
      CAPTURE(library);
      CHECK(library.rfind("libcuda.so", 0) != 0);
    }
    for (const std::string& symbol : program.imported) {
      CAPTURE(symbol);
      CHECK_FALSE((symbol.size() > 2 && symbol.rfind("cu", 0) == 0 && std::isupper(static_cast<unsigned char>(symbol[2]))));
    }
  }

  TEST_CASE("with no libcuda at all it says so, goes through every step, and exits 2") {
    wb::ScratchDir nothing;
    const std::string missing = nothing.path() + "/libcuda.so.1";
    const wb::ProcessEnd end = run({"--driver", missing});
    CAPTURE(end.output);
    CHECK(end.code == wb::kExitNoGpu);
    CHECK(end.output.find("no " + missing + " could be opened") != std::string::npos);
    CHECK(reportFindings(end.output)["driver.library"] == "no-driver");
    CHECK(end.output.find("install the NVIDIA driver") != std::string::npos);
    checkEverySteps(end.output);
  }

  TEST_CASE("under the toolkit's stub it names the stub, says what to do, and exits 2") {
    if (kStubDir.empty()) return wbt::skipCase("this build found no stub libcuda in the toolkit");
    const wb::ProcessEnd end = run({}, {"LD_LIBRARY_PATH=" + kStubDir});
    CAPTURE(end.output);
    CHECK(end.code == wb::kExitNoGpu);
    CHECK(end.output.find("the CUDA toolkit's stub library, not a driver") != std::string::npos);
    CHECK(end.output.find("keep the toolkit's stubs/ folder off LD_LIBRARY_PATH") != std::string::npos);
    CHECK(reportFindings(end.output)["driver.library"] == "no-driver");
    checkEverySteps(end.output);
  }

  TEST_CASE("under the stub, --json is JSON with the same findings and exit code as the report") {
    if (kStubDir.empty()) return wbt::skipCase("this build found no stub libcuda in the toolkit");
    const std::vector<std::string> env = {"LD_LIBRARY_PATH=" + kStubDir, "CUDA_LAUNCH_BLOCKING=1"};
    const wb::ProcessEnd human = run({}, env), json = run({"--json"}, env);
    CAPTURE(json.output);
    const JsonReport r = readJson(json.output);
    CHECK(json.code == wb::kExitNoGpu);
    CHECK(r.exitCode == json.code);
    CHECK(r.findings == reportFindings(human.output));
    CHECK(r.findings.count("env.CUDA_LAUNCH_BLOCKING") == 1);
    checkActionsSayWhatToDo(r);
  }

  TEST_CASE("a CUDA variable set is named with what NVIDIA documents it to do; a JIT cache it cannot write needs action") {
    if (kStubDir.empty()) return wbt::skipCase("this build found no stub libcuda in the toolkit");
    wb::ScratchDir scratch;
    writeFile(scratch.path() + "/a-file", 16);  // a file where the cache's folder would have to be made
    const wb::ProcessEnd end = run({}, {"LD_LIBRARY_PATH=" + kStubDir, "CUDA_DEVICE_MAX_CONNECTIONS=1",
                                        "CUDA_CACHE_PATH=" + scratch.path() + "/a-file/cache"});
    CAPTURE(end.output);
    const Findings found = reportFindings(end.output);
    CHECK(found.at("env.CUDA_DEVICE_MAX_CONNECTIONS") == "note");
    CHECK(end.output.find("Your environment sets CUDA_DEVICE_MAX_CONNECTIONS=1: " +
                          std::string(wb::findEnvVariable("CUDA_DEVICE_MAX_CONNECTIONS")->documented)) != std::string::npos);
    CHECK(found.at("jit.cache") == "action");
    CHECK(found.count("env.CUDA_CACHE_PATH") == 1);
  }

  TEST_CASE("a bad argument is a usage error") {
    const wb::ProcessEnd end = run({"--no-such-option"});
    CHECK(end.code == wb::kExitUsage);
    CHECK(end.output.find("usage:") != std::string::npos);
  }

  TEST_CASE("a driver file is told apart in a child: the stub, and a file that is not a driver") {
    if (kStubDir.empty()) return wbt::skipCase("this build found no stub libcuda in the toolkit");
    CHECK(wb::inspectDriverFile(kStubDir + "/libcuda.so.1").kind == wb::DriverFileKind::Stub);
    wb::ScratchDir scratch;
    writeFile(scratch.path() + "/libcuda.so.1", 100);
    const wb::DriverFileKind junk = wb::inspectDriverFile(scratch.path() + "/libcuda.so.1");
    CHECK(junk.kind == wb::DriverFileKind::Unreadable);
    CHECK_FALSE(junk.why.empty());
  }

  TEST_CASE("the driver files on the loader's path: LD_LIBRARY_PATH's folders first, in their order") {
    if (kStubDir.empty()) return wbt::skipCase("this build found no stub libcuda in the toolkit");
    wb::ScratchDir a, b;
    copyFile(kStubDir + "/libcuda.so.1", a.path() + "/libcuda.so.1");
    copyFile(kStubDir + "/libcuda.so.1", b.path() + "/libcuda.so");
    std::vector<wb::DriverFile> files;
    {
      const SetEnv path("LD_LIBRARY_PATH", (a.path() + ":" + b.path()).c_str());
      files = wb::driverFilesOnLoaderPath();
    }
    REQUIRE(files.size() >= 2);
    CHECK(files[0].path == a.path() + "/libcuda.so.1");  // libcuda.so.1 first: what dlopen and linked programs ask for
    CHECK(files[0].foundBy == "LD_LIBRARY_PATH");
    bool second = false;
    for (const auto& f : files) second = second || (f.path == b.path() + "/libcuda.so" && f.foundBy == "LD_LIBRARY_PATH");
    CHECK(second);
  }

  TEST_CASE("the JIT cache: CUDA_CACHE_PATH or ~/.nv/ComputeCache, CUDA_CACHE_MAXSIZE or 1 GiB, CUDA_CACHE_DISABLE=1, and whether it can be written") {
    wb::ScratchDir scratch;
    const std::string cache = scratch.path() + "/cache";
    std::filesystem::create_directories(cache + "/sub/deeper");
    writeFile(cache + "/one", 1000);
    writeFile(cache + "/sub/deeper/two", 2345);
    {
      const SetEnv path("CUDA_CACHE_PATH", cache.c_str()), max("CUDA_CACHE_MAXSIZE", "4294967296"),
          off("CUDA_CACHE_DISABLE", "0");
      const wb::JitCache c = wb::jitCache();
      CHECK(c.folder == cache);
      CHECK(c.folderFromVariable);
      CHECK(c.exists);
      CHECK(c.writable);
      CHECK(c.files == 2);
      CHECK(c.usedBytes == 3345);
      CHECK(c.maxBytes == 4294967296ull);  // past 32 bits
      CHECK_FALSE(c.disabled);
    }
    {
      const SetEnv path("CUDA_CACHE_PATH", (scratch.path() + "/not/yet").c_str()), max("CUDA_CACHE_MAXSIZE", nullptr),
          off("CUDA_CACHE_DISABLE", "1");
      const wb::JitCache c = wb::jitCache();
      CHECK_FALSE(c.exists);
      CHECK(c.writable);  // the driver makes it in the scratch folder, which it may write
      CHECK(c.writableCheckedAt == scratch.path());
      CHECK(c.maxBytes == 1073741824ull);
      CHECK(c.disabled);
    }
    {
      writeFile(scratch.path() + "/a-file", 1);
      const SetEnv path("CUDA_CACHE_PATH", (scratch.path() + "/a-file/cache").c_str());
      CHECK_FALSE(wb::jitCache().writable);
    }
    {
      const SetEnv path("CUDA_CACHE_PATH", nullptr), home("HOME", scratch.path().c_str());
      CHECK(wb::jitCache().folder == scratch.path() + "/.nv/ComputeCache");
    }
  }

  TEST_CASE("the MPS pipe folder: CUDA_MPS_PIPE_DIRECTORY, or /tmp/nvidia-mps") {
    wb::ScratchDir scratch;
    {
      const SetEnv folder("CUDA_MPS_PIPE_DIRECTORY", scratch.path().c_str());
      const wb::MpsPipeFolder m = wb::mpsPipeFolder();
      CHECK(m.folder == scratch.path());
      CHECK(m.fromVariable);
      CHECK(m.exists);
    }
    const SetEnv folder("CUDA_MPS_PIPE_DIRECTORY", nullptr);
    CHECK(wb::mpsPipeFolder().folder == "/tmp/nvidia-mps");
  }

  TEST_CASE("versions: the PTX ISA of each CUDA release, the minor version floors, and the built PTX's ISA") {
    CHECK(wb::ptxIsaOf(12000) == "8.0");
    CHECK(wb::ptxIsaOf(12060) == "8.5");  // 12.6 introduced no new ISA
    CHECK(wb::ptxIsaOf(12080) == "8.7");
    CHECK(wb::ptxIsaOf(13000) == "9.0");
    CHECK(wb::ptxIsaOf(11080).empty());
    CHECK(wb::compareVersions("8.10", "8.9") > 0);
    CHECK(wb::compareVersions("9.0", "8.8") > 0);
    CHECK(wb::compareVersions("8.5", "8.5") == 0);
    CHECK(wb::minorVersionFloor(12) == 525);
    CHECK(wb::minorVersionFloor(13) == 580);
    CHECK(wb::versionInFileName("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04") == "580.159.04");
    CHECK(wb::versionInFileName("/usr/lib/x86_64-linux-gnu/libcuda.so.1").empty());
    CHECK(wb::cudaVersionText(12080) == "12.8");
    // What nvcc wrote into the course's PTX is the ISA the table gives its toolkit.
    std::ifstream in(wb::kernelImage("vector_ops.ptx"));
    const std::string ptx{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const std::string toolkit = wb::imageToolkitVersion();
    const int version = std::stoi(toolkit) * 1000 + std::stoi(toolkit.substr(toolkit.find('.') + 1)) * 10;
    CAPTURE(toolkit);
    if (!wb::ptxIsaOf(version).empty()) CHECK(wb::ptxVersionOfText(ptx) == wb::ptxIsaOf(version));
  }

  TEST_CASE("cuInit's answers, classified") {
    CHECK(wb::classifyInit(CUDA_SUCCESS) == wb::InitAnswer::Ready);
    CHECK(wb::classifyInit(CUDA_ERROR_STUB_LIBRARY) == wb::InitAnswer::Stub);
    CHECK(wb::classifyInit(CUDA_ERROR_NO_DEVICE) == wb::InitAnswer::NoDevice);
    CHECK(wb::classifyInit(CUDA_ERROR_NOT_INITIALIZED) == wb::InitAnswer::ForkedAfterInit);
    CHECK(wb::classifyInit(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) == wb::InitAnswer::DriverMismatch);
    CHECK(wb::classifyInit(CUDA_ERROR_UNKNOWN) == wb::InitAnswer::Failed);
  }

  TEST_CASE("a child forked after rememberInit() names the process that initialised CUDA; that process names none") {
    wb::rememberInit();
    CHECK(wb::initialisedIn() == 0);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::fflush(nullptr);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const int parent = wb::initialisedIn();
      _exit(write(fds[1], &parent, sizeof parent) == sizeof parent ? 0 : 1);
    }
    close(fds[1]);
    int parent = -1;
    const ssize_t got = read(fds[0], &parent, sizeof parent);
    close(fds[0]);
    waitpid(pid, nullptr, 0);
    REQUIRE(got == static_cast<ssize_t>(sizeof parent));
    CHECK(parent == getpid());
  }

  TEST_CASE("JSON strings are escaped") {
    JsonReader reader("[" + wb::jsonString("a \"quoted\" \\ line\nand a\ttab\x01") + "]");
    const Json doc = reader.document();
    REQUIRE(doc.items.size() == 1);
    CHECK(doc.items[0].text == "a \"quoted\" \\ line\nand a\ttab\x01");
  }
}

TEST_SUITE("machine") {
  TEST_CASE("on this machine: exit code 0 or 6, every step, every action says what to do, and --json says the same") {
    wbt::initDriver();
    const wb::ProcessEnd human = run({}), json = run({"--json"});
    CAPTURE(human.output);
    CHECK((human.code == wb::kExitOk || human.code == wb::kExitNeedsAction));
    checkEverySteps(human.output);
    const JsonReport r = readJson(json.output);
    CHECK(json.code == human.code);
    CHECK(r.exitCode == human.code);
    CHECK(r.findings == reportFindings(human.output));
    checkActionsSayWhatToDo(r);
    CHECK(r.findings.at("driver.library") == "ok");
    CHECK(r.findings.at("process.init") == "ok");
    int count = 0;
    CU_CHECK(cuDeviceGetCount(&count));
    CHECK(human.output.find("the driver sees " + std::to_string(count) + " CUDA device") != std::string::npos);
    for (int n = 0; n < count; ++n) {
      CAPTURE(n);
      CHECK(r.findings.count("device." + std::to_string(n) + ".compute-mode") == 1);
      CHECK(r.findings.count("device." + std::to_string(n) + ".green-contexts") == 1);
    }
  }

  TEST_CASE("with CUDA_VISIBLE_DEVICES empty it says the driver sees no device, names the variable, and exits 2") {
    const wb::ProcessEnd end = run({}, {"CUDA_VISIBLE_DEVICES="});
    CAPTURE(end.output);
    CHECK(end.code == wb::kExitNoGpu);
    CHECK(reportFindings(end.output)["process.init"] == "no-driver");
    CHECK(end.output.find("CUDA_ERROR_NO_DEVICE") != std::string::npos);
    CHECK(end.output.find("CUDA_VISIBLE_DEVICES is ''") != std::string::npos);
    checkEverySteps(end.output);
  }

  TEST_CASE("provoked at once: a CUDA variable, the stub on LD_LIBRARY_PATH as libcuda.so, a JIT cache it cannot write, "
            "eager loading; exit code 6") {
    if (kStubDir.empty()) return wbt::skipCase("this build found no stub libcuda in the toolkit");
    wb::ScratchDir stubs, scratch;
    copyFile(kStubDir + "/libcuda.so.1", stubs.path() + "/libcuda.so");  // as the toolkit's stubs/ folder holds it
    writeFile(scratch.path() + "/a-file", 16);
    const char* path = std::getenv("LD_LIBRARY_PATH");
    const wb::ProcessEnd end = run({}, {"LD_LIBRARY_PATH=" + stubs.path() + (path && *path ? ":" + std::string(path) : ""),
                                        "CUDA_LAUNCH_BLOCKING=1", "CUDA_MODULE_LOADING=EAGER",
                                        "CUDA_CACHE_PATH=" + scratch.path() + "/a-file/cache"});
    CAPTURE(end.output);
    Findings found = reportFindings(end.output);
    CHECK(end.code == wb::kExitNeedsAction);
    CHECK(found["driver.library"] == "ok");  // libcuda.so.1 is still the driver: the stub is named libcuda.so
    CHECK(found["driver.stub-on-path"] == "action");
    CHECK(end.output.find(stubs.path() + "/libcuda.so") != std::string::npos);
    CHECK(found["env.CUDA_LAUNCH_BLOCKING"] == "note");
    CHECK(found["loading.mode"] == "note");
    CHECK(found["jit.cache"] == "action");
  }

  TEST_CASE("--fork-first: the child forked after cuInit says so, and exits 2") {
    const wb::ProcessEnd end = run({"--fork-first"});
    CAPTURE(end.output);
    CHECK(end.code == wb::kExitNoGpu);
    CHECK(reportFindings(end.output)["process.init"] == "no-driver");
    CHECK(std::regex_search(end.output, std::regex("this process \\(pid [0-9]+\\) was forked after pid [0-9]+'s cuInit")));
  }

  TEST_CASE("in a process forked after cuInit, cuInit answers what lesson 00 classifies as forked (observed on driver 580)") {
    wbt::initDriver();
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::fflush(nullptr);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      alarm(10);
      const int answer = static_cast<int>(wb::classifyInit(cuInit(0)));
      _exit(write(fds[1], &answer, sizeof answer) == sizeof answer ? 0 : 1);
    }
    close(fds[1]);
    int answer = -2;
    const ssize_t got = read(fds[0], &answer, sizeof answer);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(got == static_cast<ssize_t>(sizeof answer));
    CHECK(answer == static_cast<int>(wb::InitAnswer::ForkedAfterInit));
  }
}

TEST_SUITE("pairs") {
  TEST_CASE("every pair of devices: a round trip with every byte intact, one finding per pair") {
    const int count = wbt::initDriver();
    if (count < 2) return wbt::skipCase("needs 2 CUDA devices, this machine has " + std::to_string(count));
    const wb::ProcessEnd end = run({"--json"});
    const JsonReport r = readJson(end.output);
    int pairs = 0;
    for (const auto& finding : r.findings)
      if (finding.first.rfind("pair.", 0) == 0) {
        const std::string& id = finding.first;  // a named variable: Clang 14 cannot capture a structured binding
        CAPTURE(id);
        CHECK(finding.second != "action");
        ++pairs;
      }
    CHECK(pairs == count * (count - 1) / 2);
  }
}

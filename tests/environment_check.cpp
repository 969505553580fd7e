// environment-check <lesson program>: the lesson under the CUDA environment variables of
// common/environment.hpp's table (ctest environment.NN, one per lesson).
//
// It asks the program which variables it declares (WORKBOOK_ENVIRONMENT_USES=1), then:
//   - for each variable it Stops under: a run with the variable set must end within seconds with
//     exit code 4 (wb::kExitEnvironment) and a message naming the variable;
//   - two runs with every other variable set at once (JIT forced in one, JIT forbidden in the
//     other: those two cannot be set together) must end with exit code 0, print a note for each
//     variable the lesson Teaches or Controls, and print no "this run did not show"; and no child
//     the lesson started (through wb::runProcess, which notes each child's CUDA variables in the
//     file WORKBOOK_CHILD_ENVIRONMENTS names) may run with a variable the lesson Controls, that is,
//     says its children run without;
//   - a run with CUDA_VISIBLE_DEVICES empty (no device) must end within seconds with exit code 2
//     (lesson 00: 6, a finding) and a message saying the driver sees no CUDA device.
// Variables a lesson does not declare are in those runs too: the lesson claims they change nothing
// it shows, and its own checks (wb::expect) would stop it if one did.
#include "environment.hpp"
#include "process.hpp"
#include "scratch.hpp"

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr unsigned kStopSeconds = 10, kRunSeconds = 180;
constexpr int kExitEnvironment = 4;  // wb::kExitEnvironment (workbook.hpp needs the driver; this does not)

struct Use {
  std::string variable, how;
};

std::vector<std::string> outputLines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

std::string lastLines(const std::string& text, size_t n = 6) {
  const auto lines = outputLines(text);
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += "      | " + lines[i] + "\n";
  return out;
}

std::string ending(const wb::ProcessEnd& end) {
  if (end.timedOut) return "hung (ended by the time limit)";
  if (end.signal) return "killed by signal " + std::to_string(end.signal);
  return "exit " + std::to_string(end.code);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: environment-check <lesson program>\n");
    return 64;
  }
  const std::string program = argv[1];
  const wb::ProcessEnd asked = wb::runProcess({program}, {"WORKBOOK_ENVIRONMENT_USES=1"}, kStopSeconds);
  std::vector<Use> uses;
  for (const auto& line : outputLines(asked.output)) {
    std::stringstream ss(line);
    std::string word;
    Use u;
    if (ss >> word >> u.variable >> u.how && word == "uses") uses.push_back(u);
  }
  if (asked.code != 0) {
    std::printf("FAILED: %s did not say which variables it declares (%s):\n%s", program.c_str(),
                ending(asked).c_str(), lastLines(asked.output).c_str());
    return 1;
  }
  wb::ScratchDir scratch;  // path-valued variables point here, so nothing lands in the run folder
  const auto sampleOf = [&](const wb::EnvVariable& v) -> std::string {
    const std::string name = v.name;
    if (name == "CUDA_CACHE_PATH") return scratch.path() + "/cache";
    if (name == "CUDA_COREDUMP_FILE" || name == "CUDA_COREDUMP_PIPE") return scratch.path() + "/" + v.sample;
    return v.sample;
  };
  std::set<std::string> stops, noted, controls;
  for (const Use& u : uses) {
    (u.how == "stops" ? stops : noted).insert(u.variable);
    if (u.how == "controls") controls.insert(u.variable);
  }

  int failures = 0;
  std::printf("%s declares %zu variables.\n", program.c_str(), uses.size());
  for (const std::string& name : stops) {
    const wb::EnvVariable* v = wb::findEnvVariable(name);
    if (!v) {
      std::printf("FAILED  %s is not in common/environment.cpp's table\n", name.c_str());
      ++failures;
      continue;
    }
    const std::string setting = name + "=" + sampleOf(*v);
    const wb::ProcessEnd end = wb::runProcess({program}, {setting}, kStopSeconds);
    const bool ok = end.code == kExitEnvironment && end.output.find(name) != std::string::npos;
    std::printf("%s  %-44s stops: %s\n", ok ? "ok     " : "FAILED ", setting.c_str(), ending(end).c_str());
    if (!ok) {
      std::printf("%s", lastLines(end.output).c_str());
      ++failures;
    }
  }
  {
    const wb::ProcessEnd end = wb::runProcess({program}, {"CUDA_VISIBLE_DEVICES="}, kStopSeconds);
    const bool ok = (end.code == 2 || end.code == 6) && end.output.find("no CUDA device") != std::string::npos;
    std::printf("%s  %-44s no device: %s\n", ok ? "ok     " : "FAILED ", "CUDA_VISIBLE_DEVICES=", ending(end).c_str());
    if (!ok) {
      std::printf("      expected exit code 2 and a message naming the missing device\n%s", lastLines(end.output).c_str());
      ++failures;
    }
  }
  // Two runs: every variable the lesson does not stop under, the JIT forced in one and forbidden in the other.
  const std::set<std::string> forcing = {"CUDA_FORCE_PTX_JIT", "CUDA_FORCE_JIT"},
                              forbidding = {"CUDA_DISABLE_PTX_JIT", "CUDA_DISABLE_JIT"};
  for (const auto& [label, leftOut] : {std::pair{"all at once, the JIT forced", forbidding}, {"all at once, the JIT forbidden", forcing}}) {
    std::vector<std::string> env;
    std::string names;
    for (const auto& v : wb::cudaEnvironmentVariables())
      if (!stops.count(v.name) && !leftOut.count(v.name)) {
        env.push_back(std::string(v.name) + "=" + sampleOf(v));
        names += std::string(" ") + v.name;
      }
    const std::string children = scratch.path() + "/children-" + std::to_string(leftOut.count("CUDA_FORCE_JIT"));
    env.push_back("WORKBOOK_CHILD_ENVIRONMENTS=" + children);
    const wb::ProcessEnd end = wb::runProcess({program}, env, kRunSeconds);
    std::vector<std::string> problems;
    // Each child's line: its arguments, then "\tNAME=value" per CUDA variable it started with.
    std::ifstream started(children);
    int childCount = 0;
    for (std::string line; std::getline(started, line); ++childCount)
      for (const std::string& setting : env)
        if (controls.count(setting.substr(0, setting.find('='))) && line.find("\t" + setting) != std::string::npos)
          problems.push_back("a child ran with " + setting + ", which the lesson says its children run without: " +
                             line.substr(0, line.find('\t')));
    if (end.code != 0) problems.push_back(ending(end));
    if (end.output.find("this run did not show") != std::string::npos) problems.push_back("it said the run did not show what its page explains");
    for (const std::string& name : noted)
      if (!leftOut.count(name) && end.output.find("Your environment sets " + name + "=") == std::string::npos)
        problems.push_back("no note for " + name);
    const std::string fine = "exit 0, a note for each declared variable" +
                             (childCount ? ", " + std::to_string(childCount) + " children as declared" : std::string());
    std::printf("%s  %-44s %s\n", problems.empty() ? "ok     " : "FAILED ", label, problems.empty() ? fine.c_str() : "");
    for (const auto& p : problems) std::printf("      %s\n", p.c_str());
    if (!problems.empty()) {
      std::printf("      set:%s\n%s", names.c_str(), lastLines(end.output, 12).c_str());
      ++failures;
    }
  }
  std::printf("%s\n", failures ? "FAILED" : "every run ended as the lesson declares");
  return failures ? 1 : 0;
}

// The exercises' bookkeeping, with no CUDA library:
//
//   exercise_report lint <source dir> <NN-name>...
//       every lesson has its exercises: the learner's file (each exercise with its task, its check,
//       where it is taught, the starting body), a check with the same name and title and a hint, a
//       reference solution and a wrong variant for each, and the page section.
//   exercise_report proof <done|failed|not-done> <results dir> <NN> <name,...> [--starting <file>]
//                   -- <check binary> [args]
//       runs a lesson's check binary built against the solutions, the wrong variants or the starting
//       files, and holds it to what that build must show: every exercise done, every one failed,
//       every case not done. A check that passes a wrong variant fails this test.
//   exercise_report progress <results dir> <NN.name=title>...
//       the learner's table: each exercise done / not done / failed / skipped / not run, and the count.
#include "exercise_file.hpp"
#include "process.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, by);)
    if (!item.empty()) out.push_back(item);
  return out;
}

int lint(const fs::path& source, const std::vector<std::string>& lessons) {
  std::vector<std::string> problems;
  int exercises = 0;
  for (const std::string& folder : lessons) {
    const std::string nn = folder.substr(0, 2);
    std::string slug = folder.substr(3);
    for (char& c : slug) c = c == '-' ? '_' : c;
    const fs::path learner = source / "lessons" / folder / "exercises.cpp";
    const fs::path header = source / "lessons" / folder / "exercises.hpp";
    const fs::path check = source / "tests/exercises" / ("exercise" + nn + "_" + slug + ".cpp");
    const fs::path solution = source / "tests/exercises" / folder / "solution.cpp";
    const fs::path wrong = source / "tests/exercises" / folder / "wrong.cpp";
    bool missing = false;
    for (const fs::path& f : {learner, header, check, solution, wrong})
      if (!fs::exists(f)) problems.push_back(folder + ": " + fs::relative(f, source).string() + " is missing"), missing = true;
    if (missing) continue;

    std::vector<std::string> found;
    const auto tasks = wbx::parseExercises(readFile(learner), found);
    const auto checks = wbx::parseChecks(readFile(check), found);
    for (const auto& p : found) problems.push_back(folder + ": " + p);
    if (tasks.size() < 2) problems.push_back(folder + ": " + std::to_string(tasks.size()) + " exercises; a lesson has at least two");
    std::string why;
    if (!wbx::isStartingFile(readFile(learner), why))
      problems.push_back(folder + ": exercises.cpp is not a starting file (" + why + ")");
    std::map<std::string, wbx::CheckText> byName;
    for (const auto& c : checks) byName[c.name] = c;
    const std::string solutionText = readFile(solution), wrongText = readFile(wrong);
    size_t wrongs = 0;
    for (size_t at = 0; (at = wrongText.find("// Wrong: ", at)) != std::string::npos; ++at) ++wrongs;
    for (const auto& t : tasks) {
      const auto c = byName.find(t.name);
      if (c == byName.end()) {
        problems.push_back(folder + ": exercise " + t.name + " has no EXERCISE(\"" + t.name + "\", ...) in " + check.filename().string());
        continue;
      }
      if (c->second.title != t.title)
        problems.push_back(folder + ": " + t.name + "'s title differs between exercises.cpp and its check");
      if (c->second.hint.size() < 20) problems.push_back(folder + ": " + t.name + " has no real hint");
      byName.erase(c);
    }
    for (const auto& [name, c] : byName) problems.push_back(folder + ": check " + name + " has no exercise in exercises.cpp");
    if (wrongs != tasks.size())
      problems.push_back(folder + ": wrong.cpp has " + std::to_string(wrongs) + " \"// Wrong: \" variants for " +
                         std::to_string(tasks.size()) + " exercises");
    if (solutionText.find("namespace ex" + nn) == std::string::npos)
      problems.push_back(folder + ": solution.cpp does not define namespace ex" + nn);
    const std::string page = readFile(source / "lessons" / folder / "lesson.md");
    if (page.find("@EXERCISES@") == std::string::npos)
      problems.push_back(folder + ": lesson.md has no @EXERCISES@ line (where the page's Exercises section goes)");
    exercises += static_cast<int>(tasks.size());
  }
  for (const auto& p : problems) std::printf("%s\n", p.c_str());
  std::printf("%d exercises in %zu lessons; %zu problems\n", exercises, lessons.size(), problems.size());
  return problems.empty() ? 0 : 1;
}

struct Recorded {
  std::string status, title, detail;
  std::vector<std::pair<std::string, std::string>> cases;  // status, name
};

bool readResult(const fs::path& file, Recorded& r) {
  std::ifstream in(file);
  if (!in) return false;
  for (std::string line; std::getline(in, line);) {
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space), value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "status") r.status = value;
    else if (key == "title") r.title = value;
    else if (key == "detail") r.detail = value;
    else if (key == "case") {
      const auto s = value.find(' ');
      r.cases.push_back({value.substr(0, s), value.substr(s + 1)});
    }
  }
  return !r.status.empty();
}

int proof(const std::string& expect, const fs::path& dir, const std::string& nn, const std::vector<std::string>& names,
          const std::string& starting, const std::vector<std::string>& command) {
  if (!starting.empty()) {
    std::string why;
    if (!wbx::isStartingFile(readFile(starting), why)) {
      std::printf("SKIPPED: %s is no longer the starting file (%s): this proof needs the file as shipped "
                  "(git stash or git checkout it to run it)\n", starting.c_str(), why.c_str());
      return 77;
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  const wb::ProcessEnd end = wb::runProcess(command, {"WORKBOOK_EXERCISE_RESULTS=" + dir.string()}, 300);
  std::printf("%s", end.output.c_str());
  if (end.signal || end.timedOut) {
    std::printf("PROOF FAILED: the check binary %s\n", end.timedOut ? "ran past 300 s" : "was killed by a signal");
    return 1;
  }
  int bad = 0, skipped = 0;
  for (const std::string& name : names) {
    Recorded r;
    if (!readResult(dir / (nn + "." + name + ".txt"), r)) {
      std::printf("PROOF FAILED: exercise%s.%s did not run\n", nn.c_str(), name.c_str()), ++bad;
      continue;
    }
    // One GPU cannot check a multi-device exercise either way: allowed, and said.
    if (r.status == "skipped") {
      std::printf("exercise%s.%s skipped: %s\n", nn.c_str(), name.c_str(), r.detail.c_str()), ++skipped;
      continue;
    }
    bool ok = r.status == expect;
    if (expect == "not-done")  // every case must reach the learner's code before it can fail
      for (const auto& c : r.cases) ok = ok && c.first == "not-done";
    if (!ok) {
      std::printf("PROOF FAILED: exercise%s.%s is %s, expected %s\n", nn.c_str(), name.c_str(), r.status.c_str(), expect.c_str());
      for (const auto& c : r.cases) std::printf("  case %s: %s\n", c.second.c_str(), c.first.c_str());
      ++bad;
    }
  }
  if (bad) return 1;
  std::printf("proof holds: %zu exercises %s%s\n", names.size() - skipped, expect.c_str(),
              skipped ? (", " + std::to_string(skipped) + " skipped (see above)").c_str() : "");
  return 0;
}

int progress(const fs::path& dir, const std::vector<std::string>& entries) {
  int done = 0, ran = 0;
  std::printf("\n%-36s %-9s %s\n", "exercise", "status", "title");
  for (const std::string& entry : entries) {
    const auto eq = entry.find('=');
    const std::string id = entry.substr(0, eq), title = entry.substr(eq + 1);
    Recorded r;
    const bool have = readResult(dir / (id + ".txt"), r);
    const std::string status = have ? (r.status == "not-done" ? "not done" : r.status) : "not run";
    done += status == "done", ran += have;
    std::printf("exercise%-28s %-9s %s\n", id.c_str(), status.c_str(), title.c_str());
    if (status == "failed") std::printf("%46s%s\n", "", r.detail.c_str());
  }
  std::printf("\n%d of %zu done (%d checked in this run)\n", done, entries.size(), ran);
  return 0;
}

int usage() {
  std::fprintf(stderr, "usage: exercise_report lint <source dir> <NN-name>...\n"
                       "       exercise_report proof <done|failed|not-done> <results dir> <NN> <names> [--starting <file>] -- <binary> [args]\n"
                       "       exercise_report progress <results dir> <NN.name=title>...\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "lint") return lint(args[1], {args.begin() + 2, args.end()});
  if (args.size() >= 2 && args[0] == "progress") return progress(args[1], {args.begin() + 2, args.end()});
  if (args.size() >= 6 && args[0] == "proof") {
    std::string starting;
    size_t i = 5;
    if (args[i] == "--starting" && i + 1 < args.size()) starting = args[i + 1], i += 2;
    if (i >= args.size() || args[i] != "--" || i + 1 >= args.size()) return usage();
    if (args[1] != "done" && args[1] != "failed" && args[1] != "not-done") return usage();
    return proof(args[1], args[2], args[3], split(args[4], ','), starting, {args.begin() + i + 1, args.end()});
  }
  return usage();
}

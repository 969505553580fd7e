// The exercises' bookkeeping, with no CUDA library:
//
//   exercise_report lint <source dir> <NN-name>...
//       every lesson has its exercises: the learner's file (each exercise with its task, its numbered
//       requirements, its check, where it is taught, the starting body), a check with the same name
//       and title and a hint, a reference solution and at least three wrong variants for each, and
//       the page section. Every checked requirement is named by a case of the check and by a wrong
//       variant; every case (but a child case) and every variant names checked requirements.
//   exercise_report proof <done|not-done> <results dir> <NN> <name,...> [--starting <file>]
//                   -- <check binary> [args]
//       runs a lesson's check binary built against the solutions or the starting files, and holds
//       it to what that build must show: every exercise done, or every case not done.
//   exercise_report wrong <results dir> <NN> <wrong folder> [--only|--except <exercise>,...] [--one-at-a-time]
//                   -- <exercise>.<n>=<binary>...
//       runs each wrong variant's binary on its own exercise's check, which must fail or crash:
//       a variant that is done or not done is a mistake the check lets through. Prints one line per
//       variant and the count: variants, caught, skipped (those only two devices catch, on a machine
//       with one). --only and --except choose the exercises whose variants this run is for (a
//       lesson's checks that measure time or free memory are proven apart, one variant at a time).
//   exercise_report summary [--source <dir>] <proof results dir> <NN>-wrong[-serial]...
//       after the proofs: every lesson's count of variants, caught, skipped, missed, and the total;
//       with --source, its requirements too: how many, checked, not checked.
#include "exercise_file.hpp"
#include "process.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
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

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// A wrong variant, as its file states it: "// Wrong (R3): <the mistake>" first, naming the
// requirements it breaks, and a line "// Two devices: <why>" where only a machine with two GPUs can
// tell it from the solution.
struct Variant {
  std::string id, exercise, mistake, twoDevices;  // id: <exercise>.<n>
  std::vector<int> requirements;
  int number = 0;
};

bool readVariant(const fs::path& file, Variant& v, std::string& why) {
  const std::string name = file.filename().string();
  char exercise[128] = {0};
  int used = 0;
  if (std::sscanf(name.c_str(), "%127[a-z0-9-].%d.cpp%n", exercise, &v.number, &used) < 2 ||
      static_cast<size_t>(used) != name.size() || v.number < 1)
    return why = name + ": a wrong variant is named <exercise>.<n>.cpp", false;
  v.exercise = exercise, v.id = v.exercise + "." + std::to_string(v.number);
  std::ifstream in(file);
  std::string line;
  const bool read = static_cast<bool>(std::getline(in, line));
  const size_t close = line.find("): ");
  if (read && line.rfind("// Wrong (", 0) == 0 && close != std::string::npos)
    v.requirements = wbx::detail::requirementTags(line.substr(10, close - 10) + ": ");
  if (v.requirements.empty() || line.size() < close + 20)
    return why = name + ": its first line must name the requirements it breaks and say the mistake: \"// Wrong (R3): ...\"", false;
  v.mistake = line.substr(close + 3);
  while (std::getline(in, line) && line.rfind("//", 0) == 0)
    if (line.rfind("// Two devices: ", 0) == 0) v.twoDevices = line.substr(16);
  return true;
}

std::vector<Variant> readVariants(const fs::path& folder, std::vector<std::string>& problems) {
  std::vector<Variant> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    Variant v;
    std::string why;
    if (entry.path().extension() != ".cpp") continue;
    if (readVariant(entry.path(), v, why))
      out.push_back(v);
    else
      problems.push_back(why);
  }
  std::sort(out.begin(), out.end(), [](const Variant& a, const Variant& b) {
    return a.exercise != b.exercise ? a.exercise < b.exercise : a.number < b.number;
  });
  return out;
}

// Each exercise has its solution (solution/<x>.cpp) and at least three wrong variants
// (wrong/<x>.1.cpp, .2, ...), each a different mistake said in its first line.
void lintAnswers(const std::string& folder, const std::string& nn, const fs::path& answers,
                 const std::vector<wbx::ExerciseText>& tasks, std::vector<std::string>& problems) {
  std::map<std::string, std::vector<int>> numbers;
  std::vector<std::string> found;
  for (const Variant& v : readVariants(answers / "wrong", found)) numbers[v.exercise].push_back(v.number);
  for (const auto& p : found) problems.push_back(folder + ": wrong/" + p);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(answers / "solution", ec)) {
    const std::string stem = entry.path().stem().string();
    bool known = false;
    for (const auto& t : tasks) known = known || t.name == stem;
    if (!known) problems.push_back(folder + ": solution/" + entry.path().filename().string() + " is no exercise's solution");
  }
  for (const auto& t : tasks) {
    const fs::path solution = answers / "solution" / (t.name + ".cpp");
    if (!fs::exists(solution))
      problems.push_back(folder + ": " + t.name + " has no reference solution (solution/" + t.name + ".cpp)");
    else if (readFile(solution).find("namespace ex" + nn) == std::string::npos)
      problems.push_back(folder + ": solution/" + t.name + ".cpp does not define namespace ex" + nn);
    std::vector<int>& n = numbers[t.name];
    if (n.size() < 3)
      problems.push_back(folder + ": " + t.name + " has " + std::to_string(n.size()) + " wrong variants; an exercise has at least three");
    for (size_t k = 0; k < n.size(); ++k)
      if (n[k] != static_cast<int>(k + 1))
        problems.push_back(folder + ": " + t.name + "'s wrong variants are not numbered 1 to " + std::to_string(n.size())), k = n.size();
    numbers.erase(t.name);
  }
  for (const auto& [name, n] : numbers)
    problems.push_back(folder + ": wrong/" + name + ".*.cpp: no exercise is named " + name);
  for (const char* old : {"solution.cpp", "wrong.cpp"})
    if (fs::exists(answers / old)) problems.push_back(folder + ": " + old + " is left over: solutions are solution/<exercise>.cpp");
}

// Each requirement a task numbers is checked or says why not; each checked one is named by a case
// of the check and by at least one wrong variant; each case (but a child case) and each variant
// names only checked requirements of its exercise.
void lintRequirements(const std::string& folder, const fs::path& answers, const std::string& checkText,
                      const std::vector<wbx::ExerciseText>& tasks, std::vector<std::string>& problems) {
  std::vector<std::string> ignored;
  const std::vector<Variant> variants = readVariants(answers / "wrong", ignored);
  const std::vector<wbx::CheckCase> cases = wbx::parseCheckCases(checkText);
  for (const auto& t : tasks) {
    std::map<int, const wbx::Requirement*> byNumber;
    for (const auto& r : t.requirements) byNumber[r.number] = &r;
    const auto tagged = [&](const std::vector<int>& tags, const std::string& who) {
      for (int n : tags) {
        const auto r = byNumber.find(n);
        if (r == byNumber.end())
          problems.push_back(folder + ": " + who + " names R" + std::to_string(n) + ", which " + t.name + " does not have");
        else if (!r->second->checked)
          problems.push_back(folder + ": " + who + " names R" + std::to_string(n) + ", which " + t.name + " says is not checked");
      }
    };
    std::map<int, int> inCases, inVariants;
    for (const auto& c : cases) {
      if (c.exercise != t.name || c.child) continue;
      const std::string who = "check case \"" + c.name + "\" (line " + std::to_string(c.line) + ")";
      if (c.requirements.empty()) problems.push_back(folder + ": " + who + " names no requirement (\"R1 R2: ...\")");
      tagged(c.requirements, who);
      for (int n : c.requirements) ++inCases[n];
    }
    for (const auto& v : variants) {
      if (v.exercise != t.name) continue;
      tagged(v.requirements, "wrong/" + v.id + ".cpp");
      for (int n : v.requirements) ++inVariants[n];
    }
    for (const auto& r : t.requirements) {
      if (!r.checked) continue;
      const std::string id = t.name + " R" + std::to_string(r.number);
      if (!inCases[r.number]) problems.push_back(folder + ": " + id + " is checked by no case (name it in one, or say why it is not checked)");
      if (!inVariants[r.number]) problems.push_back(folder + ": " + id + " is broken by no wrong variant (\"// Wrong (R" + std::to_string(r.number) + "): ...\")");
    }
  }
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
    const fs::path answers = source / "tests/exercises" / folder;
    bool missing = false;
    for (const fs::path& f : {learner, header, check, answers / "solution", answers / "wrong"})
      if (!fs::exists(f)) problems.push_back(folder + ": " + fs::relative(f, source).string() + " is missing"), missing = true;
    if (missing) continue;

    std::vector<std::string> found;
    const auto tasks = wbx::parseExercises(readFile(learner), found);
    const auto checks = wbx::parseChecks(readFile(check), found);
    for (const auto& p : found) problems.push_back(folder + ": " + p);
    if (tasks.size() < 2) problems.push_back(folder + ": " + std::to_string(tasks.size()) + " exercises; a lesson has at least two");
    std::string why;
    const std::string learnerText = readFile(learner);
    if (!wbx::isStartingFile(learnerText, why))
      problems.push_back(folder + ": exercises.cpp is not a starting file (" + why + ")");
    // The course has one exercise command (README, every page, the runner): the file's first line too.
    const std::string command = "cmake --build build --target exercises-" + nn;
    if (learnerText.substr(0, learnerText.find('\n')).find(command) == std::string::npos)
      problems.push_back(folder + ": exercises.cpp's first line does not say the exercise command, " + command);
    std::map<std::string, wbx::CheckText> byName;
    for (const auto& c : checks) byName[c.name] = c;
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
    lintAnswers(folder, nn, answers, tasks, problems);
    lintRequirements(folder, answers, readFile(check), tasks, problems);
    const std::string page = readFile(source / "lessons" / folder / "lesson.md");
    if (page.find("@EXERCISES@") == std::string::npos)
      problems.push_back(folder + ": lesson.md has no @EXERCISES@ line (where the page's Exercises section goes)");
    exercises += static_cast<int>(tasks.size());
  }
  for (const auto& p : problems) std::printf("%s\n", p.c_str());
  std::printf("%d exercises in %zu lessons; %zu problems\n", exercises, lessons.size(), problems.size());
  return problems.empty() ? 0 : 1;
}

using wbx::Recorded;
using wbx::readResult;

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
    // Every case must reach the learner's code before it can fail; a case this machine cannot run
    // (the device-1 part, on one GPU) says skipped before it gets there.
    if (expect == "not-done")
      for (const auto& c : r.cases) ok = ok && (c.first == "not-done" || c.first == "skipped");
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

// Runs every wrong variant's binary on its own exercise's check. Caught: the check failed, or the
// binary crashed or hung (ended by its time limit). Not caught: done (the check let the mistake
// through) or not done (the variant is incomplete). Skipped: only where the variant says that two
// devices are needed to see its mistake, and the check skipped for want of them.
struct Part {
  std::vector<std::string> only, except;  // exercises whose variants are (not) this run's
  bool oneAtATime = false;
  bool has(const std::string& exercise) const {
    const auto in = [&](const std::vector<std::string>& l) { return std::find(l.begin(), l.end(), exercise) != l.end(); };
    return (only.empty() || in(only)) && !in(except);
  }
};

// A doctest filter for the cases that name one of these requirements: a case's name begins with the
// requirements it verifies, "R1 R4: ..." (exercises.lint holds every case to it), so R4 is first
// ("R4:*", "R4 *"), last of several ("* R4:*") or between ("* R4 *"). A description that happened
// to hold " R4 " would only add a case that runs in vain; "R14" matches no pattern of R1.
std::string ownCases(const std::vector<int>& requirements) {
  std::string filter;
  for (int n : requirements) {
    const std::string r = "R" + std::to_string(n);
    for (const std::string& pattern : {r + ":*", r + " *", "* " + r + ":*", "* " + r + " *"})
      filter += (filter.empty() ? "" : ",") + pattern;
  }
  return filter;
}

int wrong(const fs::path& dir, const std::string& nn, const fs::path& folder, const Part& part,
          const std::vector<std::string>& binaries) {
  std::vector<std::string> problems;
  std::map<std::string, Variant> byId;
  for (const Variant& v : readVariants(folder, problems))
    if (part.has(v.exercise)) byId[v.id] = v;
  for (const auto& p : problems) std::printf("PROOF FAILED: %s\n", p.c_str());
  std::error_code ec;
  fs::remove_all(dir, ec);

  // Each variant's check runs in a process of its own. Many wait for something (a gate's deadline
  // that only a wrong variant meets, children that fault): four run at once, and the lines are
  // printed in the variants' order afterwards. Checks that measure free memory or time run one at
  // a time (--one-at-a-time), in a ctest test that has the GPU to itself.
  struct Run {
    std::string id, binary;
    const Variant* variant = nullptr;
    wb::ProcessEnd end;
    double seconds = 0;
  };
  std::vector<Run> runs;
  int missed = 0;
  for (const std::string& arg : binaries) {
    const auto eq = arg.find('=');
    const std::string id = arg.substr(0, eq);
    const auto known = byId.find(id);
    if (eq == std::string::npos || known == byId.end()) {
      std::printf("PROOF FAILED: %s is not a variant in %s\n", arg.c_str(), folder.c_str()), ++missed;
      continue;
    }
    runs.push_back({id, arg.substr(eq + 1), &known->second, {}, 0});
  }
  const auto check = [&](Run& run) {
    const fs::path results = dir / run.id;
    std::error_code made;
    fs::create_directories(results, made);
    const auto start = std::chrono::steady_clock::now();
    // The verdict is whether a case of the variant's own requirements fails: a case of another
    // requirement cannot make it caught, so only those cases run (ownCases). The first failed
    // assertion settles it: the rest (gates a wrong variant runs to their deadline, further cases)
    // would only cost time. So does a case that threw (check_main.cpp counts it as a failed
    // assertion under --abort-after).
    run.end = wb::runProcess({run.binary, "--test-suite=" + run.variant->exercise,
                              "--test-case=" + ownCases(run.variant->requirements), "--abort-after=1"},
                             {"WORKBOOK_EXERCISE_RESULTS=" + results.string()}, 120);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const unsigned workers = part.oneAtATime ? 1 : 4;
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w)
    threads.emplace_back([&] {
      for (size_t i; (i = next++) < runs.size();) check(runs[i]);
    });
  for (auto& t : threads) t.join();

  int caught = 0, skipped = 0;
  for (const Run& run : runs) {
    const Variant& v = *run.variant;
    const wb::ProcessEnd& end = run.end;
    Recorded r;
    const bool have = readResult(dir / run.id / (nn + "." + v.exercise + ".txt"), r);
    std::string verdict, detail = r.detail;
    if (end.signal || end.timedOut)
      verdict = "caught", detail = end.timedOut ? "the check hung and was ended at 120 s" : "the check crashed (signal " + std::to_string(end.signal) + ")";
    else if (!have)
      verdict = end.code != 0 ? "caught" : "MISSED", detail = "exit " + std::to_string(end.code) + " without a result";
    else if (r.status == "failed") {
      // Caught by its own requirement's case: a failed case names one of the requirements the
      // variant says it breaks (a variant caught only elsewhere breaks more than it says).
      std::vector<int> failedTags;
      for (const auto& [status, name] : r.cases)
        if (status == "failed")
          for (int n : wbx::detail::requirementTags(name)) failedTags.push_back(n);
      const bool onTarget = std::any_of(failedTags.begin(), failedTags.end(), [&](int n) {
        return std::find(v.requirements.begin(), v.requirements.end(), n) != v.requirements.end();
      });
      verdict = onTarget ? "caught" : "MISSED";
      if (!onTarget)
        detail = "it failed only cases of other requirements (" +
                 (failedTags.empty() ? std::string("none named") : wbx::detail::tagText(failedTags)) + ")";
    }
    else if ((r.status == "skipped" || (r.status == "done" && !r.partlySkipped.empty())) && !v.twoDevices.empty())
      verdict = "skipped", detail = r.status == "skipped" ? r.detail : r.partlySkipped;
    else
      verdict = "MISSED", detail = "the check says " + r.status + (r.status == "skipped" ? " (" + r.detail + ")" : "");
    caught += verdict == "caught", skipped += verdict == "skipped", missed += verdict == "MISSED";
    std::printf("%-8s wrong/%s.cpp (%.1f s), breaks %s: %s\n", verdict.c_str(), run.id.c_str(), run.seconds,
                wbx::detail::tagText(v.requirements).c_str(), v.mistake.c_str());
    if (verdict != "caught" || !detail.empty()) std::printf("         %s\n", detail.c_str());
    if (verdict == "MISSED") std::printf("%s", end.output.c_str());
    byId.erase(run.id);
  }
  for (const auto& [id, v] : byId) std::printf("PROOF FAILED: wrong/%s.cpp was not built\n", id.c_str()), ++missed;
  const int total = caught + skipped + missed;
  std::printf("\nlesson %s%s: %d variants, %d caught, %d skipped (two devices needed), %d missed\n", nn.c_str(),
              part.only.empty() ? "" : (" (" + join(part.only) + ")").c_str(), total, caught, skipped, missed);
  std::ofstream(dir / "summary.txt") << "lesson " << nn << " variants " << total << " caught " << caught << " skipped "
                                     << skipped << " missed " << missed << "\n";
  if (total == 0) std::printf("PROOF FAILED: lesson %s has no wrong variants\n", nn.c_str());
  return missed || !problems.empty() || total == 0 ? 1 : 0;
}

// After every lesson's proofNN.wrong (and proofNN.wrong-serial): the course's count, from their
// summary files, each named by its results folder (NN-wrong, NN-wrong-serial).
// "12 requirements (11 checked, 1 not checked), " for {all, checked}.
std::string requirementsText(const std::array<long, 2>& r) {
  return std::to_string(r[0]) + " requirements (" + std::to_string(r[1]) + " checked, " +
         std::to_string(r[0] - r[1]) + " not checked), ";
}

// A lesson's requirements, read from its learner's file: {all, checked}.
std::array<long, 2> requirementsOf(const fs::path& source, const std::string& nn) {
  std::array<long, 2> count{};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(source / "lessons", ec)) {
    const std::string folder = entry.path().filename().string();
    if (folder.rfind(nn + "-", 0) != 0) continue;
    std::vector<std::string> ignored;
    for (const auto& t : wbx::parseExercises(readFile(entry.path() / "exercises.cpp"), ignored))
      for (const auto& r : t.requirements) ++count[0], count[1] += r.checked;
  }
  return count;
}

int summary(const fs::path& dir, const std::vector<std::string>& parts, const fs::path& source) {
  std::map<std::string, std::array<long, 4>> lessons;  // variants, caught, skipped, missed
  size_t read = 0;
  for (const std::string& name : parts) {
    const std::string nn = name.substr(0, name.find('-'));
    std::ifstream in(dir / name / "summary.txt");
    std::string word, lesson;
    long v = 0, c = 0, s = 0, m = 0;
    if (!(in >> word >> lesson >> word >> v >> word >> c >> word >> s >> word >> m)) {
      std::printf("lesson %s: no result (its proof%s.%s did not run)\n", nn.c_str(), nn.c_str(),
                  name.substr(nn.size() + 1).c_str());
      continue;
    }
    ++read;
    auto& t = lessons[nn];
    t[0] += v, t[1] += c, t[2] += s, t[3] += m;
  }
  if (read == 0) {
    std::printf("SKIPPED: no proofNN.wrong ran (they need a GPU)\n");
    return 77;
  }
  std::array<long, 4> totals{};
  std::array<long, 2> required{};
  for (const auto& [nn, t] : lessons) {
    std::string requirements;
    if (!source.empty()) {
      const auto r = requirementsOf(source, nn);
      requirements = requirementsText(r);
      required[0] += r[0], required[1] += r[1];
    }
    std::printf("lesson %s: %s%ld variants, %ld caught, %ld skipped, %ld missed\n", nn.c_str(), requirements.c_str(),
                t[0], t[1], t[2], t[3]);
    for (int i = 0; i < 4; ++i) totals[i] += t[i];
  }
  std::printf("\n%zu lessons: %s%ld wrong variants, %ld caught, %ld skipped (two devices needed), %ld missed\n",
              lessons.size(), source.empty() ? "" : requirementsText(required).c_str(), totals[0], totals[1],
              totals[2], totals[3]);
  return totals[3] || read != parts.size() ? 1 : 0;
}

int usage() {
  std::fprintf(stderr, "usage: exercise_report lint <source dir> <NN-name>...\n"
                       "       exercise_report proof <done|not-done> <results dir> <NN> <names> [--starting <file>] -- <binary> [args]\n"
                       "       exercise_report wrong <results dir> <NN> <wrong folder> [--only|--except <exercise>,...] [--one-at-a-time] -- <exercise>.<n>=<binary>...\n"
                       "       exercise_report summary [--source <dir>] <proof results dir> <NN>-wrong[-serial]...\n"
);
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "lint") return lint(args[1], {args.begin() + 2, args.end()});
  if (args.size() >= 6 && args[0] == "proof") {
    std::string starting;
    size_t i = 5;
    if (args[i] == "--starting" && i + 1 < args.size()) starting = args[i + 1], i += 2;
    if (i >= args.size() || args[i] != "--" || i + 1 >= args.size()) return usage();
    if (args[1] != "done" && args[1] != "not-done") return usage();
    return proof(args[1], args[2], args[3], split(args[4], ','), starting, {args.begin() + i + 1, args.end()});
  }
  if (args.size() >= 4 && args[0] == "summary" && args[1] == "--source")
    return summary(args[3], {args.begin() + 4, args.end()}, args[2]);
  if (args.size() >= 2 && args[0] == "summary") return summary(args[1], {args.begin() + 2, args.end()}, "");
  if (args.size() >= 5 && args[0] == "wrong") {
    Part part;
    size_t i = 4;
    for (; i < args.size() && args[i] != "--"; ++i) {
      if (args[i] == "--one-at-a-time")
        part.oneAtATime = true;
      else if ((args[i] == "--only" || args[i] == "--except") && i + 1 < args.size())
        (args[i] == "--only" ? part.only : part.except) = split(args[i + 1], ','), ++i;
      else
        return usage();
    }
    if (i < args.size()) return wrong(args[1], args[2], args[3], part, {args.begin() + i + 1, args.end()});
  }
  return usage();
}

// exercise-runner: what `cmake --build build --target exercises-05` (one lesson) and
// `--target exercises` (all) run once the learner's code has compiled. Links no CUDA library.
//
//   exercise-runner <source dir> <results dir> <gpu launcher> [--only NN] -- <NN-name>=<checks binary>...
//
// It checks each exercise of the lessons asked for (through the GPU launcher, as ctest does) and
// prints one verdict each: done; not done, with the check's hint; FAILED, with the requirements of
// the task that the failed cases verify, the first failed assertion and its message; skipped, with
// the reason. Then, last, the progress table of every
// lesson: which exercises are done, failed, started (edited, not done yet) or untouched, and the
// count. Without a usable GPU it says once that the code compiled and why the checks cannot run,
// and prints the table. Exit code 1 while a checked exercise failed, 0 otherwise.
#include "exercise_file.hpp"
#include "process.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
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

struct Lesson {
  std::string folder, nn, binary;
  std::vector<wbx::ExerciseText> exercises;
  std::map<std::string, std::string> hints;
  std::set<std::string> started;
  fs::file_time_type edited;  // when the learner's file was last written
};

Lesson readLesson(const fs::path& source, const std::string& folder, const std::string& binary) {
  Lesson l;
  l.folder = folder, l.nn = folder.substr(0, 2), l.binary = binary;
  const fs::path learner = source / "lessons" / folder / "exercises.cpp";
  std::string slug = folder.substr(3);
  for (char& c : slug) c = c == '-' ? '_' : c;
  std::vector<std::string> problems;
  const std::string text = readFile(learner);
  l.exercises = wbx::parseExercises(text, problems);
  for (const auto& c : wbx::parseChecks(readFile(source / "tests/exercises" / ("exercise" + l.nn + "_" + slug + ".cpp")), problems))
    l.hints[c.name] = c.hint;
  for (const auto& name : wbx::startedExercises(text)) l.started.insert(name);
  std::error_code ec;
  l.edited = fs::last_write_time(learner, ec);
  return l;
}

// The GPU launcher's verdict: whether checks can run here, and why not.
bool gpuUsable(const std::string& launcher, const fs::path& results, std::string& why) {
  const fs::path file = results / "probe.txt";
  const wb::ProcessEnd end = wb::runProcess({launcher, "--write-probe", file.string()}, {}, 60);
  std::ifstream in(file);
  int verdict = -1, devices = 0;
  if (end.code != 0 || !(in >> verdict >> devices)) {
    why = "the GPU launcher could not probe the driver: " + end.output;
    return false;
  }
  in.ignore(1);
  std::getline(in, why);
  return verdict == 0;
}

// One exercise's last recorded result, if it is newer than the learner's last edit.
bool currentResult(const Lesson& l, const std::string& name, const fs::path& results, wbx::Recorded& r) {
  const fs::path file = results / (l.nn + "." + name + ".txt");
  std::error_code ec;
  const auto recorded = fs::last_write_time(file, ec);
  return !ec && recorded >= l.edited && wbx::readResult(file.string(), r);
}

std::string wrapped(const std::string& text, size_t indent, size_t width = 100) {
  std::string out, line;
  std::stringstream words(text);
  for (std::string w; words >> w;) {
    if (!line.empty() && indent + line.size() + 1 + w.size() > width) out += std::string(indent, ' ') + line + "\n", line.clear();
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

// Runs one lesson's checks, one exercise at a time, and prints a verdict for each; false if one failed.
bool check(const Lesson& l, const std::string& launcher, const fs::path& results) {
  std::printf("Lesson %s (%s): %zu exercises in lessons/%s/exercises.cpp\n", l.nn.c_str(), l.folder.c_str() + 3,
              l.exercises.size(), l.folder.c_str());
  bool ok = true;
  for (const auto& e : l.exercises) {
    const wb::ProcessEnd end =
        wb::runProcess({launcher, "--probe-file", (results / "probe.txt").string(), "--", l.binary, "--test-suite=" + e.name},
                       {"WORKBOOK_EXERCISE_RESULTS=" + results.string()}, 600);
    wbx::Recorded r;
    const bool have = wbx::readResult((results / (l.nn + "." + e.name + ".txt")).string(), r);
    std::string status = have ? r.status : "failed";
    if (!have) {
      r.detail = end.timedOut ? "the check ran past 600 s and was ended"
                 : end.signal ? "the check crashed (signal " + std::to_string(end.signal) + ")"
                              : "the check ended with exit code " + std::to_string(end.code) + " and no verdict";
      std::ofstream(results / (l.nn + "." + e.name + ".txt")) << "status failed\ndetail " << r.detail << "\n";
    }
    const char* word = status == "done" ? "done" : status == "not-done" ? "not done" : status == "skipped" ? "skipped" : "FAILED";
    std::printf("  %-9s %s: %s\n", word, e.name.c_str(), e.title.c_str());
    if (status == "not-done") {
      const auto hint = l.hints.find(e.name);
      if (hint != l.hints.end()) std::printf("%s", wrapped("hint: " + hint->second, 12).c_str());
    } else if (status == "failed") {
      ok = false;
      // The requirements of the task that the failed cases verify, in the task's words.
      std::set<int> broken;
      for (const auto& [caseStatus, name] : r.cases)
        if (caseStatus == "failed")
          for (int n : wbx::detail::requirementTags(name)) broken.insert(n);
      for (const auto& req : e.requirements)
        if (broken.count(req.number))
          std::printf("%s", wrapped("a failed case verifies R" + std::to_string(req.number) + ": " + req.text, 12).c_str());
      std::printf("%s", wrapped(r.detail, 12).c_str());
      for (const auto& c : r.context) std::printf("%s", wrapped(c, 12).c_str());
    } else if (status == "skipped") {
      std::printf("%s", wrapped(r.detail, 12).c_str());
    } else if (status == "done" && !r.partlySkipped.empty()) {
      std::printf("%s", wrapped("not checked here: " + r.partlySkipped, 12).c_str());
    }
  }
  std::printf("\n");
  return ok;
}

// The table, last: one row per lesson, one word per exercise in the file's order.
void progress(const std::vector<Lesson>& lessons, const fs::path& results) {
  int total = 0, done = 0, started = 0, failed = 0;
  std::string rows;
  for (const Lesson& l : lessons) {
    std::string row = "  " + l.folder;
    row.resize(32, ' ');
    for (const auto& e : l.exercises) {
      wbx::Recorded r;
      const bool have = currentResult(l, e.name, results, r);
      const bool edited = l.started.count(e.name) > 0;
      std::string word = !edited ? "-" : !have ? "started" : r.status == "done" ? "done" : r.status == "failed" ? "FAILED"
                                                       : r.status == "skipped" ? "skipped" : "started";
      ++total, done += word == "done", started += edited, failed += word == "FAILED";
      row += word;
      row.resize(row.size() + (word.size() < 9 ? 9 - word.size() : 1), ' ');
    }
    rows += row.substr(0, row.find_last_not_of(' ') + 1) + "\n";
  }
  std::printf("Progress: %d of %d exercises done, %d started%s\n%s", done, total, started,
              failed ? (", " + std::to_string(failed) + " FAILED").c_str() : "", rows.c_str());
  std::printf("  (one word per exercise, in its file's order: done; FAILED; started: edited, not done or not checked "
              "since; -: untouched)\n");
}

int usage() {
  std::fprintf(stderr, "usage: exercise-runner <source dir> <results dir> <gpu launcher> [--only NN] -- <NN-name>=<checks binary>...\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 4) return usage();
  const fs::path source = args[0], results = args[1];
  const std::string launcher = args[2];
  std::string only;
  size_t i = 3;
  if (args[i] == "--only" && i + 1 < args.size()) only = args[i + 1], i += 2;
  if (i >= args.size() || args[i] != "--") return usage();
  std::vector<Lesson> lessons;
  for (++i; i < args.size(); ++i) {
    const auto eq = args[i].find('=');
    if (eq == std::string::npos) return usage();
    lessons.push_back(readLesson(source, args[i].substr(0, eq), args[i].substr(eq + 1)));
  }
  std::error_code ec;
  fs::create_directories(results, ec);

  std::string why;
  bool ok = true;
  if (!gpuUsable(launcher, results, why)) {
    std::printf("%s compiled. Their checks need a GPU, and this machine has none they can use:\n%s"
                "On a machine with the NVIDIA driver and a CUDA device, the same command checks them.\n\n",
                only.empty() ? "Your exercises" : ("Lesson " + only + "'s exercises").c_str(), wrapped(why, 2).c_str());
  } else {
    for (const Lesson& l : lessons)
      if (only.empty() || l.nn == only) ok = check(l, launcher, results) && ok;
  }
  progress(lessons, results);
  return ok ? 0 : 1;
}

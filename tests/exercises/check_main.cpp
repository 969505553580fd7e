// The main() of every exercise check binary, and its reporter.
//
// It runs the doctest cases like any suite, but reports per exercise (one TEST_SUITE each):
//   done       every case passed
//   not done   a case reached a function that still throws wb::NotDone: its hint is printed
//   failed     an assertion failed or the code threw: the first failure is printed
//   skipped    the machine cannot check it (two devices needed, say)
// and writes one file per exercise to $WORKBOOK_EXERCISE_RESULTS (the progress table and the
// proofs read them). Exit code: 0 when every exercise that ran is done; 77 (ctest: skipped) when
// the rest were skipped; 1 when any failed or is not done (ctest shows it as failed, with its hint).
#define DOCTEST_CONFIG_IMPLEMENT
#include "check.hpp"
#include "exercise_file.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace wbx {

namespace {
std::map<std::string, ExerciseInfo>& registry() {
  static std::map<std::string, ExerciseInfo> exercises;
  return exercises;
}
}  // namespace

bool registerExercise(const char* lesson, const char* name, const char* title, const char* hint) {
  registry()[name] = {lesson, name, title, hint};
  return true;
}

const ExerciseInfo* findExercise(const std::string& name) {
  const auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

void needDevices(int count) {
  int have = 0;
  CU_CHECK(cuInit(0));
  CU_CHECK(cuDeviceGetCount(&have));
  if (have < count)
    throw Skipped("needs " + std::to_string(count) + " CUDA devices, this machine has " + std::to_string(have));
}

std::vector<CUcontext> contextStack() {
  std::vector<CUcontext> stack;
  for (CUcontext top = wbt::current(); top; top = wbt::current()) {
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
    stack.push_back(popped);
  }
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) CU_CHECK(cuCtxPushCurrent(*it));
  return stack;
}

ChildResult runInChild(const std::string& testCase, unsigned limitSeconds) {
  const wb::ProcessEnd end = wb::runProcess({wb::selfPath(), "--test-case=" + testCase, "--no-version"},
                                            {"WORKBOOK_CHILD=1", "WORKBOOK_EXERCISE_RESULTS"}, limitSeconds);
  const size_t at = end.output.find("NOT DONE: ");
  if (at != std::string::npos) {
    const size_t from = at + 10, to = end.output.find(' ', from);
    throw wb::NotDone(end.output.substr(from, to - from));
  }
  return {end.signal != 0, end.timedOut, end.code, end.output};
}

}  // namespace wbx

namespace {

enum class Status { Done, NotDone, Failed, Skipped };
const char* statusWord(Status s) {
  switch (s) {
    case Status::Done: return "done";
    case Status::NotDone: return "not-done";
    case Status::Failed: return "failed";
    case Status::Skipped: return "skipped";
  }
  return "?";
}

struct CaseResult {
  std::string name;
  Status status = Status::Done;
  std::string detail;                // the first failure, the NOT DONE message or the skip reason
  std::vector<std::string> context;  // the first failure's messages (CHECK_MESSAGE, INFO, CAPTURE)
};

struct ExerciseResult {
  std::vector<CaseResult> cases;
  // Done when every case that could run here passed: a case this machine cannot run (the device-1
  // part, on one GPU) is said (partlySkipped), so one GPU can still finish an exercise. Skipped only
  // when no case could run.
  Status status() const {
    bool notDone = false, ran = false;
    for (const auto& c : cases) {
      if (c.status == Status::Failed) return Status::Failed;
      notDone = notDone || c.status == Status::NotDone;
      ran = ran || c.status != Status::Skipped;
    }
    return notDone ? Status::NotDone : ran ? Status::Done : Status::Skipped;
  }
  std::string partlySkipped() const {  // why some cases of a done exercise did not run
    if (status() != Status::Done) return "";
    for (const auto& c : cases)
      if (c.status == Status::Skipped) return c.name + ": " + c.detail;
    return "";
  }
  const CaseResult* first() const {  // the case that gives the exercise its status
    const Status s = status();
    for (const auto& c : cases)
      if (c.status == s) return &c;
    return nullptr;
  }
  std::string detail() const { return first() ? first()->detail : ""; }
};

std::map<std::string, ExerciseResult> results;  // by exercise (suite) name, in name order
std::vector<std::string> order;                  // in the order they ran

// Prints failures as they happen (file:line, the expression, its values, the INFO/CAPTURE context),
// MESSAGE lines, and a verdict per exercise at the end.
struct Reporter : public doctest::IReporter {
  explicit Reporter(const doctest::ContextOptions&) {}
  CaseResult* current = nullptr;

  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_case_start(const doctest::TestCaseData& data) override {
    const std::string suite = data.m_test_suite;
    if (!results.count(suite)) order.push_back(suite);
    results[suite].cases.push_back({data.m_name, Status::Done, "", {}});
    current = &results[suite].cases.back();
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override { current = nullptr; }
  void test_case_exception(const doctest::TestCaseException& e) override {
    if (!current) return;
    const std::string text = e.error_string.c_str();
    if (text.rfind("NOT DONE: ", 0) == 0) {
      if (current->status == Status::Done) current->status = Status::NotDone, current->detail = text;
      return;
    }
    if (text.rfind("SKIPPED: ", 0) == 0) {
      if (current->status == Status::Done) current->status = Status::Skipped, current->detail = text.substr(9);
      return;
    }
    if (current->status == Status::NotDone && !e.is_crash) return;  // follows from the missing body
    std::printf("  %s: %s %s\n", current->name.c_str(), e.is_crash ? "crashed:" : "threw:", text.c_str());
    fail(std::string(e.is_crash ? "crashed: " : "threw: ") + text);
    if (endsTheRun()) doctest::detail::g_cs->numAssertsFailedCurrentTest_atomic++;
  }
  // doctest's --abort-after counts failed assertions only: after a case that threw, it runs every
  // further case, each with its children, gates and checkpoints, although the exercise has failed
  // already and its verdict is this first failure. Under --abort-after (the proofs run each wrong
  // variant so, on the cases of its own requirements) the throw counts as a failed assertion and
  // ends the run as a failed CHECK does. Without it (a learner's run) every case runs.
  static bool endsTheRun() { return doctest::detail::g_cs && doctest::detail::g_cs->abort_after > 0; }
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& a) override {
    if (!a.m_failed || !current) return;
    // The learner's starting body, reached inside an assertion (CHECK(throws(...))): not done, not
    // failed; doctest quotes the exception's text. What fails after it in the same case follows
    // from the missing body, so the case stays not done.
    std::string thrown = a.m_threw ? a.m_exception.c_str() : "";
    if (thrown.size() >= 2 && thrown.front() == '"' && thrown.back() == '"')
      thrown = thrown.substr(1, thrown.size() - 2);
    if (thrown.rfind("NOT DONE: ", 0) == 0) {
      if (current->status == Status::Done) current->status = Status::NotDone, current->detail = thrown;
      return;
    }
    if (current->status == Status::NotDone) return;
    std::string line = std::string(a.m_file) + ":" + std::to_string(a.m_line) + ": " + a.m_expr;
    if (a.m_threw)
      line += " threw: " + std::string(a.m_exception.c_str());
    else if (a.m_decomp.size())
      line += "  values: " + std::string(a.m_decomp.c_str());
    std::printf("  %s\n    %s\n", current->name.c_str(), line.c_str());
    std::vector<std::string> contexts;
    for (int i = 0; i < get_num_active_contexts(); ++i) {
      std::ostringstream context;
      get_active_contexts()[i]->stringify(&context);
      std::printf("    with %s\n", context.str().c_str());
      contexts.push_back(context.str());
    }
    fail(line, contexts);
  }
  void log_message(const doctest::MessageData& m) override {
    std::printf("    %s\n", m.m_string.c_str());
    // MESSAGE() is a warning; FAIL_CHECK() and FAIL() are failed assertions and fail the case.
    if (current && !(m.m_severity & doctest::assertType::is_warn))
      fail(std::string(m.m_file) + ":" + std::to_string(m.m_line) + ": " + m.m_string.c_str());
  }
  void test_case_skipped(const doctest::TestCaseData&) override {}
  void test_run_end(const doctest::TestRunStats&) override {}

  void fail(const std::string& detail, const std::vector<std::string>& context = {}) {
    if (current->status != Status::Failed)
      current->status = Status::Failed, current->detail = detail, current->context = context;
  }
};

REGISTER_REPORTER("workbook", 1, Reporter);

}  // namespace

// An unexpected DriverError names the call, file and line.
REGISTER_EXCEPTION_TRANSLATOR(const wb::DriverError& e) { return doctest::String(e.what()); }

int main(int argc, char** argv) {
  doctest::Context context;
  context.setOption("reporters", "workbook");
  context.setOption("no-version", true);
  context.applyCommandLine(argc, argv);
  const int doctestRc = context.run();
  if (context.shouldExit()) return doctestRc;

  const bool child = std::getenv("WORKBOOK_CHILD") != nullptr;
  const char* dir = std::getenv("WORKBOOK_EXERCISE_RESULTS");
  bool anyFailed = false, anySkipped = false;
  if (dir && !child) {
    std::error_code ignored;  // a folder that cannot be made shows as "not run" in the table
    std::filesystem::create_directories(dir, ignored);
  }
  for (const std::string& name : order) {
    const ExerciseResult& r = results[name];
    const wbx::ExerciseInfo* info = wbx::findExercise(name);
    const Status s = r.status();
    anyFailed = anyFailed || s == Status::Failed || s == Status::NotDone;
    anySkipped = anySkipped || s == Status::Skipped;
    if (child) {  // the parent reports; the child only says what happened
      if (s == Status::NotDone) std::printf("%s\n", r.detail().c_str());
      continue;
    }
    const std::string lesson = info ? info->lesson : "??";
    const std::string id = "exercise" + lesson + "." + name;
    std::printf("%s: %s", id.c_str(), s == Status::Done ? "done" : s == Status::NotDone ? "not done" : s == Status::Failed ? "FAILED" : "skipped");
    if (info) std::printf(" (%s)", info->title.c_str());
    std::printf("\n");
    if (s == Status::NotDone && info) std::printf("  Hint: %s\n", info->hint.c_str());
    if (s == Status::Failed || s == Status::Skipped) std::printf("  %s\n", r.detail().c_str());
    if (!r.partlySkipped().empty()) std::printf("  not checked here: %s\n", r.partlySkipped().c_str());
    if (dir) {
      std::ofstream out(std::string(dir) + "/" + lesson + "." + name + ".txt");
      out << "status " << statusWord(s) << "\n";
      out << "title " << (info ? info->title : name) << "\n";
      out << "detail " << r.detail() << "\n";
      if (!r.partlySkipped().empty()) out << "partly-skipped " << r.partlySkipped() << "\n";
      if (const CaseResult* c = r.first())
        for (const std::string& line : c->context) out << "context " << line << "\n";
      for (const auto& c : r.cases) out << "case " << statusWord(c.status) << " " << c.name << "\n";
    }
  }
  if (order.empty()) {
    std::printf("no exercise check ran (a --test-suite filter that matches none?)\n");
    return 1;
  }
  return anyFailed ? 1 : anySkipped ? 77 : 0;
}

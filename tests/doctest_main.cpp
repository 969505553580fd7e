// The main() of every doctest binary in the course.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "cuda_check.hpp"

#include <ostream>
#include <string>
#include <vector>

// A test that ends in an unexpected wb::DriverError reports the failed call, file, line and error.
REGISTER_EXCEPTION_TRANSLATOR(const wb::DriverError& e) { return doctest::String(e.what()); }

namespace {

// ctest runs a lesson's suites in one process (lessonNN.claims), so its output ends with one line
// per suite: what `ctest -R lessonNN -V` shows a learner each part proved.
class SuiteLines : public doctest::IReporter {
 public:
  explicit SuiteLines(const doctest::ContextOptions& options) : out_(*options.cout) {}

  void test_case_start(const doctest::TestCaseData& tc) override { suite_ = tc.m_test_suite; }
  void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
    if (suites_.empty() || suites_.back().name != suite_) suites_.push_back({suite_, 0, 0});
    ++(stats.testCaseSuccess ? suites_.back().passed : suites_.back().failed);
  }
  void test_run_end(const doctest::TestRunStats&) override {
    if (suites_.empty()) return;
    out_ << "[suites]\n";
    for (const Suite& s : suites_) {
      out_ << "  " << s.name << std::string(s.name.size() < 28 ? 28 - s.name.size() : 1, ' ') << s.passed
           << (s.passed == 1 ? " case passed" : " cases passed");
      if (s.failed) out_ << ", " << s.failed << " FAILED";
      out_ << "\n";
    }
  }

  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}

 private:
  struct Suite {
    std::string name;
    int passed, failed;
  };
  std::ostream& out_;
  std::string suite_;
  std::vector<Suite> suites_;
};

}  // namespace

REGISTER_LISTENER("suite-lines", 1, SuiteLines);

// What every exercise check includes: doctest, the course's test helpers, and EXERCISE().
//
//   EXERCISE("bounded-upload", "An upload that refuses to write past the end of its allocation",
//            "hint the learner sees while it is not done") {
//     TEST_CASE("...") { ... }
//   }
//
// EXERCISE names a doctest suite (one exercise; ctest runs it as exerciseNN.<name>) and registers
// its title and hint, which the checks print and the lesson's page shows. The learner's function
// throws wb::NotDone until it is written; the check's main (check_main.cpp) reports that as "not
// done", a failed assertion as "failed", and all passing as "done".
#pragma once

#include <doctest/doctest.h>

#include "exercise.hpp"
#include "ledger.hpp"
#include "support.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace wbx {

struct ExerciseInfo {
  std::string lesson, name, title, hint;
};

bool registerExercise(const char* lesson, const char* name, const char* title, const char* hint);
const ExerciseInfo* findExercise(const std::string& name);

// A check that needs more devices than this machine has reports the exercise skipped, with why:
// a wrong answer that only several devices could tell apart must not pass on one.
class Skipped : public std::runtime_error {
 public:
  explicit Skipped(const std::string& why) : std::runtime_error("SKIPPED: " + why) {}
};
void needDevices(int count);

// A check that could crash or hang the process (a fault, a deadlock in the learner's code) runs the
// learner's function in a child: this binary again, running one test case (marked
// `* doctest::skip(!wbt::inChild())`, as the lesson suites do), ended after limitSeconds. A child
// whose learner code is not done reports so and the parent rethrows wb::NotDone.
struct ChildResult {
  bool crashed = false, timedOut = false;
  int code = -1;
  std::string output;
};
ChildResult runInChild(const std::string& testCase, unsigned limitSeconds = 60);

// The calling thread's context stack, top first (empty: no current context). Read by popping every
// context and pushing them back, so it leaves the stack as it found it: what a check compares
// before and after the learner's function, to see that the caller's stack was restored.
std::vector<CUcontext> contextStack();

}  // namespace wbx

#define WBX_CAT2(a, b) a##b
#define WBX_CAT(a, b) WBX_CAT2(a, b)
// WORKBOOK_EXERCISE_LESSON ("05") is defined for each lesson's check file by its CMake target.
#define EXERCISE(name, title, hint)                                                               \
  static const bool WBX_CAT(wbx_exercise_, __LINE__) =                                            \
      ::wbx::registerExercise(WORKBOOK_EXERCISE_LESSON, name, title, hint);                       \
  TEST_SUITE(name)

// The CUDA environment variables that change what a lesson shows, and how each lesson meets them.
//
// Engineers run the course on their own machines, where variables such as CUDA_LAUNCH_BLOCKING=1
// are often set (lesson 10 recommends it for finding a fault). The driver reads them at cuInit, so
// a lesson can do nothing about one once it is running: under CUDA_LAUNCH_BLOCKING=1 every launch
// waits for its kernel, and a lesson about pending work would narrate the opposite of its page. So
// each lesson says, first thing in main(), which variables change what it shows and what it does
// under each:
//
//   wb::checkEnvironment({
//       {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops, "the gate kernel's launch would wait for the gate"},
//       {"CUDA_MODULE_LOADING", wb::Under::Teaches, "step 1 shows the mode the variable chose"},
//   });
//
// For each one that is set to something other than its documented default, it prints what NVIDIA
// documents the variable to do and what changes here; for one the lesson stops under, it throws
// EnvironmentError and the lesson ends at once with kExitEnvironment, naming the variable and the
// command that runs it without. Needs no CUDA library (the GPU launcher reads the same table).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace wb {

// What a lesson does under a variable that is set.
enum class Under {
  Teaches,   // it runs under it and says at the top what changes; its narration stays true
  Controls,  // it sets the variable itself for the child processes it starts, and says so
  Stops,     // it cannot show what its page teaches under it: it stops before cuInit
};

struct EnvUse {
  using Predicate = bool (*)(const std::string& value);
  constexpr EnvUse(const char* variable, Under how, const char* here, Predicate matters = nullptr)
      : variable(variable), how(how), here(here), matters(matters) {}
  const char* variable;
  Under how;
  const char* here;  // in this lesson: what changes, or why the lesson cannot be shown under it
  // When set, only values for which this returns true count (say, fewer connections than the
  // default); otherwise every value but the documented default does.
  Predicate matters;
};

// One variable of the CUDA programming guide's table (appendix "CUDA Environment Variables").
struct EnvVariable {
  const char* name;
  const char* defaultValue;  // the documented default; nullptr where unset is the default
  const char* sample;        // a value that changes something, for the environment suites
  const char* documented;    // what NVIDIA documents it to do, in one sentence
  // Whether the GPU tests keep it from the user's environment. They assert the documented default
  // behaviour, so the launcher removes the others (and says so); device visibility and order stay,
  // so the tests use the GPUs the user chose.
  bool keptForTests;
};

// Every variable the course knows, in the guide's order.
const std::vector<EnvVariable>& cudaEnvironmentVariables();
const EnvVariable* findEnvVariable(const std::string& name);

// Every variable's name but the two that choose the device (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER):
// what a lesson's child process runs without, so that it meets no setting of the user's shell and
// uses the GPU the user chose.
std::vector<std::string> variablesButDeviceChoice();

// The value of name when it is set to something other than its documented default, else "".
std::string activeValue(const EnvVariable& variable);

// For EnvUse::matters: a number below the documented default (CUDA_DEVICE_MAX_CONNECTIONS=1).
bool belowDefault(const std::string& value);

class EnvironmentError : public std::runtime_error {
 public:
  EnvironmentError(std::string variable, const std::string& message);
  const std::string& variable() const noexcept { return variable_; }

 private:
  std::string variable_;
};

// Called first in main(), before cuInit. Prints one note per variable in uses that is set and
// matters (and for the variables every lesson feels: device visibility and order, the driver's log
// file); throws EnvironmentError for the first one the lesson Stops under. With
// WORKBOOK_ENVIRONMENT_USES set it prints "uses <variable> <teaches|controls|stops>" per declared
// variable and exits 0: the environment suites (tests/environment.cpp) read what each lesson declares.
void checkEnvironment(const std::vector<EnvUse>& uses);

}  // namespace wb

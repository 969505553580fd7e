// Running a program in a child process with a time limit: what lesson 10's supervisor and the
// tests that provoke crashes, hangs and kernel faults stand on. Needs no CUDA library.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace wb {

struct ProcessEnd {
  int signal = 0;      // the signal that ended it, or 0
  int code = -1;       // its exit code when it exited
  bool timedOut = false;  // ended by the time limit
  std::string output;  // stdout and stderr, interleaved as written
};

// Runs argv[0] with argv and the environment of this process changed by env: "NAME=value" sets
// NAME (replacing what this process had), a bare "NAME" removes it. The child arms
// alarm(limitSeconds) before exec (an alarm survives exec), so a child that hangs is ended by
// SIGALRM: nothing waits longer than that, and nothing sleeps. Safe to call from several threads
// at once: each child inherits only its own pipe, and the descriptors in inherit, which it keeps
// open across exec although they are close-on-exec here (a socket meant for this child alone).
ProcessEnd runProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      unsigned limitSeconds, const std::vector<int>& inherit = {});

// Records of children, for a test that makes the same claims as a lesson program: where the
// variable WORKBOOK_CHILD_RECORDS names a folder, runProcess writes how each child ended and what
// it printed there, under its program's file name, its arguments and the variables it set
// ("NAME=value"). recordedRun returns such a record for the same program, arguments and settings,
// or nothing (no folder, or no such child ran). ctest's lesson10.run records the faulting children
// the lesson starts, and lesson10.claims reads them instead of faulting the GPU again for the same
// answers: the driver serialises much of a process's start-up, so every child started a second
// time adds its whole start-up to the run.
std::optional<ProcessEnd> recordedRun(const std::vector<std::string>& argv, const std::vector<std::string>& env);

// Where the variable WORKBOOK_CHILD_ENVIRONMENTS names a file, runProcess appends to it one line per
// child: its arguments, then a tab before each CUDA_ variable the child inherits (not those env
// sets). The environment check reads it: a lesson's children run without what the lesson says.

// The environment this process has, changed as runProcess describes: what a child would get.
std::vector<std::string> childEnvironment(const std::vector<std::string>& env);

// The path of the running program (/proc/self/exe), to start it again as a child.
std::string selfPath();

}  // namespace wb

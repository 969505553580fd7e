// What a lesson needs to build and run: its row of lessons/needs.tsv (compute capability, toolkit,
// driver, what is left out below them, operating system, GPUs). One table, read by the lesson
// programs' guards, by the pages' "You need" box and by README's Needs column (ctest course.needs
// checks that README and each main.cpp's newest CUDA_VERSION guard agree with it). Needs no CUDA library.
//
// In a lesson program (add_lesson compiles its row in; the lesson's test binary has it too):
//
//   if (!wb::meetsComputeCapability(major, minor)) ...        // every step's compute capability
//   if (!wb::meetsDriver(driver, wb::For::AnyStep)) ...       // below it no step runs: a whole-lesson guard
//   std::printf("%s\n", wb::needsText().c_str());             // the row in one line
//   wb::lessonNeeds().driver.every                            // a value itself, e.g. 12080 for a message
#pragma once

#include <string>
#include <vector>

namespace wb {

// One requirement, written A..B in the table: below `any` no step of the lesson runs (the program
// says why), from `every` every step does. Numbers as CUDA writes them: compute capability 9.0 is
// 90 (major * 10 + minor), CUDA 12.8 is 12080 (CUDA_VERSION, cuDriverGetVersion). 0: none ("-").
struct Need {
  int any = 0;
  int every = 0;
};

// A row of lessons/needs.tsv (its header comment says what each column means).
struct LessonNeeds {
  int lesson = -1;
  Need cc, toolkit, driver;
  std::string leftOut;  // what is left out below `every`, in the table's words; "-": nothing
  std::string os;       // "Linux", and what the lesson needs beyond it
  std::string gpus;     // "1", or "1 (2 for step 6 and its multi-device suite)"
};

// Which end of a requirement a guard asks about: every step (B), or any step at all (A).
enum class For { EveryStep, AnyStep };

// This program's row, compiled in by add_lesson (cmake/WorkbookLessons.cmake) from lessons/needs.tsv.
// Only lesson programs and their test binaries define it.
const LessonNeeds& lessonNeeds();

// Whether what this machine has meets one of this lesson's requirements.
bool meets(int have, const Need& need, For scope = For::EveryStep);
inline bool meetsComputeCapability(int major, int minor, For scope = For::EveryStep) {
  return meets(major * 10 + minor, lessonNeeds().cc, scope);
}
inline bool meetsToolkit(int cudaVersion, For scope = For::EveryStep) {  // CUDA_VERSION
  return meets(cudaVersion, lessonNeeds().toolkit, scope);
}
inline bool meetsDriver(int driverVersion, For scope = For::EveryStep) {  // cuDriverGetVersion
  return meets(driverVersion, lessonNeeds().driver, scope);
}

// This lesson's needs in one line, as README's Needs column writes them:
// "CC 9.0; CUDA 12.0 (12.3 for all steps); Linux; 1 GPU".
std::string needsText(const LessonNeeds& row);
inline std::string needsText() { return needsText(lessonNeeds()); }

// ---- For the tools that read the whole table (the page generator, ctest course.needs) ----------

// One row; throws std::invalid_argument naming the column it cannot read.
LessonNeeds parseNeedsRow(const std::string& line);
// Every row of the file, in order (comment lines, the header line and blank lines skipped); throws
// std::runtime_error naming the file and line.
std::vector<LessonNeeds> readNeedsTable(const std::string& path);
// 90 -> "9.0"; 12080 -> "12.8"; 0 -> "none".
std::string capabilityText(int cc);
std::string toolkitText(int version);

}  // namespace wb

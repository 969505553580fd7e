// What every lesson includes: the checked call, the CUDA 12/13 bridges, the environment check, and
// the few helpers the lessons share (where the kernel images are and how they are checked, how a
// fatal error ends a program, how a program checks what it narrates, readable sizes).
#pragma once

#include "compat.hpp"
#include "cuda_check.hpp"
#include "environment.hpp"
#include "image_reader.hpp"
#include "images.hpp"

#include <exception>
#include <stdexcept>
#include <string>

namespace wb {

// Exit codes of every lesson program (README.md, "Exit codes").
constexpr int kExitOk = 0;
constexpr int kExitDriverError = 1;   // a Driver API call failed: the message names it
constexpr int kExitNoGpu = 2;         // no usable driver or device: the stub driver, no device, too old a driver
constexpr int kExitBadImage = 3;      // a kernel image is missing or damaged: the message names the file
constexpr int kExitEnvironment = 4;   // a CUDA environment variable is set under which the lesson cannot teach
constexpr int kExitContradicted = 5;  // the run did not show what the page explains: the message says what it showed
constexpr int kExitNeedsAction = 6;   // lesson 00: a finding about this machine needs action: the report says what to do
constexpr int kExitUsage = 64;        // bad command line

// Marks the start of a lesson's step in what it prints: "=== 3. Push, pop, set". A heading for the
// reader at the terminal, and where the site's page generator cuts the recorded output, so each
// step's output appears under that step on the lesson's page (its "## 3. Push, pop, set").
void step(int number, const char* title);

// A program narrates only what its run showed. Where the run shows the opposite of what the page
// explains (work that should be pending is done, a compile the cache answered, a child that failed
// where a time was to be measured), expect() throws Contradiction, and the lesson ends with
// kExitContradicted and the line "this run did not show <what>: <instead>".
class Contradiction : public std::runtime_error {
 public:
  Contradiction(const std::string& what, const std::string& instead);
};
void expect(bool shown, const std::string& what, const std::string& instead);

// Whether this process runs under compute-sanitizer: the sanitize target (cmake/Sanitize.cmake)
// sets WORKBOOK_UNDER_SANITIZER. There, on driver 580, no kernel ran beside one that waits for the
// host (lesson 09) and every call is slowed, so the steps and checks that need either say they are
// left out instead of showing something else.
bool underSanitizer();

// Prints the error and what to do about it to stderr; returns the exit code for main().
int reportFatal(const DriverError& error);
int reportFatal(const ImageError& error);
// Every lesson's main() ends in `catch (...) { return wb::reportFatal(std::current_exception()); }`:
// a DriverError, ImageError, EnvironmentError or Contradiction gets its message and exit code, any
// other exception its what() and kExitDriverError.
int reportFatal(std::exception_ptr error);

}  // namespace wb

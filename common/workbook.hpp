// What every lesson includes: the checked call, the CUDA 12/13 bridges, and the few helpers the
// lessons share (where the kernel images are and how they are checked, how a fatal error ends a
// program, readable sizes).
#pragma once

#include "compat.hpp"
#include "cuda_check.hpp"
#include "image_reader.hpp"
#include "images.hpp"

namespace wb {

// Exit codes of every lesson program.
constexpr int kExitOk = 0;
constexpr int kExitDriverError = 1;  // a Driver API call failed: the message names it
constexpr int kExitNoGpu = 2;        // no usable driver or device: the stub driver, no device, too old a driver
constexpr int kExitBadImage = 3;     // a kernel image is missing or damaged: the message names the file
constexpr int kExitUsage = 64;       // bad command line

// Marks the start of a lesson's step in what it prints: "=== 3. Push, pop, set". A heading for the
// reader at the terminal, and where the site's page generator cuts the recorded output, so each
// step's output appears under that step on the lesson's page (its "## 3. Push, pop, set").
void step(int number, const char* title);

// Prints the error and what to do about it to stderr; returns the exit code for main().
int reportFatal(const DriverError& error);
int reportFatal(const ImageError& error);

}  // namespace wb

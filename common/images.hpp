// Helpers that need no CUDA library: where the kernel images are, readable sizes and handles,
// a stopwatch. Tests that run without a driver (tests/kernel_images.cpp) use them too.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace wb {

// The folder holding the kernel images: $CUDA_WORKBOOK_KERNEL_DIR if set, else the build's
// kernels/ folder, baked in as an absolute path so a lesson runs from any working directory.
std::string kernelDir();
// kernelDir() + "/" + file, e.g. kernelImage("vector_ops.fatbin").
std::string kernelImage(const std::string& file);
// The architectures built into the images (WORKBOOK_CUDA_ARCHS), lowest first: {75, 80, ..., 90}.
std::vector<unsigned> builtArchitectures();
// The architectures with a vector_ops cubin, lowest first: the built ones and, where those share one
// major version (a build for one GPU), one of another major version (WORKBOOK_OTHER_ARCH), so that
// lessons 06 and 12 always have a cubin this device cannot run.
std::vector<unsigned> cubinArchitectures();
// The version of the CUDA toolkit whose nvcc built the images, "13.0.88".
std::string imageToolkitVersion();

// "512 B", "4.00 KiB", "1.50 GiB".
std::string bytes(std::size_t n);
// A handle or address as 0x..., for narration.
std::string hex(const void* p);
std::string hex(unsigned long long v);

// Wall-clock milliseconds since construction; steady, so it never goes backwards.
class Stopwatch {
 public:
  double ms() const { return std::chrono::duration<double, std::milli>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
};

}  // namespace wb

// What lesson 19's two programs share (lessons/19-runtime-compilation/main.cpp and deeper.cpp, the
// program of its optional page): the device's architecture as NVRTC names it, the kernel source
// both compile, loading an image made in this process through the course's image reader, and a
// kernel run over a ramp of small integers with its wrong values counted.
// Header-only: a target that includes it links CUDA::nvrtc (through nvrtc_checked.hpp).
#pragma once

#include "launch.hpp"
#include "nvrtc_checked.hpp"
#include "workbook.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace wb {

// The device's architecture, from its compute capability: sm_XY is the real one, compute_XY the
// virtual one.
struct Arch {
  int major = 0, minor = 0;
  int number() const { return major * 10 + minor; }
  std::string sm() const { return "sm_" + std::to_string(number()); }
  std::string compute() const { return "compute_" + std::to_string(number()); }
};

inline Arch archOf(CUdevice dev) {
  Arch a;
  CU_CHECK(cuDeviceGetAttribute(&a.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU_CHECK(cuDeviceGetAttribute(&a.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  return a;
}

// The kernel sources: strings, as a program that generates code at run time would hold them.
//! [affine-source]
inline const char* const kAffineSource =
    R"(extern "C" __global__ void affine(float* x, float a, float b, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}
)";
//! [affine-source]

//! [load]
// Loads an image made in this process (a cubin, or PTX text with its terminating NUL), checked first
// by the course's image reader like every image a lesson loads (common/image_reader.hpp).
inline CUlibrary loadImage(const std::vector<char>& image, const char* what) {
  const bool cubin = image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
  const size_t bytes = cubin || image.empty() ? image.size() : image.size() - 1;  // PTX: not its NUL
  verifyImageBytes(image.data(), bytes, cubin ? ImageKind::Cubin : ImageKind::Ptx, what);
  CUlibrary library = nullptr;
  CU_CHECK(cuLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  return library;
}
//! [load]

inline CUkernel kernelNamed(CUlibrary library, const std::string& name) {
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library, name.c_str()));
  return kernel;
}

// Runs kernel(T* x, extra..., unsigned n) over a copy of values in device memory and returns what it
// left there. cuMemcpyDtoH waits for the kernel (the legacy default stream).
template <class T, class... Extra>
std::vector<T> runInPlace(CUkernel kernel, const char* name, std::vector<T> values, Extra... extra) {
  CUdeviceptr x = 0;
  const size_t bytes = values.size() * sizeof(T);
  CU_CHECK(cuMemAlloc(&x, bytes));
  CU_CHECK(cuMemcpyHtoD(x, values.data(), bytes));
  unsigned n = static_cast<unsigned>(values.size());
  void* args[] = {&x, &extra..., &n};
  launch(reinterpret_cast<CUfunction>(kernel), name, (n + 255) / 256, 256, args);
  CU_CHECK(cuMemcpyDtoH(values.data(), x, bytes));
  CU_CHECK(cuMemFree(x));
  return values;
}

// 0, 1, ..., 99, 0, 1, ...: small integers, so every result is exact in float and double.
template <class T>
std::vector<T> ramp(unsigned n = 1u << 16) {
  std::vector<T> v(n);
  for (unsigned i = 0; i < n; ++i) v[i] = static_cast<T>(i % 100);
  return v;
}

// How many of got differ from want(the input value) for the ramp.
template <class T, class F>
size_t mismatches(const std::vector<T>& got, F want) {
  const std::vector<T> in = ramp<T>(static_cast<unsigned>(got.size()));
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != want(in[i]);
  return wrong;
}

// affine(x, 2, 1) over the ramp with library's affine kernel: the mismatches against 2x + 1.
inline size_t affineMismatches(CUlibrary library) {
  const std::vector<float> got =
      runInPlace(kernelNamed(library, "affine"), "affine", ramp<float>(), 2.0f, 1.0f);
  return mismatches(got, [](float x) { return 2.0f * x + 1.0f; });
}

inline std::string fileName(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

}  // namespace wb

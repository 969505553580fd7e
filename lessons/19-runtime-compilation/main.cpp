// Lesson 19: runtime compilation: NVRTC to a loaded kernel.
//
// What you learn: NVRTC, the toolkit's compiler as a library, turns CUDA C++ held in a string into
// a kernel image while the program runs; the Driver API loads it like any other. The target comes
// from the device: --gpu-architecture=sm_XY (its compute capability) gives a cubin for exactly that
// GPU, compute_XY gives PTX only, which the driver must compile. A source with an error gives
// NVRTC_ERROR_COMPILATION and a log that names the line. Template kernels have mangled names that
// nobody should guess: nvrtcAddNameExpression instantiates them and nvrtcGetLoweredName says what
// they are called. Pieces compiled apart are linked at run time, by the driver's cuLink* (the older
// way) or the toolkit's nvJitLink, which alone takes today's LTO-IR and optimises across the
// pieces. NVRTC 12.9 and newer keeps a compile cache of its own, which --no-cache turns off: every
// compile this lesson means as one passes it. A compile cache of the program's own, on disk, in a
// folder only its user may write to, is keyed by everything that changes what NVRTC produces
// (source, options, compute capability, NVRTC's version and the library file itself, the driver's
// CUDA version); a hit is proven by counting compilations, in this process and in a second one, and
// what it saves is measured in this run against a compile and against NVRTC's own cache. Last, what
// a deployed program must ship beside NVRTC.
//
// APIs: nvrtcVersion, nvrtcGetSupportedArchs, nvrtcCreateProgram, nvrtcCompileProgram,
//       nvrtcGetProgramLog, nvrtcGetCUBIN, nvrtcGetPTX, nvrtcGetLTOIR, nvrtcAddNameExpression,
//       nvrtcGetLoweredName, nvrtcDestroyProgram, nvJitLinkVersion, nvJitLinkCreate,
//       nvJitLinkAddData, nvJitLinkComplete, nvJitLinkGetLinkedCubin, nvJitLinkGetErrorLog,
//       nvJitLinkDestroy, cuLinkCreate, cuLinkAddData, cuLinkComplete, cuLinkDestroy,
//       cuLibraryLoadData, cuLibraryGetKernel, cuKernelGetFunction, cuLibraryUnload,
//       cuDeviceGetAttribute, cuDriverGetVersion
// Run:  ctest -R lesson19   (or build/lessons/lesson19-runtime-compilation [--cache DIR] [--csv lesson19-figure.csv])
#include "figure.hpp"
#include "launch.hpp"
#include "process.hpp"
#include "workbook.hpp"

#include <nvJitLink.h>
#include <nvrtc.h>

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

constexpr unsigned kChildSeconds = 30;  // step 8's second process is ended after this: nothing hangs

// How many times this process has called nvrtcCompileProgram: a hit of the lesson's cache is
// proven by it not moving, and a miss by it moving with NVRTC's own cache off (--no-cache).
unsigned nvrtcCompilations = 0;

// NVRTC and nvJitLink return their own result types, not CUresult: a failed call throws, naming it.
void check(nvrtcResult rc, const char* call, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (rc != NVRTC_SUCCESS)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                             nvrtcGetErrorString(rc));
}

// The kernel sources: strings, as a program that generates code at run time would hold them.
//! [affine-source]
const char* const kAffineSource =
    R"(extern "C" __global__ void affine(float* x, float a, float b, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}
)";
//! [affine-source]

//! [compiled]
// What one NVRTC compilation gave back. A compile error is an answer, not a failure of the call:
// the result says so and the log says where.
struct Compiled {
  nvrtcResult result = NVRTC_SUCCESS;
  std::string log;                      // errors and warnings; may hold warnings on success too
  std::vector<char> cubin, ptx, ltoir;  // what the target produced; empty: this target gives none
  std::vector<std::string> lowered;     // the mangled name of each name expression, in order
};

// One of the program's outputs: NVRTC first says its size (0: none for this target), then copies it.
std::vector<char> output(nvrtcProgram prog, nvrtcResult (*size)(nvrtcProgram, size_t*),
                         nvrtcResult (*copy)(nvrtcProgram, char*), const char* what) {
  size_t bytes = 0;
  check(size(prog, &bytes), what);
  std::vector<char> out(bytes);
  if (bytes > 0) check(copy(prog, out.data()), what);
  return out;
}

std::string programLog(nvrtcProgram prog) {
  const std::vector<char> log =
      output(prog, nvrtcGetProgramLogSize, nvrtcGetProgramLog, "nvrtcGetProgramLog");
  return log.empty() ? "" : std::string(log.data());  // the size counts the terminating NUL
}
//! [compiled]

// After a successful compile: the images this target produced, and each name expression's lowered
// name, copied out (NVRTC owns them until nvrtcDestroyProgram).
void readOutputs(nvrtcProgram prog, const std::vector<std::string>& nameExpressions, Compiled& c) {
  c.cubin = output(prog, nvrtcGetCUBINSize, nvrtcGetCUBIN, "nvrtcGetCUBIN");
  c.ptx = output(prog, nvrtcGetPTXSize, nvrtcGetPTX, "nvrtcGetPTX");
  c.ltoir = output(prog, nvrtcGetLTOIRSize, nvrtcGetLTOIR, "nvrtcGetLTOIR");
  for (const std::string& e : nameExpressions) {
    const char* lowered = nullptr;
    check(nvrtcGetLoweredName(prog, e.c_str(), &lowered), "nvrtcGetLoweredName");
    c.lowered.emplace_back(lowered);
  }
}

//! [no-cache]
// NVRTC 12.9 and newer keeps a cache of compiles of its own (the NVRTC user guide's section "Caching
// (CUDA 12.9+)"), used unless a compile passes --no-cache: "Disable the use of cache for both ptx
// and cubin code generation" (nvrtc.h). A compile it answers from there is no compile, so every
// compile this lesson means as one passes --no-cache; step 9 alone allows the cache, to time it.
// Older NVRTC has neither the cache nor the option, so it is passed only from 12.9 on.
enum class NvrtcCache { Off, Allowed };

bool nvrtcKeepsACache() {
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return major > 12 || (major == 12 && minor >= 9);
}
//! [no-cache]

//! [compile]
// One compilation: create the program from the source, compile it with the options, read the log
// and the outputs, and destroy the program on every path. Only a compile error or an option NVRTC
// does not know comes back as a result; any other failure throws.
Compiled compile(const std::string& source, const char* name, const std::vector<std::string>& options,
                 const std::vector<std::string>& nameExpressions = {}, NvrtcCache cache = NvrtcCache::Off) {
  ++nvrtcCompilations;
  nvrtcProgram prog = nullptr;
  check(nvrtcCreateProgram(&prog, source.c_str(), name, 0, nullptr, nullptr), "nvrtcCreateProgram");
  Compiled c;
  try {
    for (const std::string& e : nameExpressions)
      check(nvrtcAddNameExpression(prog, e.c_str()), "nvrtcAddNameExpression");
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    if (cache == NvrtcCache::Off && nvrtcKeepsACache()) argv.push_back("--no-cache");
    c.result = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
    c.log = programLog(prog);
    if (c.result == NVRTC_SUCCESS)
      readOutputs(prog, nameExpressions, c);
    else if (c.result != NVRTC_ERROR_COMPILATION && c.result != NVRTC_ERROR_INVALID_OPTION)
      check(c.result, "nvrtcCompileProgram");
  } catch (...) {
    nvrtcDestroyProgram(&prog);
    throw;
  }
  check(nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");
  return c;
}
//! [compile]

// The device's architecture, from its compute capability: sm_XY is the real one, compute_XY the
// virtual one.
struct Arch {
  int major = 0, minor = 0;
  int number() const { return major * 10 + minor; }
  std::string sm() const { return "sm_" + std::to_string(number()); }
  std::string compute() const { return "compute_" + std::to_string(number()); }
};

Arch archOf(CUdevice dev) {
  Arch a;
  CU_CHECK(cuDeviceGetAttribute(&a.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU_CHECK(cuDeviceGetAttribute(&a.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  return a;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
  return out.empty() ? "(none)" : out;
}

// The log, indented, so that it reads as quoted in the narration (its trailing blank lines left out).
void printLog(std::string log) {
  while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) std::printf("  | %s\n", line.c_str());
}

//! [load]
// Loads an image made in this process (a cubin, or PTX text with its terminating NUL), checked first
// by the course's image reader like every image a lesson loads (common/image_reader.hpp).
CUlibrary loadImage(const std::vector<char>& image, const char* what) {
  const bool cubin = image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
  const size_t bytes = cubin || image.empty() ? image.size() : image.size() - 1;  // PTX: not its NUL
  wb::verifyImageBytes(image.data(), bytes, cubin ? wb::ImageKind::Cubin : wb::ImageKind::Ptx, what);
  CUlibrary library = nullptr;
  CU_CHECK(cuLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  return library;
}
//! [load]

CUkernel kernelNamed(CUlibrary library, const std::string& name) {
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
  wb::launch(reinterpret_cast<CUfunction>(kernel), name, (n + 255) / 256, 256, args);
  CU_CHECK(cuMemcpyDtoH(values.data(), x, bytes));
  CU_CHECK(cuMemFree(x));
  return values;
}

// 0, 1, ..., 99, 0, 1, ...: small integers, so every result below is exact in float and double.
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
size_t affineMismatches(CUlibrary library) {
  const std::vector<float> got = runInPlace(kernelNamed(library, "affine"), "affine", ramp<float>(), 2.0f, 1.0f);
  return mismatches(got, [](float x) { return 2.0f * x + 1.0f; });
}

// The NVRTC and nvJitLink libraries this process has loaded now, by path (dl_iterate_phdr walks
// every object the dynamic loader has mapped, those opened later with dlopen included).
std::vector<std::string> loadedCompilerLibraries() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string path = info->dlpi_name ? info->dlpi_name : "";
        if (path.find("libnvrtc") != std::string::npos || path.find("libnvJitLink") != std::string::npos)
          static_cast<std::vector<std::string>*>(out)->push_back(path);
        return 0;
      },
      &paths);
  return paths;
}

std::string fileName(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

std::vector<std::string> fileNames(const std::vector<std::string>& paths) {
  std::vector<std::string> names;
  for (const std::string& p : paths) names.push_back(fileName(p));
  return names;
}

bool anyContains(const std::vector<std::string>& names, const char* part) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

//! [archs]
// The architectures this NVRTC can compile for, in ascending order (its header says so).
std::vector<int> supportedArchs() {
  int count = 0;
  check(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(count));
  check(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}
//! [archs]

//! [versions]
// The compiler's version, the linker's, the driver's, and the architectures this NVRTC can compile
// for. The device's real architecture must be among them for a cubin; an NVRTC older than the GPU
// does not know it.
std::vector<std::string> versionsAndTarget(CUdevice dev, const Arch& arch) {
  int nvrtcMajor = 0, nvrtcMinor = 0, driver = 0;
  check(nvrtcVersion(&nvrtcMajor, &nvrtcMinor), "nvrtcVersion");
  CU_CHECK(cuDriverGetVersion(&driver));
  const std::vector<int> archs = supportedArchs();
  std::string linker = "(nvJitLinkVersion needs CUDA 12.3)";
#if CUDA_VERSION >= 12030
  unsigned linkMajor = 0, linkMinor = 0;
  if (nvJitLinkVersion(&linkMajor, &linkMinor) == NVJITLINK_SUCCESS)
    linker = std::to_string(linkMajor) + "." + std::to_string(linkMinor);
#endif
  std::printf(
      "NVRTC %d.%d, nvJitLink %s; the driver supports CUDA %d.%d; compiled against CUDA %d.%d's headers\n",
      nvrtcMajor, nvrtcMinor, linker.c_str(), driver / 1000, driver % 1000 / 10, CUDA_VERSION / 1000,
      CUDA_VERSION % 1000 / 10);
  std::string list;
  for (int a : archs) list += " sm_" + std::to_string(a);
  std::printf("nvrtcGetSupportedArchs:%s\n", list.c_str());
  char name[256] = {};
  CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
  const bool known = std::find(archs.begin(), archs.end(), arch.number()) != archs.end();
  std::printf("device 0, %s: compute capability %d.%d, so --gpu-architecture=%s (a cubin) or %s (PTX)\n",
              name, arch.major, arch.minor, arch.sm().c_str(), arch.compute().c_str());
  wb::expect(known, "NVRTC knowing this device's architecture (" + arch.sm() + ")",
             "it is not in NVRTC's list: this NVRTC is older than the GPU");
  //! [versions]
  std::printf("%s\n", nvrtcKeepsACache()
                          ? "this NVRTC keeps a compile cache of its own (12.9 and newer): every compile here passes "
                            "--no-cache, except where step 9 times that cache"
                          : "this NVRTC has no compile cache of its own (NVRTC's came with 12.9)");
  const std::vector<std::string> before = fileNames(loadedCompilerLibraries());
  std::printf("NVRTC and nvJitLink libraries loaded before the first compile: %s\n", joined(before).c_str());
  return before;
}

//! [cubin]
// The source, compiled for this device's real architecture: a cubin, checked by the course's image
// reader like every image (common/image_reader.hpp), loaded with cuLibraryLoadData and launched.
void cubinLoadLaunch(const Arch& arch) {
  const Compiled c = compile(kAffineSource, "affine.cu", {"--gpu-architecture=" + arch.sm()});
  std::printf("nvrtcCompileProgram(affine.cu, --gpu-architecture=%s): %s, log %s\n", arch.sm().c_str(),
              nvrtcGetErrorString(c.result), c.log.empty() ? "empty" : "below");
  printLog(c.log);
  wb::expect(c.result == NVRTC_SUCCESS && !c.cubin.empty(), "affine.cu compiled to a cubin", "see the log");
  std::printf("nvrtcGetCUBIN: %s, an ELF for sm_%u (nvrtcGetPTX has its PTX too: %s)\n",
              wb::bytes(c.cubin.size()).c_str(), wb::cubinArchitecture(c.cubin),
              wb::bytes(c.ptx.size()).c_str());
  CUlibrary library = loadImage(c.cubin, "NVRTC's cubin of affine.cu");
  const size_t wrong = affineMismatches(library);
  std::printf("cuLibraryLoadData, cuLibraryGetKernel(\"affine\"), launch: %zu of %u values wrong\n", wrong,
              1u << 16);
  wb::expect(wb::cubinArchitecture(c.cubin) == static_cast<unsigned>(arch.number()) && wrong == 0,
             "a cubin for this architecture computing 2x + 1", "another architecture or wrong values");
  CU_CHECK(cuLibraryUnload(library));
}
//! [cubin]

// The first line of PTX that starts with directive (".target sm_90"), or "".
std::string ptxLine(const std::vector<char>& ptx, const char* directive) {
  std::istringstream lines(std::string(ptx.data(), ptx.size() - 1));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(directive, 0) == 0) return line;
  return "";
}

//! [ptx]
// The same source for the virtual architecture: NVRTC stops at PTX (no cubin), and the driver
// compiles the PTX for the device when the library is loaded or its kernel first used.
void ptxInstead(const Arch& arch) {
  const Compiled c = compile(kAffineSource, "affine.cu", {"--gpu-architecture=" + arch.compute()});
  wb::expect(c.result == NVRTC_SUCCESS && c.ptx.size() > 1, "affine.cu compiled to PTX", c.log);
  std::printf("--gpu-architecture=%s: nvrtcGetCUBINSize %zu, nvrtcGetPTXSize %zu (%s, %s)\n",
              arch.compute().c_str(), c.cubin.size(), c.ptx.size(), ptxLine(c.ptx, ".version").c_str(),
              ptxLine(c.ptx, ".target").c_str());
  CUlibrary library =
      loadImage(c.ptx, "NVRTC's PTX of affine.cu");  // the text with its NUL, as the driver expects
  const size_t wrong = affineMismatches(library);
  std::printf("cuLibraryLoadData of the PTX (the driver compiles it), launch: %zu of %u values wrong\n",
              wrong, 1u << 16);
  wb::expect(c.cubin.empty() && wrong == 0,
             "no cubin for a virtual architecture, and its PTX computing 2x + 1", "a cubin, or wrong values");
  CU_CHECK(cuLibraryUnload(library));
}
//! [ptx]

//! [broken-source]
const char* const kBrokenSource = R"(extern "C" __global__ void broken(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = factor * x[i];  // line 3: no such name
}
)";
//! [broken-source]

const char* const kWarningSource = R"(extern "C" __global__ void warns(float* x) {
  int unused = 3;  // line 2: declared and never used
  x[0] = 1.0f;
}
)";

// The line number the log gives for name ("broken.cu(3): error: ..."), or 0.
int errorLine(const std::string& log, const std::string& name) {
  std::smatch m;
  const std::regex where(std::regex_replace(name, std::regex(R"([.])"), R"(\.)") + R"(\(([0-9]+)\): error)");
  return std::regex_search(log, m, where) ? std::stoi(m[1]) : 0;
}

//! [log]
// A source that does not compile: NVRTC_ERROR_COMPILATION, no image, and the log names the file (the
// name given to nvrtcCreateProgram) and the line. Then the two other logs a deployer meets: warnings
// on success, and an architecture this NVRTC does not know.
void compileLogs(const Arch& arch, const std::vector<int>& archs) {
  const Compiled broken = compile(kBrokenSource, "broken.cu", {"--gpu-architecture=" + arch.sm()});
  std::printf("broken.cu: %s, and its log:\n", nvrtcGetErrorString(broken.result));
  printLog(broken.log);
  const int line = errorLine(broken.log, "broken.cu");
  std::printf("the log names line %d of broken.cu\n", line);
  wb::expect(broken.result == NVRTC_ERROR_COMPILATION && line == 3,
             "NVRTC_ERROR_COMPILATION and a log naming line 3",
             nvrtcGetErrorString(broken.result) + std::string(", line ") + std::to_string(line));
  const Compiled warns = compile(kWarningSource, "warns.cu", {"--gpu-architecture=" + arch.sm()});
  std::printf("warns.cu: %s, and a log:\n", nvrtcGetErrorString(warns.result));
  printLog(warns.log);
  const std::string newer =
      "--gpu-architecture=sm_" + std::to_string(archs.back() + 1);  // past NVRTC's newest
  const Compiled unknown = compile(kWarningSource, "warns.cu", {newer});
  std::printf("%s: %s, and a log:\n", newer.c_str(), nvrtcGetErrorString(unknown.result));
  printLog(unknown.log);
  // Which code an unknown architecture gets the reference does not say: the output shows this NVRTC's.
  wb::expect(warns.result == NVRTC_SUCCESS && warns.log.find("warning") != std::string::npos &&
                 unknown.result != NVRTC_SUCCESS,
             "a warning in the log of a successful compile, and an unknown architecture refused",
             "other results");
}
//! [log]

//! [template-source]
const char* const kScaleSource = R"(template <typename T>
__global__ void scale(T* x, T factor, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}
)";
//! [template-source]

//! [templates]
// A template kernel exists only where it is instantiated, and its name is mangled. A name expression
// both instantiates it and, after the compile, gives its lowered (mangled) name.
void templates(const Arch& arch) {
  const std::vector<std::string> expressions = {"scale<float>", "scale<double>"};
  const Compiled named = compile(kScaleSource, "scale.cu", {"--gpu-architecture=" + arch.sm()}, expressions);
  wb::expect(named.result == NVRTC_SUCCESS, "scale.cu compiled with two name expressions", named.log);
  for (size_t i = 0; i < expressions.size(); ++i)
    std::printf("nvrtcGetLoweredName(\"%s\"): %s\n", expressions[i].c_str(), named.lowered[i].c_str());
  CUlibrary library = loadImage(named.cubin, "NVRTC's cubin of scale.cu");
  CUkernel byExpression = nullptr;
  const CUresult guessed = cuLibraryGetKernel(&byExpression, library, "scale<float>");
  std::printf("cuLibraryGetKernel(\"scale<float>\"): %s; by its lowered name: found\n",
              wb::errorName(guessed).c_str());
  const std::vector<float> f =
      runInPlace(kernelNamed(library, named.lowered[0]), "scale<float>", ramp<float>(), 3.0f);
  const std::vector<double> d =
      runInPlace(kernelNamed(library, named.lowered[1]), "scale<double>", ramp<double>(), 0.5);
  const size_t wrong =
      mismatches(f, [](float x) { return 3.0f * x; }) + mismatches(d, [](double x) { return 0.5 * x; });
  std::printf(
      "scale<float>(x, 3) and scale<double>(x, 0.5) launched by their lowered names: %zu values wrong\n",
      wrong);
  wb::expect(guessed == CUDA_ERROR_NOT_FOUND && wrong == 0,
             "the expression not a symbol, the lowered names right",
             wb::errorName(guessed) + ", " + std::to_string(wrong) + " wrong values");
  CU_CHECK(cuLibraryUnload(library));
  //! [templates]
  //! [no-expression]
  const Compiled bare = compile(kScaleSource, "scale.cu", {"--gpu-architecture=" + arch.sm()});
  wb::expect(bare.result == NVRTC_SUCCESS, "scale.cu compiled without name expressions", bare.log);
  CUlibrary without = loadImage(bare.cubin, "NVRTC's cubin of scale.cu");
  CUkernel k = nullptr;
  const CUresult found = cuLibraryGetKernel(&k, without, named.lowered[0].c_str());
  std::printf("the same source without name expressions: cuLibraryGetKernel(\"%s\"): %s\n",
              named.lowered[0].c_str(), wb::errorName(found).c_str());
  wb::expect(found == CUDA_ERROR_NOT_FOUND, "no instance of a template nobody named",
             "the kernel was found: " + wb::errorName(found));
  CU_CHECK(cuLibraryUnload(without));
}
//! [no-expression]

//! [pieces]
// Two pieces compiled apart: a device function, and a kernel that calls it without its body.
const char* const kTransformSource = R"(__device__ float transform(float v) { return 2.0f * v + 1.0f; }
)";
const char* const kApplySource = R"(extern __device__ float transform(float v);  // defined in another piece
extern "C" __global__ void apply(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = transform(x[i]);
}
)";
//! [pieces]

//! [culink]
// The driver's linker, the older way: relocatable cubins in, one linked cubin out. The output belongs
// to the link state, so it is copied (or loaded) before cuLinkDestroy. Its target is, unless an
// option says otherwise, the device of the current context.
std::vector<char> linkWithDriver(const std::vector<char>& transform, const std::vector<char>& apply) {
  CUlinkState link = nullptr;
  CU_CHECK(cuLinkCreate(0, nullptr, nullptr, &link));
  std::vector<char> linked;
  try {
    CU_CHECK(cuLinkAddData(link, CU_JIT_INPUT_CUBIN, const_cast<char*>(transform.data()), transform.size(),
                           "transform.cu", 0, nullptr, nullptr));
    CU_CHECK(cuLinkAddData(link, CU_JIT_INPUT_CUBIN, const_cast<char*>(apply.data()), apply.size(),
                           "apply.cu", 0, nullptr, nullptr));
    void* cubin = nullptr;
    size_t size = 0;
    CU_CHECK(cuLinkComplete(link, &cubin, &size));
    linked.assign(static_cast<const char*>(cubin), static_cast<const char*>(cubin) + size);
  } catch (...) {
    cuLinkDestroy(link);
    throw;
  }
  CU_CHECK(cuLinkDestroy(link));
  return linked;
}
//! [culink]

struct Piece {
  nvJitLinkInputType type;
  const std::vector<char>* bytes;
  const char* name;
};

struct Linked {
  nvJitLinkResult result = NVJITLINK_SUCCESS;
  std::string log;  // nvJitLink's error log: why a link failed
  std::vector<char> cubin;
};

std::string errorLog(nvJitLinkHandle link) {
  size_t size = 0;
  if (nvJitLinkGetErrorLogSize(link, &size) != NVJITLINK_SUCCESS || size == 0) return "";
  std::vector<char> log(size);
  if (nvJitLinkGetErrorLog(link, log.data()) != NVJITLINK_SUCCESS) return "";
  return std::string(log.data());
}

//! [nvjitlink]
// nvJitLink, the toolkit's linker: a library like NVRTC, no context and no driver involved. -arch
// names the target; -lto turns on link-time optimisation of LTO-IR inputs. A failed link is an
// answer with a log; the linked cubin is copied out before the handle is destroyed.
Linked linkWithNvJitLink(const std::vector<Piece>& pieces, const std::vector<std::string>& options) {
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  nvJitLinkHandle link = nullptr;
  Linked out;
  out.result = nvJitLinkCreate(&link, static_cast<uint32_t>(argv.size()), argv.data());
  if (out.result != NVJITLINK_SUCCESS)
    throw std::runtime_error("nvJitLinkCreate failed: nvJitLinkResult " + std::to_string(out.result));
  for (const Piece& p : pieces)
    if (out.result == NVJITLINK_SUCCESS)
      out.result = nvJitLinkAddData(link, p.type, p.bytes->data(), p.bytes->size(), p.name);
  if (out.result == NVJITLINK_SUCCESS) out.result = nvJitLinkComplete(link);
  size_t size = 0;
  if (out.result == NVJITLINK_SUCCESS) out.result = nvJitLinkGetLinkedCubinSize(link, &size);
  out.cubin.resize(out.result == NVJITLINK_SUCCESS ? size : 0);
  if (out.result == NVJITLINK_SUCCESS) out.result = nvJitLinkGetLinkedCubin(link, out.cubin.data());
  out.log = errorLog(link);
  nvJitLinkDestroy(&link);
  return out;
}
//! [nvjitlink]

// apply over the ramp with a linked cubin's kernel: the mismatches against transform, 2x + 1.
size_t applyMismatches(const std::vector<char>& cubin) {
  CUlibrary library = loadImage(cubin, "a linked cubin");
  const std::vector<float> got = runInPlace(kernelNamed(library, "apply"), "apply", ramp<float>());
  CU_CHECK(cuLibraryUnload(library));
  return mismatches(got, [](float x) { return 2.0f * x + 1.0f; });
}

// One compile that must succeed, with its log in the contradiction when it does not.
Compiled compiled(const char* source, const char* name, const std::vector<std::string>& options) {
  Compiled c = compile(source, name, options);
  wb::expect(c.result == NVRTC_SUCCESS, std::string(name) + " compiled", c.log);
  return c;
}

//! [link]
// Relocatable device code (-rdc) leaves calls to other pieces open; a linker resolves them. The same
// two relocatable cubins, linked by the driver and by nvJitLink, and the link without one of them.
// Returns nvJitLink's linked cubin, for step 7.
std::vector<char> linkPieces(const Arch& arch) {
  const std::vector<std::string> rdc = {"--gpu-architecture=" + arch.sm(), "--relocatable-device-code=true"};
  const Compiled transform = compiled(kTransformSource, "transform.cu", rdc),
                 apply = compiled(kApplySource, "apply.cu", rdc);
  std::printf("-rdc cubins: transform.cu %s (functions: %s), apply.cu %s (functions: %s)\n",
              wb::bytes(transform.cubin.size()).c_str(), joined(wb::cubinFunctions(transform.cubin)).c_str(),
              wb::bytes(apply.cubin.size()).c_str(), joined(wb::cubinFunctions(apply.cubin)).c_str());
  const std::vector<char> byDriver = linkWithDriver(transform.cubin, apply.cubin);
  const Linked byLibrary = linkWithNvJitLink({{NVJITLINK_INPUT_CUBIN, &transform.cubin, "transform.cu"},
                                              {NVJITLINK_INPUT_CUBIN, &apply.cubin, "apply.cu"}},
                                             {"-arch=" + arch.sm()});
  wb::expect(byLibrary.result == NVJITLINK_SUCCESS, "nvJitLink linking the two cubins", byLibrary.log);
  const size_t wrongDriver = applyMismatches(byDriver), wrongLibrary = applyMismatches(byLibrary.cubin);
  std::printf("cuLink*:   %s, functions: %s; apply: %zu values wrong\n", wb::bytes(byDriver.size()).c_str(),
              joined(wb::cubinFunctions(byDriver)).c_str(), wrongDriver);
  std::printf("nvJitLink: %s, functions: %s; apply: %zu values wrong\n",
              wb::bytes(byLibrary.cubin.size()).c_str(), joined(wb::cubinFunctions(byLibrary.cubin)).c_str(),
              wrongLibrary);
  wb::expect(wrongDriver == 0 && wrongLibrary == 0, "both linked kernels computing transform",
             "wrong values");
  //! [link]
  //! [missing-piece]
  const Linked alone =
      linkWithNvJitLink({{NVJITLINK_INPUT_CUBIN, &apply.cubin, "apply.cu"}}, {"-arch=" + arch.sm()});
  std::printf("nvJitLink without transform.cu: nvJitLinkResult %d, and its error log:\n",
              static_cast<int>(alone.result));
  printLog(alone.log);
  wb::expect(alone.result != NVJITLINK_SUCCESS && alone.log.find("_Z9transformf") != std::string::npos,
             "the link refused, its log naming the missing function",
             "the link succeeded, or said nothing of it");
  return byLibrary.cubin;
}
//! [missing-piece]

//! [lto]
// -dlto makes NVRTC stop at LTO-IR, the optimiser's own form, instead of machine code. nvJitLink with
// -lto optimises the pieces together before it generates code, as if they were one source.
void linkTimeOptimisation(const Arch& arch, const std::vector<char>& linkedFromCubins) {
  const std::vector<std::string> lto = {"--gpu-architecture=" + arch.sm(), "--relocatable-device-code=true",
                                        "-dlto"};
  const Compiled transform = compiled(kTransformSource, "transform.cu", lto),
                 apply = compiled(kApplySource, "apply.cu", lto);
  std::printf("-dlto: nvrtcGetLTOIRSize %s and %s (nvrtcGetCUBINSize %zu and %zu)\n",
              wb::bytes(transform.ltoir.size()).c_str(), wb::bytes(apply.ltoir.size()).c_str(),
              transform.cubin.size(), apply.cubin.size());
  const Linked optimised = linkWithNvJitLink({{NVJITLINK_INPUT_LTOIR, &transform.ltoir, "transform.cu"},
                                              {NVJITLINK_INPUT_LTOIR, &apply.ltoir, "apply.cu"}},
                                             {"-arch=" + arch.sm(), "-lto"});
  wb::expect(optimised.result == NVJITLINK_SUCCESS, "nvJitLink -lto linking the LTO-IR", optimised.log);
  const std::vector<std::string> inLto = wb::cubinFunctions(optimised.cubin),
                                 inCubins = wb::cubinFunctions(linkedFromCubins);
  const size_t wrong = applyMismatches(optimised.cubin);
  std::printf("linked from LTO-IR: %s, functions: %s; apply: %zu values wrong\n",
              wb::bytes(optimised.cubin.size()).c_str(), joined(inLto).c_str(), wrong);
  std::printf("linked from cubins (step 6): %s, functions: %s\n", wb::bytes(linkedFromCubins.size()).c_str(),
              joined(inCubins).c_str());
  // Whether the optimiser inlines transform is its choice, not a promise: the output shows this one's.
  std::printf("transform is %s in the cubin linked from LTO-IR, %s in the one linked from cubins\n",
              contains(inLto, "_Z9transformf") ? "still a function of its own" : "gone (inlined into apply)",
              contains(inCubins, "_Z9transformf") ? "a function of its own" : "gone");
  wb::expect(!transform.ltoir.empty() && !apply.ltoir.empty() && wrong == 0,
             "LTO-IR from both pieces, linked by nvJitLink -lto into a kernel that computes transform",
             std::to_string(wrong) + " values wrong");
}
//! [lto]

// ------------------------------------------------------------------------------ the compile cache

//! [nvrtc-build]
// The NVRTC library this process runs, as a file: its path, size and modification time. nvrtcVersion
// answers major and minor only, and a patch release, which exists to change the code NVRTC makes,
// keeps both; it does not keep the file. NVRTC linked statically is part of the program, whose own
// file then stands in for it.
std::string nvrtcBuild() {
  std::string path = "/proc/self/exe";
  for (const std::string& p : loadedCompilerLibraries())
    if (fileName(p).rfind("libnvrtc.", 0) == 0) path = p;  // not libnvrtc-builtins
  char real[PATH_MAX];
  if (realpath(path.c_str(), real) != nullptr) path = real;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return path + " (unreadable)";
  return path + ", " + std::to_string(st.st_size) + " bytes, modified " + std::to_string(st.st_mtime);
}
//! [nvrtc-build]

//! [key]
// Everything that decides what NVRTC produces for a source. An entry made under another value of
// any of them may be wrong, or may not load: each is part of the key, spelled out in full.
struct CacheKey {
  std::string source;
  std::vector<std::string> options;  // the target architecture among them (--no-cache is not: it
                                     // changes where NVRTC looks, not what it makes)
  Arch arch;                         // the device's compute capability
  int nvrtcMajor = 0, nvrtcMinor = 0, driver = 0;
  std::string nvrtcFile;  // nvrtcBuild(): a patch release is another file
  std::string text() const {
    std::string t = "nvrtc " + std::to_string(nvrtcMajor) + "." + std::to_string(nvrtcMinor) +
                    "\nnvrtc file " + nvrtcFile + "\ndriver " + std::to_string(driver) +
                    "\ncompute capability " + std::to_string(arch.major) + "." + std::to_string(arch.minor);
    for (const std::string& o : options) t += "\noption " + o;  // one a line: no two lists read alike
    return t + "\nsource " + std::to_string(source.size()) + "\n" + source;
  }
};

CacheKey keyFor(const std::string& source, std::vector<std::string> extraOptions, const Arch& arch) {
  CacheKey key;
  key.source = source;
  key.options = {"--gpu-architecture=" + arch.sm()};
  key.arch = arch;
  key.options.insert(key.options.end(), extraOptions.begin(), extraOptions.end());
  check(nvrtcVersion(&key.nvrtcMajor, &key.nvrtcMinor), "nvrtcVersion");
  CU_CHECK(cuDriverGetVersion(&key.driver));
  key.nvrtcFile = nvrtcBuild();
  return key;
}
//! [key]

// FNV-1a, 64 bits: a file name for a key. Only where to look: the entry holds its whole key.
std::string hashName(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(h));
  return name;
}

const std::string kEntryMagic = "workbook nvrtc cache entry 2\n";

//! [cache-folder]
// The key is no secret (a source, options, versions), so whoever can write to the folder can plant
// an entry with the right key and a cubin of their own, and the cache would serve it to the driver.
// The folder must be this user's alone: made with mode 0700 where it does not exist (its parent
// must); one that is a link, another user's, or writable by group or others is refused. Returns why
// it may not be used, or "".
std::string notPrivate(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create " + dir + ": " + std::strerror(errno);
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return dir + " is not a folder";
  if (st.st_uid != geteuid()) return dir + " belongs to another user";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return dir +
           " is writable by group or others (what is in it cannot be trusted: remove it, or chmod 700 it and "
           "empty it)";
  return "";
}
//! [cache-folder]

//! [cache-read]
// A hit needs an entry whose stored key is exactly this key (the file name is only a hash of it) and
// whose cubin passes the image reader: a damaged entry, or one made for another key, is a miss,
// never a crash. This guards against accidents, not against a writer: that is the folder's job.
std::optional<std::vector<char>> readEntry(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string head = kEntryMagic + std::to_string(key.size()) + "\n" + key;
  if (bytes.size() <= head.size() || bytes.compare(0, head.size(), head) != 0) return std::nullopt;
  std::vector<char> cubin(bytes.begin() + static_cast<std::ptrdiff_t>(head.size()), bytes.end());
  if (!wb::imageProblem(cubin.data(), cubin.size(), wb::ImageKind::Cubin).empty()) return std::nullopt;
  return cubin;
}
//! [cache-read]

bool writeAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t wrote = write(fd, data, size);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    data += wrote, size -= static_cast<size_t>(wrote);
  }
  return true;
}

//! [cache-write]
// Written to a file no other writer can have (mkstemp: unique per call, so per process and per
// thread), flushed to the disk (fsync), then renamed into place: rename is atomic, so a reader finds
// the whole entry or none, and two writers of one key each leave a whole one.
void writeEntry(const std::string& path, const std::string& key, const std::vector<char>& cubin) {
  std::string partial = path + ".partial.XXXXXX";
  const int fd = mkstemp(partial.data());
  if (fd < 0) throw std::runtime_error("cannot create a file beside " + path + ": " + std::strerror(errno));
  const std::string head = kEntryMagic + std::to_string(key.size()) + "\n" + key;
  bool written =
      writeAll(fd, head.data(), head.size()) && writeAll(fd, cubin.data(), cubin.size()) && fsync(fd) == 0;
  written = close(fd) == 0 && written;
  if (!written || std::rename(partial.c_str(), path.c_str()) != 0) {
    unlink(partial.c_str());
    throw std::runtime_error("cannot write the cache entry " + path);
  }
}
//! [cache-write]

struct CacheStats {
  unsigned hits = 0, misses = 0;
};

//! [cache]
// The cubin for key: from the folder when an intact entry for exactly this key is there, else from
// NVRTC (with its own cache off: a miss compiles), stored for the next process that asks.
std::vector<char> cachedCubin(const std::string& dir, const CacheKey& key, CacheStats& stats) {
  const std::string text = key.text(), path = dir + "/" + hashName(text) + ".entry";
  if (std::optional<std::vector<char>> cubin = readEntry(path, text)) {
    ++stats.hits;
    return *cubin;
  }
  ++stats.misses;
  const Compiled c = compile(key.source, "cached.cu", key.options);
  if (c.result != NVRTC_SUCCESS || c.cubin.empty())
    throw std::runtime_error("cached.cu did not compile:\n" + c.log);
  writeEntry(path, text, c.cubin);
  return c.cubin;
}
//! [cache]

// Removes what an earlier run left in the cache folder (this lesson's entries and partial files
// only), so that the first request of this run is a real compile. Returns how many it removed.
unsigned emptyCache(const std::string& dir) {
  unsigned removed = 0;
  static const std::regex ours(R"([0-9a-f]{16}\.entry(\.partial\.[A-Za-z0-9]+)?)");
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && std::regex_match(entry.path().filename().string(), ours))
      removed += std::filesystem::remove(entry.path()) ? 1 : 0;
  return removed;
}

//! [cache-child]
// In a second process (this program with --child cache <folder>): the same request as the parent's
// first, answered from the folder. Prints "cache-child compilations <n> hits <n> <right|WRONG>".
int cacheChild(const std::string& dir) {
  if (const std::string why = notPrivate(dir); !why.empty())
    throw std::runtime_error("the cache folder: " + why);
  CU_CHECK(cuInit(0));
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxSetCurrent(primary));
  CacheStats stats;
  CUlibrary library =
      loadImage(cachedCubin(dir, keyFor(kAffineSource, {}, archOf(dev)), stats), "a cached cubin");
  const size_t wrong = affineMismatches(library);
  CU_CHECK(cuLibraryUnload(library));
  CU_CHECK(cuCtxSetCurrent(nullptr));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  std::printf("cache-child compilations %u hits %u %s\n", nvrtcCompilations, stats.hits,
              wrong == 0 ? "right" : "WRONG");
  return wb::kExitOk;
}
//! [cache-child]

//! [cache-use]
// The folder checked, and emptied of earlier runs' entries, so that the first request is a real
// compile. Then the same request again, the same source with one option more, and the first request
// from a second process.
void compileCache(const std::string& dir, const Arch& arch) {
  const std::string why = notPrivate(dir);
  wb::expect(why.empty(), "a cache folder that only this user can write to", why);
  const unsigned removed = emptyCache(dir);
  std::printf("cache folder %s (only this user may write to it): %u entries of an earlier run removed\n",
              std::filesystem::absolute(dir).c_str(), removed);
  const CacheKey key = keyFor(kAffineSource, {}, arch), other = keyFor(kAffineSource, {"--fmad=false"}, arch);
  std::printf(
      "key: NVRTC %d.%d, the file %s; driver %d; compute capability %d.%d; --gpu-architecture=%s; "
      "affine.cu (%zu bytes)\n",
      key.nvrtcMajor, key.nvrtcMinor, key.nvrtcFile.c_str(), key.driver, arch.major, arch.minor,
      arch.sm().c_str(), key.source.size());
  CacheStats stats;
  const unsigned c0 = nvrtcCompilations;
  const std::vector<char> first = cachedCubin(dir, key, stats);
  const unsigned c1 = nvrtcCompilations;
  const std::vector<char> second = cachedCubin(dir, key, stats);
  const unsigned c2 = nvrtcCompilations;
  const std::vector<char> third = cachedCubin(dir, other, stats);
  const unsigned c3 = nvrtcCompilations;
  std::printf("NVRTC compilations in this process, before and after each request:\n");
  std::printf("  first request: %u -> %u (a miss: compiled, NVRTC's own cache off, and stored)\n", c0, c1);
  std::printf("  same request:  %u -> %u (a hit: %s bytes as the first)\n", c1, c2,
              second == first ? "the same" : "OTHER");
  std::printf("  --fmad=false:  %u -> %u (a miss), and its cubin %s the first\n", c2, c3,
              third == first ? "is the same as" : "differs from");
  wb::expect(c1 == c0 + 1 && c2 == c1 && second == first && c3 == c2 + 1 && third != first && stats.hits == 1,
             "a miss compiling, a hit not compiling, and another option a miss with another cubin",
             "other counts");
  //! [cache-use]
  //! [cache-second-process]
  const wb::ProcessEnd end = wb::runProcess({wb::selfPath(), "--child", "cache", dir}, {}, kChildSeconds);
  unsigned compilations = 0, hits = 0;
  char verdict[16] = {};
  bool read = false;  // its line; the driver may print lines of its own before it (CUDA_LOG_FILE)
  std::istringstream lines(end.output);
  for (std::string line; !read && std::getline(lines, line);)
    read = std::sscanf(line.c_str(), "cache-child compilations %u hits %u %15s", &compilations, &hits,
                       verdict) == 3;
  std::printf("a second process, same request: compilations %u, hits %u, result %s\n", compilations, hits,
              read ? verdict : "none");
  wb::expect(
      end.code == wb::kExitOk && read && compilations == 0 && hits == 1 && std::strcmp(verdict, "right") == 0,
      "the second process served from the folder, without compiling",
      end.timedOut ? "it hung" : "it ended with code " + std::to_string(end.code) + ": " + end.output);
}
//! [cache-second-process]

// A source of `count` kernels k0, k1, ...: step 9 compiles sources of several sizes.
std::string manyKernels(unsigned count) {
  std::string source;
  for (unsigned i = 0; i < count; ++i)
    source += "extern \"C\" __global__ void k" + std::to_string(i) +
              "(float* x, unsigned n) {\n  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] = x[i] * " +
              std::to_string(i + 2) + ".0f + 1.0f;\n}\n";
  return source;
}

struct CompileCost {
  unsigned kernels;
  double compileMs;     // NVRTC with its own cache off (--no-cache): a compile
  double nvrtcCacheMs;  // NVRTC with its own cache allowed, the same source asked again; < 0: no such cache
  double cacheMs;       // this lesson's cache: a hit
};

//! [usable]
// From a cubin to every kernel usable in the current context: loaded, looked up, and loaded into the
// context (cuKernelGetFunction), which lazy loading would otherwise leave to the first launch.
CUlibrary usable(const std::vector<char>& cubin, unsigned kernels) {
  CUlibrary library = loadImage(cubin, "a cached cubin");
  for (unsigned i = 0; i < kernels; ++i) {
    CUfunction f = nullptr;
    CU_CHECK(cuKernelGetFunction(&f, kernelNamed(library, "k" + std::to_string(i))));
  }
  return library;
}
//! [usable]

//! [nvrtc-cache]
// NVRTC's own cache (12.9 and newer), timed the same way: the source compiled with the cache allowed,
// then asked again, and the second request timed. NVRTC reports no hits, so whether its cache
// answered is not known, only what the request cost. -1 where this NVRTC has no cache.
double nvrtcCacheAllowed(const CacheKey& key, unsigned kernels) {
  if (!nvrtcKeepsACache()) return -1;
  compile(key.source, "cached.cu", key.options, {}, NvrtcCache::Allowed);  // NVRTC may keep it now
  const wb::Stopwatch clock;
  const Compiled again = compile(key.source, "cached.cu", key.options, {}, NvrtcCache::Allowed);
  wb::expect(again.result == NVRTC_SUCCESS && !again.cubin.empty(), "the source compiled again", again.log);
  CUlibrary library = usable(again.cubin, kernels);
  const double ms = clock.ms();
  CU_CHECK(cuLibraryUnload(library));
  return ms;
}
//! [nvrtc-cache]

//! [cost]
// All three ways end at usable kernels. The compile is timed once, on a source not yet in the
// folder, with NVRTC's own cache off (a real compile: the count of compilations proves NVRTC was
// called, --no-cache that it compiled); this lesson's cache is the median of 5 hits.
CompileCost costOf(const std::string& dir, const Arch& arch, unsigned kernels) {
  const CacheKey key = keyFor(manyKernels(kernels), {}, arch);
  CacheStats stats;
  const unsigned before = nvrtcCompilations;
  const wb::Stopwatch clock;
  CUlibrary library = usable(cachedCubin(dir, key, stats), kernels);
  const double compileMs = clock.ms();
  CU_CHECK(cuLibraryUnload(library));
  std::vector<double> hits;
  for (int i = 0; i < 5; ++i) {
    const wb::Stopwatch hit;
    library = usable(cachedCubin(dir, key, stats), kernels);
    hits.push_back(hit.ms());
    CU_CHECK(cuLibraryUnload(library));
  }
  std::sort(hits.begin(), hits.end());
  wb::expect(nvrtcCompilations == before + 1 && stats.misses == 1 && stats.hits == 5,
             "one real compile, then five hits without compiling", "other counts");
  return {kernels, compileMs, nvrtcCacheAllowed(key, kernels), hits[2]};
}
//! [cost]

//! [cost-table]
std::vector<CompileCost> compileAgainstCache(const std::string& dir, const Arch& arch) {
  std::vector<CompileCost> costs;
  for (unsigned kernels : {1u, 4u, 16u, 64u}) costs.push_back(costOf(dir, arch, kernels));
  std::printf("milliseconds to usable kernels, three ways:\n");
  std::printf("kernels  %20s  %27s  %19s  %15s\n", "NVRTC, --no-cache", "NVRTC, its cache allowed",
              "this lesson's cache", "compile / hit");
  bool cheaper = true;
  for (const CompileCost& c : costs) {
    char own[32] = "-";  // "-": this NVRTC has no cache of its own
    if (c.nvrtcCacheMs >= 0) std::snprintf(own, sizeof own, "%.3f", c.nvrtcCacheMs);
    std::printf("%7u  %20.3f  %27s  %19.3f  %14.1fx\n", c.kernels, c.compileMs, own, c.cacheMs,
                c.compileMs / c.cacheMs);
    cheaper = cheaper && c.cacheMs < c.compileMs;
  }
  std::printf("a compile of %u kernels took %.1fx as long as one of %u\n", costs.back().kernels,
              costs.back().compileMs / costs.front().compileMs, costs.front().kernels);
  wb::expect(cheaper, "a hit of this lesson's cache cheaper than a compile at every size",
             "it was not, somewhere");
  return costs;
}
//! [cost-table]

wb::FigureTable tableOf(const std::vector<CompileCost>& costs) {
  wb::FigureTable table("kernels,way,milliseconds");
  for (const CompileCost& c : costs) {
    table.row("%u,NVRTC --no-cache (a compile) + load,%.3f", c.kernels, c.compileMs);
    if (c.nvrtcCacheMs > 0) table.row("%u,NVRTC with its cache allowed (asked again) + load,%.3f", c.kernels, c.nvrtcCacheMs);
    table.row("%u,this lesson's cache (a hit) + load,%.3f", c.kernels, c.cacheMs);
  }
  return table;
}

// The libraries this program names in its ELF file (DT_NEEDED of its dynamic section): what the
// dynamic loader maps before main, and what ldd lists.
std::vector<std::string> neededLibraries() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  const std::vector<char> elf{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> names;
  if (elf.size() < sizeof(Elf64_Ehdr)) return names;
  Elf64_Ehdr header;
  std::memcpy(&header, elf.data(), sizeof header);
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr dynamic, strings;
    std::memcpy(&dynamic, elf.data() + header.e_shoff + i * header.e_shentsize, sizeof dynamic);
    if (dynamic.sh_type != SHT_DYNAMIC) continue;
    std::memcpy(&strings, elf.data() + header.e_shoff + dynamic.sh_link * header.e_shentsize, sizeof strings);
    for (size_t at = dynamic.sh_offset; at + sizeof(Elf64_Dyn) <= dynamic.sh_offset + dynamic.sh_size; at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry;
      std::memcpy(&entry, elf.data() + at, sizeof entry);
      if (entry.d_tag == DT_NEEDED) names.emplace_back(elf.data() + strings.sh_offset + entry.d_un.d_val);
    }
  }
  return names;
}

//! [ships]
// What the program names against what the process loaded: NVRTC opens its builtins library itself
// at the first compile, so ldd does not list it, and a package built from ldd's list lacks it.
void whatShips(const std::vector<std::string>& loadedBefore) {
  std::vector<std::string> needed;
  for (const std::string& n : neededLibraries())
    if (n.find("nvrtc") != std::string::npos || n.find("nvJitLink") != std::string::npos ||
        n.find("cuda") != std::string::npos)
      needed.push_back(n);
  const std::vector<std::string> loaded = loadedCompilerLibraries();
  std::printf("the program names (DT_NEEDED, what ldd lists): %s\n", joined(needed).c_str());
  std::printf("loaded before the first compile: %s\n", joined(loadedBefore).c_str());
  std::printf("loaded now:\n");
  for (const std::string& path : loaded) std::printf("  %s\n", path.c_str());
  const bool namedBuiltins = anyContains(needed, "nvrtc-builtins"),
             hadBuiltins = anyContains(loadedBefore, "nvrtc-builtins");
  const bool hasBuiltins = anyContains(fileNames(loaded), "nvrtc-builtins");
  wb::expect(!namedBuiltins && !hadBuiltins && hasBuiltins && anyContains(needed, "libnvrtc"),
             "libnvrtc named by the program, libnvrtc-builtins loaded by NVRTC at the first compile",
             "other libraries named or loaded");
}
//! [ships]

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::string csvPath, cacheDir = "lesson19-cache";
  try {
    if (args.size() == 3 && args[0] == "--child" && args[1] == "cache") return cacheChild(args[2]);
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--csv" && i + 1 < args.size()) {
        csvPath = args[++i];
      } else if (args[i] == "--cache" && i + 1 < args.size()) {
        cacheDir = args[++i];
      } else {
        std::fprintf(stderr, "usage: %s [--cache DIR] [--csv lesson19-figure.csv]\n", argv[0]);
        return wb::kExitUsage;
      }
    }
    wb::checkEnvironment({
        {"CUDA_FORCE_PTX_JIT", wb::Under::Stops,
         "the cubins NVRTC makes here carry no PTX, and NVIDIA documents that a kernel without PTX then fails to load"},
        {"CUDA_FORCE_JIT", wb::Under::Stops,
         "the cubins NVRTC makes here carry no PTX, and NVIDIA documents that a kernel without PTX then fails to load"},
        {"CUDA_DISABLE_PTX_JIT", wb::Under::Stops, "step 3 loads PTX, which the driver must compile, and would refuse"},
        {"CUDA_DISABLE_JIT", wb::Under::Stops, "step 3 loads PTX, which the driver must compile, and would refuse"},
        {"CUDA_CACHE_DISABLE", wb::Under::Teaches,
         "the driver compiles step 3's PTX afresh; libnvrtc 13.0's cache code reads this variable too, so step 9's "
         "column 'NVRTC, its cache allowed' may be a compile; this lesson's cache is its own folder, untouched"},
        {"CUDA_CACHE_PATH", wb::Under::Teaches,
         "the driver keeps its compile of step 3's PTX there, and NVRTC 12.9+ its own entries (libnvrtc 13.0 "
         "stores them in the driver's cache); this lesson's cache is the folder step 8 names"},
        {"CUDA_CACHE_MAXSIZE", wb::Under::Teaches,
         "it bounds the driver's cache, which NVRTC 12.9+ keeps its own entries in (libnvrtc 13.0); this lesson's "
         "cache has no size limit"},
    });
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    const Arch arch = archOf(dev);
    // Under compute-sanitizer (WORKBOOK_UNDER_SANITIZER) every driver call is slowed: times mean nothing there.
    const bool sanitized = wb::underSanitizer();

    wb::step(1, "NVRTC, nvJitLink and the device's architecture");
    const std::vector<std::string> loadedBefore = versionsAndTarget(dev, arch);
    wb::step(2, "Compile to a cubin, load it, launch it");
    cubinLoadLaunch(arch);
    wb::step(3, "PTX instead: a virtual architecture");
    ptxInstead(arch);
    wb::step(4, "The compile log");
    compileLogs(arch, supportedArchs());
    wb::step(5, "Templates: name expressions, not guessed names");
    templates(arch);
    wb::step(6, "Linking relocatable pieces at run time");
    const std::vector<char> linked = linkPieces(arch);
    wb::step(7, "Link-time optimisation: LTO-IR and nvJitLink");
    linkTimeOptimisation(arch, linked);
    wb::step(8, "A compile cache keyed by what invalidates it");
    compileCache(cacheDir, arch);
    wb::step(9, "Compiling against loading from the cache");
    std::vector<CompileCost> costs;
    if (sanitized)
      std::printf("left out under compute-sanitizer, which slows every driver call\n");
    else
      costs = compileAgainstCache(cacheDir, arch);
    wb::step(10, "What a deployed program ships");
    whatShips(loadedBefore);

    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return tableOf(costs).save(csvPath, 9);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

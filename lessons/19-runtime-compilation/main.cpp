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
// compile this lesson means as one passes it. Last, what a deployed program must ship beside NVRTC.
// A compile cache of the program's own, and what it saves, is the optional page's program,
// deeper.cpp (steps 9 and 10).
//
// APIs: nvrtcVersion, nvrtcGetSupportedArchs, nvrtcCreateProgram, nvrtcCompileProgram,
//       nvrtcGetProgramLog, nvrtcGetCUBIN, nvrtcGetPTX, nvrtcGetLTOIR, nvrtcAddNameExpression,
//       nvrtcGetLoweredName, nvrtcDestroyProgram, nvJitLinkVersion, nvJitLinkCreate,
//       nvJitLinkAddData, nvJitLinkComplete, nvJitLinkGetLinkedCubin, nvJitLinkGetErrorLog,
//       nvJitLinkDestroy, cuLinkCreate, cuLinkAddData, cuLinkComplete, cuLinkDestroy,
//       cuLibraryLoadData, cuLibraryGetKernel, cuLibraryUnload, cuDeviceGetAttribute, cuDriverGetVersion
// Run:  ctest -R lesson19   (or build/lessons/lesson19-runtime-compilation)
#include "nvrtc_checked.hpp"
#include "runtime_compilation.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

// NVRTC's compile (wb::nvrtcCompile) and nvJitLink's link are in common/nvrtc_checked.hpp, quoted on
// the optional page: this lesson's tests and exercise checks compile and link through them too. The
// architecture, the affine source, loading an image and running a kernel are shared with deeper.cpp
// (common/runtime_compilation.hpp).
using wb::affineMismatches;
using wb::Arch;
using wb::archOf;
using wb::Compiled;
using wb::fileName;
using wb::kAffineSource;
using wb::kernelNamed;
using wb::Linked;
using wb::linkWithNvJitLink;
using wb::loadImage;
using wb::mismatches;
using wb::ramp;
using wb::runInPlace;

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

std::vector<std::string> fileNames(const std::vector<std::string>& paths) {
  std::vector<std::string> names;
  for (const std::string& p : paths) names.push_back(fileName(p));
  return names;
}

bool anyContains(const std::vector<std::string>& names, const char* part) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

//! [versions]
// The compiler's version, the linker's, the driver's, and the architectures this NVRTC can compile
// for. The device's real architecture must be among them for a cubin; an NVRTC older than the GPU
// does not know it.
std::vector<std::string> versionsAndTarget(CUdevice dev, const Arch& arch) {
  int nvrtcMajor = 0, nvrtcMinor = 0, driver = 0;
  wb::nvrtcCheck(nvrtcVersion(&nvrtcMajor, &nvrtcMinor), "nvrtcVersion");
  CU_CHECK(cuDriverGetVersion(&driver));
  const std::vector<int> archs = wb::nvrtcSupportedArchs();
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
  std::printf("%s\n", wb::nvrtcKeepsACache()
                          ? "this NVRTC keeps a compile cache of its own (12.9 and newer): every compile here passes "
                            "--no-cache, except where step 10 times that cache"
                          : "this NVRTC has no compile cache of its own (NVRTC's came with 12.9)");
  const std::vector<std::string> before = fileNames(wb::loadedCompilerLibraries());
  std::printf("NVRTC and nvJitLink libraries loaded before the first compile: %s\n", joined(before).c_str());
  return before;
}

//! [cubin]
// The source, compiled for this device's real architecture: a cubin, checked by the course's image
// reader like every image (common/image_reader.hpp), loaded with cuLibraryLoadData and launched.
void cubinLoadLaunch(const Arch& arch) {
  const Compiled c = wb::nvrtcCompile(kAffineSource, "affine.cu", {"--gpu-architecture=" + arch.sm()});
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
  const Compiled c = wb::nvrtcCompile(kAffineSource, "affine.cu", {"--gpu-architecture=" + arch.compute()});
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
  const Compiled broken = wb::nvrtcCompile(kBrokenSource, "broken.cu", {"--gpu-architecture=" + arch.sm()});
  std::printf("broken.cu: %s, and its log:\n", nvrtcGetErrorString(broken.result));
  printLog(broken.log);
  const int line = errorLine(broken.log, "broken.cu");
  std::printf("the log names line %d of broken.cu\n", line);
  wb::expect(broken.result == NVRTC_ERROR_COMPILATION && line == 3,
             "NVRTC_ERROR_COMPILATION and a log naming line 3",
             nvrtcGetErrorString(broken.result) + std::string(", line ") + std::to_string(line));
  const Compiled warns = wb::nvrtcCompile(kWarningSource, "warns.cu", {"--gpu-architecture=" + arch.sm()});
  std::printf("warns.cu: %s, and a log:\n", nvrtcGetErrorString(warns.result));
  printLog(warns.log);
  const std::string newer =
      "--gpu-architecture=sm_" + std::to_string(archs.back() + 1);  // past NVRTC's newest
  const Compiled unknown = wb::nvrtcCompile(kWarningSource, "warns.cu", {newer});
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
  const Compiled named =
      wb::nvrtcCompile(kScaleSource, "scale.cu", {"--gpu-architecture=" + arch.sm()}, expressions);
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
  const Compiled bare = wb::nvrtcCompile(kScaleSource, "scale.cu", {"--gpu-architecture=" + arch.sm()});
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

// apply over the ramp with a linked cubin's kernel: the mismatches against transform, 2x + 1.
size_t applyMismatches(const std::vector<char>& cubin) {
  CUlibrary library = loadImage(cubin, "a linked cubin");
  const std::vector<float> got = runInPlace(kernelNamed(library, "apply"), "apply", ramp<float>());
  CU_CHECK(cuLibraryUnload(library));
  return mismatches(got, [](float x) { return 2.0f * x + 1.0f; });
}

// One compile that must succeed, with its log in the contradiction when it does not.
Compiled compiled(const char* source, const char* name, const std::vector<std::string>& options) {
  Compiled c = wb::nvrtcCompile(source, name, options);
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

//! [ships]
// What the program names against what the process loaded: NVRTC opens its builtins library itself
// at the first compile, so ldd does not list it, and a package built from ldd's list lacks it.
void whatShips(const std::vector<std::string>& loadedBefore) {
  std::vector<std::string> needed;
  for (const std::string& n : wb::neededLibraries())
    if (n.find("nvrtc") != std::string::npos || n.find("nvJitLink") != std::string::npos ||
        n.find("cuda") != std::string::npos)
      needed.push_back(n);
  const std::vector<std::string> loaded = wb::loadedCompilerLibraries();
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
  try {
    if (argc > 1) {
      std::fprintf(stderr, "usage: %s (the compile cache is the optional page's program: %s-deeper)\n", argv[0],
                   argv[0]);
      return wb::kExitUsage;
    }
    wb::checkEnvironment({
        {"CUDA_FORCE_PTX_JIT", wb::Under::Stops,
         "the cubins NVRTC makes here carry no PTX, and NVIDIA documents that a kernel without PTX then fails to load"},
        {"CUDA_FORCE_JIT", wb::Under::Stops,
         "the cubins NVRTC makes here carry no PTX, and NVIDIA documents that a kernel without PTX then fails to load"},
        {"CUDA_DISABLE_PTX_JIT", wb::Under::Stops, "step 3 loads PTX, which the driver must compile, and would refuse"},
        {"CUDA_DISABLE_JIT", wb::Under::Stops, "step 3 loads PTX, which the driver must compile, and would refuse"},
        {"CUDA_CACHE_DISABLE", wb::Under::Teaches,
         "the driver compiles step 3's PTX afresh (every NVRTC compile here passes --no-cache where NVRTC has a cache)"},
        {"CUDA_CACHE_PATH", wb::Under::Teaches, "the driver keeps its compile of step 3's PTX there"},
        {"CUDA_CACHE_MAXSIZE", wb::Under::Teaches, "it bounds the driver's cache, where step 3's compiled PTX is kept"},
    });
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    const Arch arch = archOf(dev);

    wb::step(1, "NVRTC, nvJitLink and the device's architecture");
    const std::vector<std::string> loadedBefore = versionsAndTarget(dev, arch);
    wb::step(2, "Compile to a cubin, load it, launch it");
    cubinLoadLaunch(arch);
    wb::step(3, "PTX instead: a virtual architecture");
    ptxInstead(arch);
    wb::step(4, "The compile log");
    compileLogs(arch, wb::nvrtcSupportedArchs());
    wb::step(5, "Templates: name expressions, not guessed names");
    templates(arch);
    wb::step(6, "Linking relocatable pieces at run time");
    const std::vector<char> linked = linkPieces(arch);
    wb::step(7, "Link-time optimisation: LTO-IR and nvJitLink");
    linkTimeOptimisation(arch, linked);
    wb::step(8, "What a deployed program ships");
    whatShips(loadedBefore);

    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

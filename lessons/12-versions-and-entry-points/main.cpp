// Lesson 12: versions and entry points.
//
// What you learn: why a binary that built fine will not start, or will not load its kernels,
// somewhere else. Three versions meet in a running program: the cuda.h it was compiled against
// (CUDA_VERSION), the driver it runs on (cuDriverGetVersion), and the toolkit whose nvcc built its
// kernel images. The program imports versioned driver symbols (it lists them from its own dynamic
// symbol table): a libcuda that lacks one stops the program before main, with no CUresult.
// cuGetProcAddress looks a driver function up at run time, by name and CUDA version, and says why
// when it cannot; dlopen of libcuda.so.1 makes the driver itself optional. Then images against
// devices and drivers: a cubin for another architecture, PTX from a newer toolkit (edited from the
// built PTX at run time), PTX for a newer GPU, and PTX that the driver compiles for this one. Last,
// what the JIT costs and where its cache is.
//
// APIs: cuDriverGetVersion, cuGetProcAddress, cuModuleLoadData, cuLibraryLoadData,
//       cuLibraryGetKernel, cuKernelGetFunction, cuModuleGetFunction, cuLaunchKernel
// Run:  ctest -R lesson12   (or build/lessons/lesson12-versions-and-entry-points)
#include "process.hpp"
#include "scratch.hpp"
#include "vector_ops.hpp"
#include "workbook.hpp"

#include <cudaTypedefs.h>  // PFN_<call>_v<version>: the function pointer types of cuda.h's calls
#include <dlfcn.h>
#include <elf.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

std::string version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

//! [versions]
// The three versions, and what minor version compatibility promises about them.
void threeVersions() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");
  std::smatch isa;
  const std::string text(ptx.data());
  std::regex_search(text, isa, std::regex(R"(\.version ([0-9.]+))"));
  std::printf("cuda.h this program was compiled against: CUDA_VERSION %d (CUDA %s)\n", CUDA_VERSION,
              version(CUDA_VERSION).c_str());
  std::printf("the driver it runs on supports:           CUDA %s (cuDriverGetVersion %d)\n", version(driver).c_str(),
              driver);
  std::printf("the toolkit whose nvcc built its images:  CUDA %s (its PTX says .version %s)\n",
              wb::imageToolkitVersion().c_str(), isa.size() > 1 ? isa[1].str().c_str() : "?");
  std::printf("same major version, driver at least as new as the toolkit: %s\n",
              driver / 1000 == CUDA_VERSION / 1000 && driver >= CUDA_VERSION ? "yes"
              : driver / 1000 == CUDA_VERSION / 1000 ? "no: minor version compatibility applies (see the page)"
                                                     : "no: a different major version");
}
//! [versions]

//! [imports]
// The undefined dynamic symbols of this very program whose names start with "cu": the driver
// functions the loader must find in libcuda before main runs. Read from the ELF file itself.
std::vector<std::string> importedDriverSymbols() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  const std::vector<char> elf{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> names;
  if (elf.size() < sizeof(Elf64_Ehdr)) return names;
  Elf64_Ehdr header;
  std::memcpy(&header, elf.data(), sizeof header);
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section, strings;
    std::memcpy(&section, elf.data() + header.e_shoff + i * header.e_shentsize, sizeof section);
    if (section.sh_type != SHT_DYNSYM) continue;
    std::memcpy(&strings, elf.data() + header.e_shoff + section.sh_link * header.e_shentsize, sizeof strings);
    for (size_t at = section.sh_offset; at + sizeof(Elf64_Sym) <= section.sh_offset + section.sh_size;
         at += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      std::memcpy(&symbol, elf.data() + at, sizeof symbol);
      const std::string name = elf.data() + strings.sh_offset + symbol.st_name;
      if (symbol.st_shndx == SHN_UNDEF && name.rfind("cu", 0) == 0) names.push_back(name);
    }
  }
  return names;
}
//! [imports]

void listImports() {
  const auto names = importedDriverSymbols();
  std::set<std::string> versioned;
  for (const auto& n : names)
    if (std::regex_search(n, std::regex("_v[0-9]+$"))) versioned.insert(n);
  std::printf("this program imports %zu driver functions by name; %zu of them by a versioned name:\n ",
              names.size(), versioned.size());
  for (const auto& n : versioned) std::printf(" %s", n.c_str());
  std::printf("\n");
}

const char* statusName(CUdriverProcAddressQueryResult s) {
  switch (s) {
    case CU_GET_PROC_ADDRESS_SUCCESS: return "CU_GET_PROC_ADDRESS_SUCCESS";
    case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: return "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND";
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: return "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT";
    default: return "unknown status";
  }
}

// One lookup, printed: what cuGetProcAddress returned, the status and whether a pointer came back.
void* lookUp(const char* symbol, int cudaVersion) {
  void* pfn = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  const CUresult rc = cuGetProcAddress(symbol, &pfn, cudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  std::printf("  cuGetProcAddress(\"%s\", %d): %s, %s, %s\n", symbol, cudaVersion, wb::errorName(rc).c_str(),
              rc == CUDA_SUCCESS ? statusName(status) : "no status", pfn ? "a function pointer" : "no pointer");
  return rc == CUDA_SUCCESS ? pfn : nullptr;
}

//! [proc-address]
// Driver functions looked up at run time, by name and by the CUDA version whose signature the
// caller expects; each pointer is cast to its type from cudaTypedefs.h before it is called.
void entryPoints(CUdevice dev) {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  if (auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(lookUp("cuMemAlloc", 12000))) {
    CUdeviceptr p = 0;
    std::printf("    called: %s\n", wb::errorName(alloc(&p, 4096)).c_str());
    CU_CHECK(cuMemFree(p));
  }
  // The version asked for picks the signature: up to 11.3 cuCtxCreate took three arguments
  // (cuCtxCreate_v2, PFN_cuCtxCreate_v3020); from 11.4 the lookup returns cuCtxCreate_v3, which
  // takes execution-affinity parameters first (PFN_cuCtxCreate_v11040).
  if (auto create = reinterpret_cast<PFN_cuCtxCreate_v3020>(lookUp("cuCtxCreate", 11000))) {
    CUcontext ctx = nullptr;
    std::printf("    called with three arguments: %s\n", wb::errorName(create(&ctx, 0, dev)).c_str());
    CU_CHECK(cuCtxDestroy(ctx));
  }
  if (auto create = reinterpret_cast<PFN_cuCtxCreate_v11040>(lookUp("cuCtxCreate", 12000))) {
    CUcontext ctx = nullptr;
    std::printf("    called with five (no affinity parameters): %s\n",
                wb::errorName(create(&ctx, nullptr, 0, 0, dev)).c_str());
    CU_CHECK(cuCtxDestroy(ctx));
  }
  lookUp("cuLibraryLoadData", 11080);  // added in 12.0: not in 11.8's set
  lookUp("cuNoSuchFunction", 12000);
  lookUp("cuMemAlloc", driver + 1000);  // newer than this driver
}
//! [proc-address]

//! [dlopen]
// A program for which the GPU is optional links no CUDA library: it opens the driver at run time
// and asks it for everything else. If the dlopen fails, there is no driver, and the program can
// say so and carry on. (This program links libcuda, so here dlopen finds the one already loaded.)
void openTheDriver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::printf("dlopen(libcuda.so.1): %s\n", dlerror());
    return;
  }
  using GetProcAddress = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto getProc = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
  void* pfn = nullptr;
  if (getProc) getProc("cuDriverGetVersion", &pfn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  int driver = 0;
  if (pfn) reinterpret_cast<PFN_cuDriverGetVersion_v2020>(pfn)(&driver);
  std::printf("dlopen(libcuda.so.1), dlsym(cuGetProcAddress_v2), then cuDriverGetVersion through it: %d\n", driver);
  dlclose(lib);
}
//! [dlopen]

// The built PTX with one directive changed: ".version 9.0" -> ".version 9.9", say.
std::string editPtx(const std::string& directive, const std::string& value) {
  const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");
  return std::regex_replace(std::string(ptx.data()), std::regex("\\" + directive + " [^\\n]*"), directive + " " + value,
                            std::regex_constants::format_first_only);
}

// Prints what a load returned; a module that did load (none should) is unloaded again.
void report(const char* what, CUresult rc, CUmodule loaded = nullptr) {
  std::printf("  %-58s %s (%d)\n", what, wb::errorName(rc).c_str(), static_cast<int>(rc));
  if (rc == CUDA_SUCCESS && loaded) CU_CHECK(cuModuleUnload(loaded));
}

//! [images]
// Images against this device and this driver, each derived from the built images at run time.
void imagesAgainstDevice(CUdevice dev) {
  int major = 0, minor = 0;
  CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  CUmodule module = nullptr;
  for (unsigned arch : wb::builtArchitectures())
    if (arch / 10 != static_cast<unsigned>(major)) {
      const std::string cubin = wb::verifiedImagePath("vector_ops.sm_" + std::to_string(arch) + ".cubin");
      const CUresult rc = cuModuleLoad(&module, cubin.c_str());
      report(("a cubin for sm_" + std::to_string(arch) + ", cuModuleLoad").c_str(), rc, module);
      break;
    }
  const std::string future = editPtx(".version", "9.9");  // PTX from a toolkit newer than the driver
  CUresult rc = cuModuleLoadData(&module, future.c_str());
  report("PTX .version 9.9, cuModuleLoadData", rc, module);
  CUlibrary library = nullptr;
  const CUresult loaded = cuLibraryLoadData(&library, future.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  report("PTX .version 9.9, cuLibraryLoadData", loaded);
  if (loaded == CUDA_SUCCESS) {
    CUkernel fill = nullptr;
    const CUresult got = cuLibraryGetKernel(&fill, library, "fill");
    report("  then cuLibraryGetKernel(fill)", got);
    CUfunction f = nullptr;
    if (got == CUDA_SUCCESS)
      report("  then cuKernelGetFunction (loads it into this context)", cuKernelGetFunction(&f, fill));
    CU_CHECK(cuLibraryUnload(library));
  }
  const std::string newer = "sm_" + std::to_string(major * 10 + minor + 10);  // a GPU newer than this one
  rc = cuModuleLoadData(&module, editPtx(".target", newer).c_str());
  report(("PTX .target " + newer + ", cuModuleLoadData").c_str(), rc, module);
}
//! [images]

// A run of the JIT child (below) in a fresh process with its own cache folder: what it measured,
// and how many files the driver left in that folder (more than none: it compiled, and cached it).
struct JitRun {
  double ms = 0;
  bool right = false;
  std::size_t files = 0;
};

// The variables that change what the JIT does: each child gets exactly the setting its step needs,
// whatever the user's shell sets (the cache's size back at its documented default; the JIT not
// forced, so that time is the PTX's compile).
JitRun runJitChild(const std::string& cache, bool cacheDisabled = false) {
  const wb::ProcessEnd end = wb::runProcess(
      {wb::selfPath(), "--jit-child"},
      {"CUDA_CACHE_PATH=" + cache, cacheDisabled ? "CUDA_CACHE_DISABLE=1" : "CUDA_CACHE_DISABLE=0",
       "CUDA_CACHE_MAXSIZE=1073741824", "CUDA_FORCE_PTX_JIT", "CUDA_FORCE_JIT"},
      60);
  JitRun run;
  char verdict[16] = {0};
  bool read = false;  // its line "jit <ms> right"; the driver may print warnings of its own before it
  std::istringstream lines(end.output);
  for (std::string line; !read && std::getline(lines, line);)
    read = std::sscanf(line.c_str(), "jit %lf %15s", &run.ms, verdict) == 2;
  // A child that failed has no time to report: that is an error of this run, never a figure.
  wb::expect(end.code == 0 && read, "a kernel compiled from PTX in a child process",
             end.timedOut ? "the child hung" : "the child ended with code " + std::to_string(end.code) + ": " + end.output);
  run.right = std::strcmp(verdict, "right") == 0;
  run.files = wb::regularFilesUnder(cache);
  return run;
}

//! [jit-forward]
// PTX for the oldest built architecture, compiled by the driver for this device: how a fatbin's
// PTX keeps working on GPUs newer than every architecture it was built for. In a child with an
// empty cache folder of its own, so no earlier run's cache can answer instead of the compiler.
void ptxRunsForward(CUdevice dev) {
  int major = 0, minor = 0;
  CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  wb::ScratchDir dir;
  const JitRun run = runJitChild(dir.path() + "/cache");
  std::printf("PTX for sm_%u, compiled by the driver for this sm_%d%d device in a fresh process with an empty\n"
              "cache folder (%zu files in it afterwards): result %s\n",
              wb::builtArchitectures().front(), major, minor, run.files, run.right ? "right" : "WRONG");
  wb::expect(run.right, "the right result from PTX compiled for this device", "wrong values");
  wb::expect(run.files > 0, "a compile (the driver caches what it compiles)", "the cache folder stayed empty");
}
//! [jit-forward]

//! [jit-child]
// In a child process: load the PTX and time until its kernel is usable (under lazy loading the
// compile happens at cuModuleGetFunction), then run it. Prints "jit <ms> right|WRONG".
int jitChild() {
  CU_CHECK(cuInit(0));
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU_CHECK(cuCtxSetCurrent(ctx));
  const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");
  wb::Stopwatch clock;
  CUmodule module = nullptr;
  CU_CHECK(cuModuleLoadData(&module, ptx.data()));
  CUfunction fill = nullptr, scale = nullptr;
  CU_CHECK(cuModuleGetFunction(&fill, module, "fill"));
  const double ms = clock.ms();
  CU_CHECK(cuModuleGetFunction(&scale, module, "scale"));
  const bool right = wb::mismatches(wb::fillAndScale(fill, scale, 1u << 16, 2, 3, 1), 7.0f) == 0;
  std::printf("jit %.3f %s\n", ms, right ? "right" : "WRONG");
  CU_CHECK(cuModuleUnload(module));
  CU_CHECK(cuCtxSetCurrent(nullptr));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  return wb::kExitOk;
}
//! [jit-child]

//! [jit-cache]
// Three fresh processes: an empty cache folder, the same folder again, and the cache disabled.
void jitCache() {
  wb::ScratchDir dir;  // removed with both cache folders at the end
  const std::string cache = dir.path() + "/cache", unused = dir.path() + "/disabled";
  const auto show = [](const char* what, const JitRun& run) {
    std::printf("  %-26s %8.3f ms to a usable kernel; files in its cache folder: %zu\n", what, run.ms, run.files);
  };
  const JitRun first = runJitChild(cache);
  show("first load, empty cache", first);
  const JitRun second = runJitChild(cache);
  show("second load, same cache", second);
  const JitRun off = runJitChild(unused, true);
  show("cache disabled", off);
  wb::expect(first.files > 0 && second.files == first.files && second.ms < first.ms,
             "the second load served by the cache (faster, no new files)",
             "first " + std::to_string(first.ms) + " ms, second " + std::to_string(second.ms) + " ms");
  wb::expect(off.files == 0 && first.right && second.right && off.right,
             "every load right, and nothing cached with the cache disabled", "see the lines above");
}
//! [jit-cache]

int main(int argc, char** argv) {
  try {
    if (argc == 2 && std::strcmp(argv[1], "--jit-child") == 0) return jitChild();
    wb::checkEnvironment({
        {"CUDA_DISABLE_PTX_JIT", wb::Under::Stops, "step 5 compiles PTX; the driver would refuse with another code"},
        {"CUDA_DISABLE_JIT", wb::Under::Stops, "step 5 compiles PTX; the driver would refuse with another code"},
        {"CUDA_FORCE_PTX_JIT", wb::Under::Controls, "the JIT's children of steps 5 and 6 run without it"},
        {"CUDA_FORCE_JIT", wb::Under::Controls, "the JIT's children of steps 5 and 6 run without it"},
        {"CUDA_CACHE_DISABLE", wb::Under::Controls, "steps 5 and 6 give each child its own cache setting"},
        {"CUDA_CACHE_MAXSIZE", wb::Under::Controls, "steps 5 and 6 run their children with the default size"},
        {"CUDA_CACHE_PATH", wb::Under::Controls, "steps 5 and 6 give each child its own empty cache folder"},
        {"CUDA_MODULE_LOADING", wb::Under::Teaches,
         "step 5's loads of newer PTX show what this mode does (the page explains lazy loading, the default)"},
    });
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    wb::step(1, "Three versions");
    threeVersions();
    wb::step(2, "What the program imports");
    listImports();
    wb::step(3, "Entry points at run time");
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    entryPoints(dev);
    wb::step(4, "The driver as an optional library");
    openTheDriver();
    wb::step(5, "Images against devices and drivers");
    imagesAgainstDevice(dev);
    ptxRunsForward(dev);
    wb::step(6, "What the JIT costs, and its cache");
    jitCache();
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

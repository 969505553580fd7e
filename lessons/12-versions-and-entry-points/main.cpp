// Lesson 12: versions and entry points.
//
// What you learn: why a binary that built fine will not start, or will not load its kernels,
// somewhere else. Three versions meet in a running program: the cuda.h it was compiled against
// (CUDA_VERSION), the driver it runs on (cuDriverGetVersion), and the toolkit whose nvcc built its
// kernel images. The program imports versioned driver symbols (it lists them from its own dynamic
// symbol table): a libcuda that lacks one kills the program with the loader's message and no
// CUresult, before main under immediate binding (-z now, LD_BIND_NOW=1), at the first call of the
// missing function under lazy binding; the program shows both against a copy of the toolkit's stub
// libcuda with one name removed. cuGetProcAddress looks a driver function up at run time, by name
// and CUDA version, and says why when it cannot; the version picks the signature (cuCtxCreate has
// three). dlopen of libcuda.so.1 makes the driver itself optional. Then images against
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

// The build's copy of the toolkit's stub libcuda, as <dir>/libcuda.so.1 (lessons/CMakeLists.txt
// defines it), or "" where the build found none: step 2 then leaves its demonstration out.
#ifndef WORKBOOK_STUB_DRIVER_DIR
#define WORKBOOK_STUB_DRIVER_DIR ""
#endif

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
  std::printf("the driver it runs on supports:           CUDA %s (cuDriverGetVersion %d)\n",
              version(driver).c_str(), driver);
  std::printf("the toolkit whose nvcc built its images:  CUDA %s (its PTX says .version %s)\n",
              wb::imageToolkitVersion().c_str(), isa.size() > 1 ? isa[1].str().c_str() : "?");
  std::printf("same major version, driver at least as new as the toolkit: %s\n",
              driver / 1000 == CUDA_VERSION / 1000 && driver >= CUDA_VERSION ? "yes"
              : driver / 1000 == CUDA_VERSION / 1000
                  ? "no: minor version compatibility applies (see the page)"
                  : "no: a different major version");
}
//! [versions]

// The bytes of a file ("" when it cannot be read).
std::vector<char> fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The section headers of a 64-bit ELF file held in memory, or none when it is not one.
std::vector<Elf64_Shdr> sections(const std::vector<char>& elf) {
  std::vector<Elf64_Shdr> out;
  Elf64_Ehdr header;
  if (elf.size() < sizeof header) return out;
  std::memcpy(&header, elf.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) return out;
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    if (header.e_shoff + (i + 1) * static_cast<size_t>(header.e_shentsize) > elf.size()) return {};
    std::memcpy(&section, elf.data() + header.e_shoff + i * header.e_shentsize, sizeof section);
    out.push_back(section);
  }
  return out;
}

//! [imports]
// The undefined dynamic symbols of this very program whose names start with "cu": the driver
// functions the dynamic loader must find in libcuda. Read from the ELF file itself.
std::vector<std::string> importedDriverSymbols() {
  const std::vector<char> elf = fileBytes("/proc/self/exe");
  const std::vector<Elf64_Shdr> all = sections(elf);
  std::vector<std::string> names;
  for (const Elf64_Shdr& section : all) {
    if (section.sh_type != SHT_DYNSYM || section.sh_link >= all.size()) continue;
    const Elf64_Shdr& strings = all[section.sh_link];
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

//! [binding]
// Whether the linker asked for immediate binding (-z now): BIND_NOW in the dynamic section's
// DT_FLAGS, or NOW in DT_FLAGS_1. Without it (and without LD_BIND_NOW in the environment), glibc
// binds each imported function at its first call.
bool boundNow(const std::string& path) {
  const std::vector<char> elf = fileBytes(path);
  for (const Elf64_Shdr& section : sections(elf)) {
    if (section.sh_type != SHT_DYNAMIC) continue;
    for (size_t at = section.sh_offset; at + sizeof(Elf64_Dyn) <= section.sh_offset + section.sh_size;
         at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry;
      std::memcpy(&entry, elf.data() + at, sizeof entry);
      if ((entry.d_tag == DT_FLAGS && (entry.d_un.d_val & DF_BIND_NOW)) ||
          (entry.d_tag == DT_FLAGS_1 && (entry.d_un.d_val & DF_1_NOW)))
        return true;
    }
  }
  return false;
}
//! [binding]

//! [without-symbol]
// A copy of a libcuda in which one exported name no longer matches: the first letter of symbol in
// its dynamic string table becomes 'x', so the loader finds no such function in it, as in a driver
// older than that function. Returns false when the library has no such name of its own.
bool copyWithout(const std::string& from, const std::string& to, const std::string& symbol) {
  std::vector<char> elf = fileBytes(from);
  const std::vector<Elf64_Shdr> all = sections(elf);
  bool renamed = false;
  for (const Elf64_Shdr& section : all) {
    if (section.sh_type != SHT_DYNSYM || section.sh_link >= all.size()) continue;
    const Elf64_Shdr& strings = all[section.sh_link];
    for (size_t at = section.sh_offset; at + sizeof(Elf64_Sym) <= section.sh_offset + section.sh_size;
         at += sizeof(Elf64_Sym)) {
      Elf64_Sym entry;
      std::memcpy(&entry, elf.data() + at, sizeof entry);
      const size_t name = strings.sh_offset + entry.st_name;
      // Its own string: not the tail of a longer name that shares the bytes.
      if (entry.st_shndx != SHN_UNDEF && symbol == elf.data() + name && entry.st_name > 0 &&
          elf[name - 1] == 0) {
        elf[name] = 'x';
        renamed = true;
      }
    }
  }
  std::ofstream out(to, std::ios::binary);
  out.write(elf.data(), static_cast<std::streamsize>(elf.size()));
  return renamed && static_cast<bool>(out);
}
//! [without-symbol]

// In a child started by the step below: one line from main, then the first call of cuGetProcAddress.
int bindingChild() {
  std::printf("main reached\n");
  std::fflush(stdout);
  void* pfn = nullptr;
  const CUresult rc = cuGetProcAddress("cuInit", &pfn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  std::printf("cuGetProcAddress returned %d\n", static_cast<int>(rc));
  return wb::kExitOk;
}

// How a binding child ended, in words, and whether it reached main.
struct BindingRun {
  bool reachedMain = false, namedSymbol = false;
  int code = -1;
  std::string said;
};

BindingRun runBindingChild(const std::string& libraryDir, bool bindNow) {
  // Without the JIT's and its cache's variables too, as every child of this lesson runs.
  const wb::ProcessEnd end = wb::runProcess({wb::selfPath(), "--binding-child"},
      {"LD_LIBRARY_PATH=" + libraryDir, bindNow ? "LD_BIND_NOW=1" : "LD_BIND_NOW", "CUDA_FORCE_PTX_JIT",
       "CUDA_FORCE_JIT", "CUDA_CACHE_DISABLE", "CUDA_CACHE_MAXSIZE", "CUDA_CACHE_PATH"}, 30);
  BindingRun run;
  run.reachedMain = end.output.find("main reached") != std::string::npos;
  run.code = end.timedOut || end.signal ? -1 : end.code;
  const size_t loader = end.output.find("undefined symbol: ");
  run.namedSymbol = loader != std::string::npos && end.output.find("cuGetProcAddress_v2", loader) != std::string::npos;
  std::string last;  // without the loader's line: the child's last line
  std::istringstream lines(end.output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) last = line;
  run.said = loader != std::string::npos ? end.output.substr(loader, end.output.find('\n', loader) - loader) : last;
  return run;
}

//! [missing-symbol]
// The program against a libcuda older than one function it imports: the toolkit's stub libcuda
// (every function of this toolkit, each returning CUDA_ERROR_STUB_LIBRARY) with cuGetProcAddress_v2
// removed, as in every driver before CUDA 12.0. Once as built, once with LD_BIND_NOW=1.
void missingSymbol() {
  const bool linkedNow = boundNow(wb::selfPath());
  std::printf("this program is linked for %s binding\n",
              linkedNow ? "immediate (BIND_NOW)" : "lazy (no BIND_NOW)");
  const std::string stubDir = WORKBOOK_STUB_DRIVER_DIR;  // the stub, as libcuda.so.1
  wb::ScratchDir old;
  if (stubDir.empty() ||
      !copyWithout(stubDir + "/libcuda.so.1", old.path() + "/libcuda.so.1", "cuGetProcAddress_v2")) {
    std::printf("the toolkit's stub libcuda (%s) cannot be copied without cuGetProcAddress_v2: left out\n",
                stubDir.empty() ? "not found when this program was built" : stubDir.c_str());
    return;
  }
  const BindingRun control = runBindingChild(stubDir, false), lazy = runBindingChild(old.path(), false),
                   now = runBindingChild(old.path(), true);
  const auto show = [](const char* how, const BindingRun& r) {
    std::printf("  %-34s %s main, exit code %d: %s\n", how, r.reachedMain ? "reached" : "did NOT reach",
                r.code, r.said.c_str());
  };
  show("the stub as it is:", control);
  show("without cuGetProcAddress_v2:", lazy);
  show("without it, LD_BIND_NOW=1:", now);
  wb::expect(control.reachedMain && control.code == 0,
             "the program running to its end under the intact stub", control.said);
  wb::expect(!now.reachedMain && now.namedSymbol,
             "immediate binding stopping the program before main, naming the symbol", now.said);
  wb::expect(lazy.reachedMain == !linkedNow && lazy.namedSymbol && lazy.code != 0,
             linkedNow ? "the program stopped before main"
                       : "lazy binding: main reached, then the loader ending it at the call", lazy.said);
}
//! [missing-symbol]

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
}
//! [proc-address]

//! [proc-address-2]
// From 12.5 (12050) the lookup returns cuCtxCreate_v4, which takes a CUctxCreateParams pointer
// (PFN_cuCtxCreate_v12050): asked with CUDA_VERSION, as most code does, it is this one. Then three
// lookups that return no function, each with its reason.
void entryPointsFailing(CUdevice dev) {
#if CUDA_VERSION >= 12050
  void *v3 = nullptr, *asCompiled = nullptr;  // for 12000 and for CUDA_VERSION, looked up without printing
  CU_CHECK(cuGetProcAddress("cuCtxCreate", &v3, 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr));
  cuGetProcAddress("cuCtxCreate", &asCompiled, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  if (auto create = reinterpret_cast<PFN_cuCtxCreate_v12050>(lookUp("cuCtxCreate", 12050))) {
    const void* got = reinterpret_cast<void*>(create);
    std::printf("    another function than for 12000: %s; the one CUDA_VERSION %d gets: %s\n",
                got != v3 ? "yes" : "NO", CUDA_VERSION, got == asCompiled ? "yes" : "no");
    CUcontext ctx = nullptr;
    std::printf("    called with four (no parameters): %s\n",
                wb::errorName(create(&ctx, nullptr, 0, dev)).c_str());
    CU_CHECK(cuCtxDestroy(ctx));
    wb::expect(got != v3, "cuCtxCreate for 12050 another function than for 12000", "the same pointer");
  }
#else
  (void)dev;
  std::printf("  cuCtxCreate_v4 (12050) is not in this toolkit's cuda.h (CUDA %d.%d)\n", CUDA_VERSION / 1000,
              CUDA_VERSION % 1000 / 10);
#endif
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  lookUp("cuLibraryLoadData", 11080);  // added in 12.0: not in 11.8's set
  lookUp("cuNoSuchFunction", 12000);
  lookUp("cuMemAlloc", driver + 1000);  // newer than this driver
}
//! [proc-address-2]

//! [dlopen]
// A program for which the GPU is optional links no CUDA library: it opens the driver at run time,
// asks it for its version with a symbol every driver has (cuDriverGetVersion, CUDA 2.2), and only
// then for cuGetProcAddress_v2, which drivers before 12.0 lack, to look up everything else. If the
// dlopen fails there is no driver; if the version is too old it can say so. (This program links
// libcuda, so here dlopen finds the one already loaded.)
void openTheDriver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::printf("dlopen(libcuda.so.1): %s\n", dlerror());
    return;
  }
  int driver = 0;
  if (auto getVersion = reinterpret_cast<PFN_cuDriverGetVersion_v2020>(dlsym(lib, "cuDriverGetVersion")))
    getVersion(&driver);
  using GetProcAddress =
      CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto getProc =
      driver >= 12000 ? reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2")) : nullptr;
  void* pfn = nullptr;
  if (getProc) getProc("cuDeviceGetCount", &pfn, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, nullptr);
  int devices = -1;
  if (pfn) reinterpret_cast<PFN_cuDeviceGetCount_v2000>(pfn)(&devices);
  std::printf("dlopen(libcuda.so.1), dlsym(cuDriverGetVersion): %d; then dlsym(cuGetProcAddress_v2) and\n"
              "cuDeviceGetCount through it: %d device(s)\n", driver, devices);
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

void newerTarget(int major, int minor);

//! [images]
// Images against this device and this driver, each derived from the built images at run time.
void imagesAgainstDevice(CUdevice dev) {
  int major = 0, minor = 0;
  CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  CUmodule module = nullptr;
  for (unsigned arch : wb::cubinArchitectures())
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
  const CUresult loaded =
      cuLibraryLoadData(&library, future.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0);
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
  newerTarget(major, minor);
}
//! [images]

//! [images-newer]
// PTX whose .target is a real architecture newer than this device (an invented one would be an
// unknown target instead).
void newerTarget(int major, int minor) {
  CUmodule module = nullptr;
  unsigned newer = 0;
  for (unsigned arch : {80u, 90u, 100u, 120u})
    if (newer == 0 && arch > static_cast<unsigned>(major * 10 + minor)) newer = arch;
  if (newer == 0) {
    std::printf("  PTX for a newer GPU: no architecture newer than this one in this lesson's list\n");
    return;
  }
  const std::string target = "sm_" + std::to_string(newer);
  const CUresult rc = cuModuleLoadData(&module, editPtx(".target", target).c_str());
  report(("PTX .target " + target + ", cuModuleLoadData").c_str(), rc, module);
}
//! [images-newer]

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
  std::printf("PTX for sm_%u, compiled by the driver for this sm_%d%d device in a fresh process "
              "with an empty\n"
              "cache folder (%zu files in it afterwards): result %s\n",
              wb::builtArchitectures().front(), major, minor, run.files, run.right ? "right" : "WRONG");
  wb::expect(run.right, "the right result from PTX compiled for this device", "wrong values");
  wb::expect(run.files > 0, "a compile (the driver caches what it compiles)",
             "the cache folder stayed empty");
}
//! [jit-forward]

//! [jit-child]
// In a child process: load the PTX and time until its kernel is usable (the load and the first
// cuModuleGetFunction, which under lazy loading loads the kernel: wherever the driver compiles, the
// time spans it), then run it. Prints "jit <ms> right|WRONG".
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
    std::printf("  %-26s %8.3f ms to a usable kernel; files in its cache folder: %zu\n", what, run.ms,
                run.files);
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
    if (argc == 2 && std::strcmp(argv[1], "--binding-child") == 0) return bindingChild();
    wb::checkEnvironment({
        {"CUDA_DISABLE_PTX_JIT", wb::Under::Stops, "step 5 compiles PTX; the driver would refuse with another code"},
        {"CUDA_DISABLE_JIT", wb::Under::Stops, "step 5 compiles PTX; the driver would refuse with another code"},
        {"CUDA_FORCE_PTX_JIT", wb::Under::Controls, "its children run without it"},
        {"CUDA_FORCE_JIT", wb::Under::Controls, "its children run without it"},
        {"CUDA_CACHE_DISABLE", wb::Under::Controls, "steps 5 and 6 give each child its own cache setting, step 4's none"},
        {"CUDA_CACHE_MAXSIZE", wb::Under::Controls, "its children run with the default size"},
        {"CUDA_CACHE_PATH", wb::Under::Controls, "steps 5 and 6 give each child its own empty cache folder, step 4's none"},
        {"CUDA_MODULE_LOADING", wb::Under::Teaches,
         "step 5's loads of newer PTX show what this mode does (the page explains lazy loading, the default)"},
        {"CUDA_MODULE_DATA_LOADING", wb::Under::Teaches,
         "step 5's cuLibraryLoadData of newer PTX shows what this mode does (the page explains the default)"},
    });
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    wb::step(1, "Three versions");
    threeVersions();
    wb::step(2, "What the program imports");
    listImports();
    if (wb::underSanitizer())
      std::printf("its children against a libcuda without a symbol: left out under compute-sanitizer\n");
    else
      missingSymbol();
    wb::step(3, "Entry points at run time");
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    entryPoints(dev);
    entryPointsFailing(dev);
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

// Lesson 19, going deeper: a compile cache of the program's own (the optional page's program).
//
// What you learn: every process that compiles its kernels with NVRTC pays the compile again. NVRTC
// 12.9 and newer keeps a compile cache of its own, which --no-cache turns off: every compile this
// program means as one passes it. A compile cache of the program's own, on disk, in a folder only
// its user may write to, is keyed by everything that changes what NVRTC produces (source, options,
// compute capability, NVRTC's version and the library file itself, the driver's CUDA version); a
// hit is proven by counting compilations, in this process and in a second one, and what it saves is
// measured in this run against a compile and against NVRTC's own cache. Its steps continue
// main.cpp's (1 to 8).
//
// APIs: nvrtcVersion, nvrtcCompileProgram (through wb::nvrtcCompile), cuLibraryLoadData,
//       cuLibraryGetKernel, cuKernelGetFunction, cuLibraryUnload, cuDriverGetVersion
// Run:  ctest -R lesson19   (or build/lessons/lesson19-runtime-compilation-deeper [--cache DIR] [--csv lesson19-figure.csv])
#include "figure.hpp"
#include "nvrtc_checked.hpp"
#include "process.hpp"
#include "runtime_compilation.hpp"
#include "workbook.hpp"

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

constexpr unsigned kChildSeconds = 30;  // step 9's second process is ended after this: nothing hangs

// NVRTC's compile (wb::nvrtcCompile) is in common/nvrtc_checked.hpp; the architecture, the affine
// source, loading an image and running a kernel are shared with main.cpp (common/runtime_compilation.hpp).
using wb::affineMismatches;
using wb::Arch;
using wb::archOf;
using wb::Compiled;
using wb::fileName;
using wb::kAffineSource;
using wb::kernelNamed;
using wb::loadImage;

//! [nvrtc-build]
// The NVRTC library this process runs, as a file: its path, size and modification time. nvrtcVersion
// answers major and minor only, and a patch release, which exists to change the code NVRTC makes,
// keeps both; it does not keep the file. NVRTC linked statically is part of the program, whose own
// file then stands in for it.
std::string nvrtcBuild() {
  std::string path = "/proc/self/exe";
  for (const std::string& p : wb::loadedCompilerLibraries())
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
  wb::nvrtcCheck(nvrtcVersion(&key.nvrtcMajor, &key.nvrtcMinor), "nvrtcVersion");
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
  const Compiled c = wb::nvrtcCompile(key.source, "cached.cu", key.options);
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
  std::printf("cache-child compilations %u hits %u %s\n", wb::nvrtcCompilations, stats.hits,
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
  const unsigned c0 = wb::nvrtcCompilations;
  const std::vector<char> first = cachedCubin(dir, key, stats);
  const unsigned c1 = wb::nvrtcCompilations;
  const std::vector<char> second = cachedCubin(dir, key, stats);
  const unsigned c2 = wb::nvrtcCompilations;
  const std::vector<char> third = cachedCubin(dir, other, stats);
  const unsigned c3 = wb::nvrtcCompilations;
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

// A source of `count` kernels k0, k1, ...: step 10 compiles sources of several sizes.
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
  if (!wb::nvrtcKeepsACache()) return -1;
  wb::nvrtcCompile(key.source, "cached.cu", key.options, {}, wb::NvrtcCache::Allowed);  // NVRTC may keep it
  const wb::Stopwatch clock;
  const Compiled again = wb::nvrtcCompile(key.source, "cached.cu", key.options, {}, wb::NvrtcCache::Allowed);
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
  const unsigned before = wb::nvrtcCompilations;
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
  wb::expect(wb::nvrtcCompilations == before + 1 && stats.misses == 1 && stats.hits == 5,
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
        {"CUDA_CACHE_DISABLE", wb::Under::Teaches,
         "libnvrtc 13.0's cache code reads this variable, so step 10's column 'NVRTC, its cache allowed' may be a "
         "compile; this lesson's cache is its own folder, untouched"},
        {"CUDA_CACHE_PATH", wb::Under::Teaches,
         "NVRTC 12.9+ keeps its own entries in the driver's cache there (libnvrtc 13.0); this lesson's cache is the "
         "folder step 9 names"},
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

    wb::step(9, "A compile cache keyed by what invalidates it");
    compileCache(cacheDir, arch);
    wb::step(10, "Compiling against loading from the cache");
    std::vector<CompileCost> costs;
    if (sanitized)
      std::printf("left out under compute-sanitizer, which slows every driver call\n");
    else
      costs = compileAgainstCache(cacheDir, arch);

    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return tableOf(costs).save(csvPath, 10);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

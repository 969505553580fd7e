#include "machine.hpp"

#include "image_reader.hpp"
#include "process.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace wb {

namespace fs = std::filesystem;

// ---- Findings -------------------------------------------------------------------------------------

const char* severityName(Severity s) {
  switch (s) {
    case Severity::Ok: return "ok";
    case Severity::Note: return "note";
    case Severity::Action: return "action";
    case Severity::NoDriver: return "no-driver";
  }
  return "?";
}

const char* basisName(Basis b) {
  switch (b) {
    case Basis::Documented: return "documented";
    case Basis::Observed: return "observed";
    case Basis::Computed: return "computed";
  }
  return "?";
}

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string toJson(const Finding& f) {
  return "{\"id\": " + jsonString(f.id) + ", \"step\": " + std::to_string(f.step) +
         ", \"severity\": " + jsonString(severityName(f.severity)) + ", \"basis\": " + jsonString(basisName(f.basis)) +
         ", \"what\": " + jsonString(f.what) + ", \"detail\": " + jsonString(f.detail) +
         ", \"todo\": " + jsonString(f.todo) + ", \"lesson\": " + jsonString(f.lesson) + "}";
}

void printJson(const char* program, const std::vector<Finding>& findings, int exitCode) {
  std::printf("{\"program\": \"%s\", \"exitCode\": %d, \"findings\": [", program, exitCode);
  for (size_t i = 0; i < findings.size(); ++i) std::printf("%s\n  %s", i ? "," : "", toJson(findings[i]).c_str());
  std::printf("\n]}\n");
}

Finding finding(std::string id, Severity s, Basis b, std::string what, std::string lesson, std::string detail,
                std::string todo) {
  Finding f;
  f.id = std::move(id), f.severity = s, f.basis = b, f.what = std::move(what);
  f.lesson = std::move(lesson), f.detail = std::move(detail), f.todo = std::move(todo);
  return f;
}

std::string shownPath(const std::string& path) {
  const char* home = std::getenv("HOME");
  const std::string h = home ? home : "";
  if (h.size() > 1 && path.rfind(h + "/", 0) == 0) return "~" + path.substr(h.size());
  return path;
}

std::string join(const std::vector<std::string>& items, const char* by) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : by) + i;
  return out;
}

// ---- ELF ---------------------------------------------------------------------------------------

namespace {

// Reads ranges of a file: only the headers and the dynamic sections of an ELF file are needed, and
// a program built with debug information is megabytes.
class FileRanges {
 public:
  explicit FileRanges(const std::string& path) : in_(path, std::ios::binary | std::ios::ate) {
    size_ = in_ ? static_cast<size_t>(in_.tellg()) : 0;
  }
  size_t size() const { return size_; }
  // The bytes [at, at + n), or none where they are not all in the file.
  std::vector<char> read(size_t at, size_t n) {
    std::vector<char> bytes;
    if (at > size_ || n > size_ - at) return bytes;
    bytes.resize(n);
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(at));
    if (!in_.read(bytes.data(), static_cast<std::streamsize>(n))) bytes.clear();
    return bytes;
  }

 private:
  std::ifstream in_;
  size_t size_ = 0;
};

// The section headers of a 64-bit ELF file, or none when it is not one.
std::vector<Elf64_Shdr> sections(FileRanges& file) {
  Elf64_Ehdr header;
  const std::vector<char> head = file.read(0, sizeof header);
  if (head.size() != sizeof header) return {};
  std::memcpy(&header, head.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shentsize < sizeof(Elf64_Shdr))
    return {};
  const std::vector<char> table = file.read(header.e_shoff, size_t{header.e_shnum} * header.e_shentsize);
  std::vector<Elf64_Shdr> out(table.empty() ? 0 : header.e_shnum);
  for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], table.data() + i * header.e_shentsize, sizeof out[i]);
  return out;
}

// A NUL-terminated name at offset `at` of a string table held in memory, or "" outside it.
std::string nameAt(const std::vector<char>& strings, size_t at) {
  if (at >= strings.size()) return "";
  return std::string(strings.data() + at, strnlen(strings.data() + at, strings.size() - at));
}

}  // namespace

DynamicSection readDynamicSection(const std::string& path) {
  DynamicSection d;
  FileRanges file(path);
  const std::vector<Elf64_Shdr> all = sections(file);
  for (const Elf64_Shdr& section : all) {
    if ((section.sh_type != SHT_DYNSYM && section.sh_type != SHT_DYNAMIC) || section.sh_link >= all.size()) continue;
    const std::vector<char> body = file.read(section.sh_offset, section.sh_size);
    const std::vector<char> strings = file.read(all[section.sh_link].sh_offset, all[section.sh_link].sh_size);
    if (body.size() != section.sh_size || strings.empty()) continue;
    d.read = true;
    if (section.sh_type == SHT_DYNSYM) {
      for (size_t at = 0; at + sizeof(Elf64_Sym) <= body.size(); at += sizeof(Elf64_Sym)) {
        Elf64_Sym symbol;
        std::memcpy(&symbol, body.data() + at, sizeof symbol);
        const std::string name = nameAt(strings, symbol.st_name);
        if (symbol.st_shndx == SHN_UNDEF && !name.empty()) d.imported.push_back(name);
      }
      continue;
    }
    for (size_t at = 0; at + sizeof(Elf64_Dyn) <= body.size(); at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry;
      std::memcpy(&entry, body.data() + at, sizeof entry);
      if (entry.d_tag == DT_NEEDED) d.needed.push_back(nameAt(strings, entry.d_un.d_val));
      if ((entry.d_tag == DT_FLAGS && (entry.d_un.d_val & DF_BIND_NOW)) ||
          (entry.d_tag == DT_FLAGS_1 && (entry.d_un.d_val & DF_1_NOW)))
        d.bindNow = true;
    }
  }
  return d;
}

// ---- Driver files -------------------------------------------------------------------------------

namespace {

std::string realPath(const std::string& path) {
  char real[PATH_MAX];
  return realpath(path.c_str(), real) ? std::string(real) : path;
}

bool isFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The ld.so cache's entries for each name, as one `ldconfig -p` prints them, for this process's ABI.
std::vector<std::vector<std::string>> cachedPaths(const std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> out(names.size());
  for (const char* ldconfig : {"/sbin/ldconfig", "/usr/sbin/ldconfig"}) {
    if (access(ldconfig, X_OK) != 0) continue;
    const ProcessEnd end = runProcess({ldconfig, "-p"}, {}, 10);
#if defined(__x86_64__)
    const std::string abi = "x86-64";
#elif defined(__aarch64__)
    const std::string abi = "AArch64";
#else
    const std::string abi = "";
#endif
    std::istringstream lines(end.output);
    for (std::string line; std::getline(lines, line);) {
      // "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1"
      const size_t arrow = line.find(" => "), open = line.find(" ("), first = line.find_first_not_of(" \t");
      if (arrow == std::string::npos || open == std::string::npos || first >= open) continue;
      const std::string entry = line.substr(first, open - first), kind = line.substr(open, arrow - open);
      for (size_t i = 0; i < names.size(); ++i)
        if (entry == names[i] && kind.find(abi) != std::string::npos) out[i].push_back(line.substr(arrow + 4));
    }
    break;
  }
  return out;
}

}  // namespace

std::vector<DriverFile> driverFilesOnLoaderPath() {
  std::vector<DriverFile> files;
  const auto add = [&](const std::string& path, const char* foundBy) {
    if (!isFile(path)) return;
    for (const DriverFile& f : files)
      if (f.path == path) return;
    files.push_back({path, realPath(path), foundBy});
  };
  const std::vector<std::string> names = {"libcuda.so.1", "libcuda.so"};
  const std::vector<std::vector<std::string>> cached = cachedPaths(names);
  for (size_t i = 0; i < names.size(); ++i) {
    if (const char* paths = std::getenv("LD_LIBRARY_PATH")) {
      std::istringstream folders(paths);
      for (std::string folder; std::getline(folders, folder, ':');)  // an empty entry is the working folder
        add((folder.empty() ? std::string(".") : folder) + "/" + names[i], "LD_LIBRARY_PATH");
    }
    for (const std::string& path : cached[i]) add(path, "the ld.so cache");
  }
  return files;
}

DriverFileKind inspectDriverFile(const std::string& path) {
  struct Record {
    int kind;
    int version;
    char why[256];
  };
  DriverFileKind result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.why = "no pipe for the child";
    return result;
  }
  std::fflush(nullptr);  // nothing buffered here is written twice
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    result.why = "fork failed";
    return result;
  }
  if (pid == 0) {
    alarm(10);  // a child that hangs is ended: nothing waits longer
    Record r{DriverFileKind::Unreadable, 0, {}};
    if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      using Version = CUresult(CUDAAPI*)(int*);
      const auto version = reinterpret_cast<Version>(dlsym(lib, "cuDriverGetVersion"));
      const CUresult rc = version ? version(&r.version) : CUDA_ERROR_NOT_FOUND;
      r.kind = rc == CUDA_SUCCESS ? DriverFileKind::Driver
               : rc == CUDA_ERROR_STUB_LIBRARY ? DriverFileKind::Stub
                                                : DriverFileKind::NotADriver;
      if (!version) std::snprintf(r.why, sizeof r.why, "it has no cuDriverGetVersion");
      else if (r.kind == DriverFileKind::NotADriver) std::snprintf(r.why, sizeof r.why, "cuDriverGetVersion returned %d", static_cast<int>(rc));
    } else {
      const char* why = dlerror();
      std::snprintf(r.why, sizeof r.why, "%s", why ? why : "dlopen failed");
    }
    const ssize_t wrote = write(fds[1], &r, sizeof r);
    _exit(wrote == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  close(fds[1]);
  Record r{DriverFileKind::Unreadable, 0, {}};
  ssize_t got = 0;
  while ((got = read(fds[0], &r, sizeof r)) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(sizeof r)) {
    result.why = WIFSIGNALED(status) ? "the child that opened it was killed by signal " + std::to_string(WTERMSIG(status))
                                     : std::string("the child that opened it said nothing");
    return result;
  }
  result.kind = static_cast<DriverFileKind::Kind>(r.kind);
  result.version = r.version;
  result.why = r.why;
  return result;
}

std::string kernelModuleVersion() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  std::getline(in, line);
  std::smatch m;
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." (or "... Open Kernel Module for x86_64  580...")
  if (std::regex_search(line, m, std::regex(R"(Module.*?\s([0-9]+\.[0-9]+(?:\.[0-9]+)?)(\s|$))"))) return m[1];
  return "";
}

std::string versionInFileName(const std::string& path) {
  std::smatch m;
  const std::string name = path.substr(path.find_last_of('/') + 1);
  if (std::regex_match(name, m, std::regex(R"(libcuda\.so\.([0-9]+\.[0-9]+(?:\.[0-9]+)?))"))) return m[1];
  return "";
}

// ---- Versions -----------------------------------------------------------------------------------

std::string cudaVersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string ptxIsaOf(int cudaVersion) {
  // The PTX ISA's release history (docs.nvidia.com/cuda/parallel-thread-execution, "Release Notes").
  static const std::pair<int, const char*> history[] = {
      {12000, "8.0"}, {12010, "8.1"}, {12020, "8.2"}, {12030, "8.3"}, {12040, "8.4"}, {12050, "8.5"},
      {12060, "8.5"}, {12070, "8.6"}, {12080, "8.7"}, {12090, "8.8"}, {13000, "9.0"}, {13010, "9.1"},
  };
  const int release = cudaVersion / 10 * 10;  // patch levels of one release share its ISA
  for (const auto& [version, isa] : history)
    if (version == release) return isa;
  return "";
}

std::string ptxVersionOfText(const std::string& ptx) {
  std::smatch m;
  if (std::regex_search(ptx, m, std::regex(R"((^|\n)\s*\.version\s+([0-9]+\.[0-9]+))"))) return m[2];
  return "";
}

int compareVersions(const std::string& a, const std::string& b) {
  int aMajor = 0, aMinor = 0, bMajor = 0, bMinor = 0;
  std::sscanf(a.c_str(), "%d.%d", &aMajor, &aMinor);
  std::sscanf(b.c_str(), "%d.%d", &bMajor, &bMinor);
  return aMajor != bMajor ? aMajor - bMajor : aMinor - bMinor;
}

int minorVersionFloor(int cudaMajor) {
  switch (cudaMajor) {
    case 11: return 450;
    case 12: return 525;
    case 13: return 580;
    default: return 0;
  }
}

std::string imagesPtxIsa() {
  try {
    return ptxVersionOfText(readVerifiedImage("vector_ops.ptx").data());
  } catch (const ImageError&) {
    return "";
  }
}

const char* computeModeName(int mode) {
  switch (mode) {
    case CU_COMPUTEMODE_DEFAULT: return "DEFAULT";
    case CU_COMPUTEMODE_PROHIBITED: return "PROHIBITED";
    case CU_COMPUTEMODE_EXCLUSIVE_PROCESS: return "EXCLUSIVE_PROCESS";
    default: return "unknown";
  }
}

InitAnswer classifyInit(CUresult answer) {
  switch (static_cast<int>(answer)) {  // as a number: 12.6's header lacks some of the names below
    case CUDA_SUCCESS: return InitAnswer::Ready;
    case CUDA_ERROR_STUB_LIBRARY: return InitAnswer::Stub;
    case CUDA_ERROR_NO_DEVICE: return InitAnswer::NoDevice;
    case CUDA_ERROR_NOT_INITIALIZED: return InitAnswer::ForkedAfterInit;
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: return InitAnswer::DriverMismatch;
    default: return InitAnswer::Failed;
  }
}

namespace {
pid_t initialisedBy = 0;  // the process that called rememberInit(); a forked child inherits the value
}  // namespace

void rememberInit() { initialisedBy = getpid(); }

int initialisedIn() { return initialisedBy != 0 && initialisedBy != getpid() ? static_cast<int>(initialisedBy) : 0; }

void forkAndGoOnInChild() {
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    alarm(60);  // a forked child that hangs is ended
    return;
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  std::exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
}

// ---- Environment ----------------------------------------------------------------------------------

const char* lessonAbout(const std::string& variable) {
  // The lesson whose steps change under the variable and say so (each lesson's page names them).
  static const std::pair<const char*, const char*> lessons[] = {
      {"CUDA_VISIBLE_DEVICES", "01"},        {"CUDA_DEVICE_ORDER", "10"},
      {"CUDA_MANAGED_FORCE_DEVICE_ALLOC", "08"}, {"CUDA_CACHE_DISABLE", "12"},
      {"CUDA_CACHE_PATH", "12"},             {"CUDA_CACHE_MAXSIZE", "12"},
      {"CUDA_FORCE_PTX_JIT", "06"},          {"CUDA_FORCE_JIT", "06"},
      {"CUDA_DISABLE_PTX_JIT", "12"},        {"CUDA_DISABLE_JIT", "12"},
      {"CUDA_FORCE_PRELOAD_LIBRARIES", "12"}, {"CUDA_LAUNCH_BLOCKING", "09"},
      {"CUDA_DEVICE_MAX_CONNECTIONS", "09"}, {"CUDA_DEVICE_MAX_COPY_CONNECTIONS", "09"},
      {"CUDA_SCALE_LAUNCH_QUEUES", "09"},    {"CUDA_GRAPHS_USE_NODE_PRIORITY", "15"},
      {"CUDA_DEVICE_WAITS_ON_EXCEPTION", "10"}, {"CUDA_MODULE_LOADING", "06"},
      {"CUDA_MODULE_DATA_LOADING", "12"},    {"CUDA_BINARY_LOADER_THREAD_COUNT", "06"},
      {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "10"}, {"CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION", "10"},
      {"CUDA_ENABLE_LIGHTWEIGHT_COREDUMP", "10"}, {"CUDA_ENABLE_USER_TRIGGERED_COREDUMP", "10"},
      {"CUDA_COREDUMP_FILE", "10"},          {"CUDA_COREDUMP_PIPE", "10"},
      {"CUDA_COREDUMP_SHOW_PROGRESS", "10"}, {"CUDA_COREDUMP_GENERATION_FLAGS", "10"},
  };
  for (const auto& [name, lesson] : lessons)
    if (variable == name) return lesson;
  return "";
}

std::vector<ActiveVariable> activeCudaVariables() {
  std::vector<ActiveVariable> out;
  for (const EnvVariable& v : cudaEnvironmentVariables()) {
    const std::string value = activeValue(v);
    if (!value.empty()) out.push_back({&v, value, lessonAbout(v.name)});
  }
  return out;
}

// ---- The JIT cache --------------------------------------------------------------------------------

namespace {

std::string homeFolder() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  if (const passwd* user = getpwuid(getuid()); user && user->pw_dir) return user->pw_dir;
  return "";
}

}  // namespace

JitCache jitCache() {
  JitCache c;
  const char* disable = std::getenv("CUDA_CACHE_DISABLE");
  c.disabled = disable && std::strcmp(disable, "1") == 0;
  const char* path = std::getenv("CUDA_CACHE_PATH");
  c.folderFromVariable = path && *path;
  c.folder = c.folderFromVariable ? std::string(path) : homeFolder() + "/.nv/ComputeCache";
  std::error_code ec;
  c.exists = fs::is_directory(c.folder, ec);
  // The nearest folder that exists, from the cache's own folder up: the driver writes there.
  fs::path at = fs::absolute(c.folder, ec);
  while (!at.empty() && !fs::exists(at, ec) && at.has_parent_path() && at.parent_path() != at) at = at.parent_path();
  c.writableCheckedAt = at.string();
  c.writable = fs::is_directory(at, ec) && access(at.c_str(), W_OK | X_OK) == 0;
  if (c.exists)
    for (auto it = fs::recursive_directory_iterator(c.folder, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file(ec) && !it->is_symlink(ec)) {
        c.usedBytes += it->file_size(ec);
        ++c.files;
      }
  const char* max = std::getenv("CUDA_CACHE_MAXSIZE");
  char* end = nullptr;
  const unsigned long long asked = max && *max ? std::strtoull(max, &end, 10) : 0;
  c.maxFromVariable = max && *max && end && *end == '\0';
  const EnvVariable* row = findEnvVariable("CUDA_CACHE_MAXSIZE");
  c.maxBytes = c.maxFromVariable ? asked : std::strtoull(row ? row->defaultValue : "0", nullptr, 10);
  return c;
}

// ---- MPS ------------------------------------------------------------------------------------------

MpsPipeFolder mpsPipeFolder() {
  MpsPipeFolder m;
  const char* folder = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  m.fromVariable = folder && *folder;
  m.folder = m.fromVariable ? std::string(folder) : std::string("/tmp/nvidia-mps");
  std::error_code ec;
  m.exists = fs::is_directory(m.folder, ec);
  if (m.exists)
    for (auto it = fs::directory_iterator(m.folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) ++m.entries;
  return m;
}

// ---- Pairs of devices ----------------------------------------------------------------------------

Primaries::Primaries(const LoadedDriver& d, const DriverApi& a, int count) : api(a) {
  for (int n = 0; n < count; ++n) {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    need(d, api.cuDeviceGet(&dev, n), "cuDeviceGet");
    need(d, api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    devices.push_back(dev), contexts.push_back(ctx);
  }
}

Primaries::~Primaries() {
  api.cuCtxSetCurrent(nullptr);
  for (CUdevice dev : devices) api.cuDevicePrimaryCtxRelease(dev);
}

namespace {

// What one round trip holds: a buffer on each side and the peer access it enabled, all given back
// at scope exit (a failed call ends the step, and nothing is left behind).
struct RoundTrip {
  const DriverApi& api;
  CUcontext a, b;
  CUdeviceptr src = 0, back = 0, there = 0;  // src and back in a's context, there in b's
  bool aToB = false, bToA = false;           // peer access enabled from a's context to b's memory, and back
  RoundTrip(const DriverApi& api, CUcontext a, CUcontext b) : api(api), a(a), b(b) {}
  ~RoundTrip() {
    api.cuCtxSetCurrent(b);
    if (bToA) api.cuCtxDisablePeerAccess(a);
    if (there) api.cuMemFree(there);
    api.cuCtxSetCurrent(a);
    if (aToB) api.cuCtxDisablePeerAccess(b);
    if (src) api.cuMemFree(src);
    if (back) api.cuMemFree(back);
    api.cuCtxSetCurrent(nullptr);
  }
  RoundTrip(const RoundTrip&) = delete;
  RoundTrip& operator=(const RoundTrip&) = delete;
};

}  // namespace

//! [pair-copy]
// A round trip a -> b -> a with cuMemcpyPeer, with peer access enabled both ways where the devices
// allow it (so the bytes go over the link between them), and every byte compared with what was
// sent. A peer path that a PCIe switch or an IOMMU breaks can corrupt bytes or hang, not fail.
bool roundTrip(const LoadedDriver& d, const DriverApi& api, CUcontext a, CUcontext b, bool peer) {
  const size_t words = size_t{1} << 20, bytes = words * sizeof(uint32_t);
  std::vector<uint32_t> sent(words), got(words, 0);
  for (size_t i = 0; i < words; ++i) sent[i] = 0x9E3779B9u * static_cast<uint32_t>(i + 1);
  RoundTrip t(api, a, b);
  need(d, api.cuCtxSetCurrent(b), "cuCtxSetCurrent");
  need(d, api.cuMemAlloc(&t.there, bytes), "cuMemAlloc");
  if (peer) need(d, api.cuCtxEnablePeerAccess(a, 0), "cuCtxEnablePeerAccess");
  t.bToA = peer;
  need(d, api.cuCtxSetCurrent(a), "cuCtxSetCurrent");
  need(d, api.cuMemAlloc(&t.src, bytes), "cuMemAlloc");
  need(d, api.cuMemAlloc(&t.back, bytes), "cuMemAlloc");
  if (peer) need(d, api.cuCtxEnablePeerAccess(b, 0), "cuCtxEnablePeerAccess");
  t.aToB = peer;
  need(d, api.cuMemcpyHtoD(t.src, sent.data(), bytes), "cuMemcpyHtoD");
  need(d, api.cuMemcpyPeer(t.there, b, t.src, a, bytes), "cuMemcpyPeer");
  need(d, api.cuMemcpyPeer(t.back, a, t.there, b, bytes), "cuMemcpyPeer");
  need(d, api.cuCtxSynchronize(), "cuCtxSynchronize");
  need(d, api.cuMemcpyDtoH(got.data(), t.back, bytes), "cuMemcpyDtoH");
  return got == sent;
}
//! [pair-copy]

}  // namespace wb

// workbook-gpu-launcher: runs a GPU test only where a GPU can run it.
//
// It links no CUDA library, so it starts on any machine. It dlopens libcuda.so.1 and asks cuInit
// and cuDeviceGetCount. With no driver, the toolkit's stub driver, or too few devices it prints one
// line with the reason and exits with kSkip, which ctest is told to report as "Skipped".
//
//   workbook-gpu-launcher [--probe-file F] [--min-devices N] -- program [args...]
//                                                  run one test (exec, same rc)
//   workbook-gpu-launcher --probe                  say what the GPU tests will see
//   workbook-gpu-launcher --write-probe F          probe once and store the verdict in F
//   workbook-gpu-launcher --course course.tsv      run every lesson in order
//
// Probing costs a cuInit (about half a second on an H200), which the test then pays again. So ctest
// probes once per run (the fixture test gpu.probe-once writes F) and every GPU test reads F.
//
// The GPU tests assert what the driver does by default. A CUDA environment variable the user set
// (CUDA_LAUNCH_BLOCKING=1, say) would change that, so the launcher removes those of
// common/environment.hpp's table that are not kept for tests before it starts a test, and the
// probe says which it removes; the suites that study a variable set it themselves. Device
// visibility and order stay, so the tests use the GPUs the user chose.
#include <cuda.h>  // types and enum values only: nothing here is linked against libcuda

#include "environment.hpp"

#include <dlfcn.h>
#include <link.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

constexpr int kSkip = 77;  // SKIP_RETURN_CODE of every GPU test
constexpr int kBroken = 1;

struct ErrorEntry {
  int code;
  const char* name;
  const char* text;
};
constexpr ErrorEntry kErrors[] = {
#include "cuda_error_table.inc"
};

std::string nameOf(int code) {
  for (const auto& e : kErrors)
    if (e.code == code) return std::string(e.name) + " (" + std::to_string(code) + ")";
  return "CUresult " + std::to_string(code);
}

enum class Verdict { Usable, Skip, Broken };

struct Probe {
  Verdict verdict = Verdict::Broken;
  int devices = 0;
  std::string reason;              // why the GPU tests cannot run (Skip or Broken)
  std::vector<std::string> names;  // device names (Usable)
  int driverVersion = 0;
};

std::string visibleDevicesNote() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v) return "";
  return std::string(" (CUDA_VISIBLE_DEVICES is set to '") + v + "')";
}

Probe probe() {
  Probe p;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    p.verdict = Verdict::Skip;
    p.reason = std::string("no NVIDIA driver: libcuda.so.1 could not be loaded (") + dlerror() + ")";
    return p;
  }
  using InitFn = CUresult (*)(unsigned);
  using CountFn = CUresult (*)(int*);
  using VersionFn = CUresult (*)(int*);
  using GetFn = CUresult (*)(CUdevice*, int);
  using NameFn = CUresult (*)(char*, int, CUdevice);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  auto version = reinterpret_cast<VersionFn>(dlsym(lib, "cuDriverGetVersion"));
  auto get = reinterpret_cast<GetFn>(dlsym(lib, "cuDeviceGet"));
  auto name = reinterpret_cast<NameFn>(dlsym(lib, "cuDeviceGetName"));
  if (!init || !count || !version || !get || !name) {
    p.reason = "libcuda.so.1 lacks cuInit or cuDeviceGetCount: this is not a CUDA driver";
    return p;  // a library that is there but wrong is a broken install, not a skip
  }
  const CUresult rc = init(0);
  if (rc == CUDA_ERROR_STUB_LIBRARY) {
    link_map* map = nullptr;
    dlinfo(lib, RTLD_DI_LINKMAP, &map);
    p.verdict = Verdict::Skip;
    p.reason = std::string("only the CUDA toolkit's stub driver is installed (") +
               (map ? map->l_name : "libcuda.so.1") + " answers CUDA_ERROR_STUB_LIBRARY)";
    return p;
  }
  if (rc == CUDA_ERROR_NO_DEVICE) {
    p.verdict = Verdict::Skip;
    p.reason = "no CUDA device: cuInit returned CUDA_ERROR_NO_DEVICE (100)" + visibleDevicesNote();
    return p;
  }
  if (rc != CUDA_SUCCESS) {
    p.reason = "a driver is installed but cuInit(0) failed with " + nameOf(rc) +
               ": check nvidia-smi and that the driver supports this toolkit";
    return p;
  }
  version(&p.driverVersion);
  count(&p.devices);
  if (p.devices == 0) {
    p.verdict = Verdict::Skip;
    p.reason = "no CUDA device: cuDeviceGetCount found 0" + visibleDevicesNote();
    return p;
  }
  for (int i = 0; i < p.devices; ++i) {
    CUdevice dev = 0;
    char buf[256] = {};
    if (get(&dev, i) == CUDA_SUCCESS && name(buf, sizeof buf, dev) == CUDA_SUCCESS) p.names.push_back(buf);
  }
  p.verdict = Verdict::Usable;
  return p;  // the library stays loaded: exec() replaces this process image anyway
}

std::string describe(const Probe& p) {
  std::ostringstream out;
  out << p.devices << (p.devices == 1 ? " device" : " devices") << " (";
  for (size_t i = 0; i < p.names.size(); ++i) out << (i ? ", " : "") << p.names[i];
  out << "), driver supports CUDA " << p.driverVersion / 1000 << "." << (p.driverVersion % 1000) / 10;
  return out.str();
}

// The variables of the user's environment that the GPU tests run without, as "NAME=value".
std::vector<std::string> variablesTestsRemove() {
  std::vector<std::string> removed;
  for (const auto& v : wb::cudaEnvironmentVariables())
    if (!v.keptForTests && !wb::activeValue(v).empty()) removed.push_back(std::string(v.name) + "=" + wb::activeValue(v));
  return removed;
}

int runProbe() {
  for (const auto& v : variablesTestsRemove())
    std::printf("The GPU tests run without %s from your environment: they assert the documented defaults "
                "(the environment suites set the variables they study).\n", v.c_str());
  const Probe p = probe();
  switch (p.verdict) {
    case Verdict::Usable:
      std::printf("GPU tests run here: %s.\n", describe(p).c_str());
      if (p.devices < 2) std::printf("Multi-device tests will be skipped: they need 2 CUDA devices.\n");
      return 0;
    case Verdict::Skip:
      std::printf("GPU tests will be reported as skipped: %s.\n", p.reason.c_str());
      return 0;
    case Verdict::Broken:
      std::printf("GPU tests cannot run: %s.\n", p.reason.c_str());
      return kBroken;
  }
  return kBroken;
}

// The probe's verdict as one file: "<verdict> <devices>\n<reason>\n".
bool writeProbe(const Probe& p, const char* file) {
  std::ofstream out(file);
  out << static_cast<int>(p.verdict) << " " << p.devices << "\n" << p.reason << "\n";
  return static_cast<bool>(out);
}

bool readProbe(Probe& p, const char* file) {
  std::ifstream in(file);
  int verdict = -1;
  if (!(in >> verdict >> p.devices) || verdict < 0 || verdict > 2) return false;
  p.verdict = static_cast<Verdict>(verdict);
  in.ignore(1);
  std::getline(in, p.reason);
  return true;
}

int spawnAndWait(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int err = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ); err != 0) {
    std::printf("could not start %s: %s\n", argv[0], std::strerror(err));
    return 127;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    std::printf("%s was killed by signal %d\n", argv[0], WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

// course.tsv: one lesson a line, fields separated by tabs: place, title, program, args...
int runCourse(const char* manifest) {
  std::ifstream in(manifest);
  if (!in) {
    std::printf("cannot read the course manifest %s\n", manifest);
    return kBroken;
  }
  struct Lesson { std::string place, title; std::vector<std::string> argv; };
  std::vector<Lesson> lessons;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, '\t');) fields.push_back(f);
    if (fields.size() < 3) continue;
    lessons.push_back({fields[0], fields[1], {fields.begin() + 2, fields.end()}});
  }
  const Probe p = probe();
  if (p.verdict != Verdict::Usable) {
    // Lesson 00 (your machine) opens the driver itself and says what is missing: it runs anyway.
    if (!lessons.empty() && lessons.front().place.rfind("[0/", 0) == 0) {
      std::printf("%s %s\n", lessons.front().place.c_str(), lessons.front().title.c_str());
      std::fflush(stdout);
      spawnAndWait(lessons.front().argv);
    }
    std::printf("\nThe lessons could not run on this machine: %s.\n"
                "Every lesson was built. To run them you need the NVIDIA driver and a CUDA device;\n"
                "`cmake --workflow --preset test` runs the tests that need neither. Meanwhile read them with\n"
                "every step's recorded output: `cmake --build build --target docs`, then open\n"
                "build/site/html/index.html.\n",
                p.reason.c_str());
    return p.verdict == Verdict::Skip ? kSkip : kBroken;
  }
  std::printf("Running the course on %s.\n", describe(p).c_str());
  std::vector<std::string> failed;
  for (const auto& l : lessons) {
    std::printf("\n==============================================================================\n"
                "%s %s\n"
                "==============================================================================\n",
                l.place.c_str(), l.title.c_str());
    std::fflush(stdout);
    const int rc = spawnAndWait(l.argv);
    if (rc != 0) failed.push_back(l.place + " (exit code " + std::to_string(rc) + ")");
  }
  std::printf("\n%zu of %zu lessons ran cleanly.\n", lessons.size() - failed.size(), lessons.size());
  for (const auto& f : failed) std::printf("  failed: %s\n", f.c_str());
  return failed.empty() ? 0 : kBroken;
}

int usage() {
  std::fprintf(stderr,
               "usage: workbook-gpu-launcher [--probe-file F] [--min-devices N] -- program [args...]\n"
               "       workbook-gpu-launcher --probe\n"
               "       workbook-gpu-launcher --write-probe F\n"
               "       workbook-gpu-launcher --course course.tsv\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int minDevices = 1;
  const char* probeFile = nullptr;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--probe") return runProbe();
    if (a == "--course" && i + 1 < argc) return runCourse(argv[i + 1]);
    if (a == "--write-probe" && i + 1 < argc) {
      const Probe p = probe();
      if (!writeProbe(p, argv[i + 1])) {
        std::printf("could not write %s\n", argv[i + 1]);
        return kBroken;
      }
      std::printf("%s\n", p.verdict == Verdict::Usable ? describe(p).c_str() : p.reason.c_str());
      return 0;
    }
    if (a == "--probe-file" && i + 1 < argc) {
      probeFile = argv[++i];
      continue;
    }
    if (a == "--min-devices" && i + 1 < argc) {
      minDevices = std::atoi(argv[++i]);
    } else if (a == "--") {
      ++i;
      break;
    } else {
      return usage();
    }
  }
  if (i >= argc) return usage();

  Probe p;
  if (!probeFile || !readProbe(p, probeFile)) p = probe();  // no stored verdict: probe here
  if (p.verdict == Verdict::Skip) {
    std::printf("SKIPPED: %s\n", p.reason.c_str());
    return kSkip;
  }
  if (p.verdict == Verdict::Broken) {
    std::printf("FAILED: %s\n", p.reason.c_str());
    return kBroken;
  }
  if (p.devices < minDevices) {
    std::printf("SKIPPED: needs %d CUDA devices, this machine has %d\n", minDevices, p.devices);
    return kSkip;
  }
  for (const auto& v : variablesTestsRemove()) unsetenv(v.substr(0, v.find('=')).c_str());
  std::fflush(stdout);
  execv(argv[i], argv + i);
  std::printf("could not start %s: %s\n", argv[i], std::strerror(errno));
  return 127;
}

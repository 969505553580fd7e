#include "environment.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <unistd.h>

namespace wb {

const std::vector<EnvVariable>& cudaEnvironmentVariables() {
  // {name, documented default ("A|B": either spelling), a value that changes something, what NVIDIA
  // documents, whether the GPU tests keep it}. From the CUDA programming guide's appendix "CUDA
  // Environment Variables"; the core-dump variables from the CUDA-GDB manual.
  static const std::vector<EnvVariable> table = {
      // Device enumeration and properties
      {"CUDA_VISIBLE_DEVICES", nullptr, "0", "only the GPUs it lists are visible, numbered from 0 in the order listed", true},
      {"CUDA_DEVICE_ORDER", "FASTEST_FIRST", "PCI_BUS_ID", "PCI_BUS_ID numbers the devices by PCI bus ID instead of fastest first", true},
      {"CUDA_MANAGED_FORCE_DEVICE_ALLOC", "0", "1", "a non-zero value places all managed memory in device memory", false},
      // JIT compilation
      {"CUDA_CACHE_DISABLE", "0", "1", "1 turns the JIT's on-disk cache off: PTX is compiled again in every process", false},
      {"CUDA_CACHE_PATH", nullptr, "/tmp", "the folder of the JIT's cache (default ~/.nv/ComputeCache)", true},
      {"CUDA_CACHE_MAXSIZE", "1073741824", "0", "the size of the JIT's cache in bytes; larger binaries are not cached", false},
      {"CUDA_FORCE_PTX_JIT", "0", "1", "1 ignores the machine code in images and compiles their PTX instead", false},
      {"CUDA_FORCE_JIT", "0", "1", "1 ignores the machine code in images and compiles their PTX instead", false},
      {"CUDA_DISABLE_PTX_JIT", "0", "1", "1 forbids compiling PTX: a kernel without machine code for the device does not load", false},
      {"CUDA_DISABLE_JIT", "0", "1", "1 forbids compiling PTX: a kernel without machine code for the device does not load", false},
      {"CUDA_FORCE_PRELOAD_LIBRARIES", nullptr, "1", "1 loads the JIT's libraries when the driver initialises", false},
      // Execution
      {"CUDA_LAUNCH_BLOCKING", "0", "1", "1 disables asynchronous kernel launches: each launch returns once its kernel has run", false},
      {"CUDA_DEVICE_MAX_CONNECTIONS", "8", "1",
       "the number of work queues to each device; streams that share one can wait on each other", false},
      {"CUDA_DEVICE_MAX_COPY_CONNECTIONS", "8", "1", "the number of work queues for copies (compute capability 8.0 and newer)", false},
      {"CUDA_SCALE_LAUNCH_QUEUES", "1x", "0.25x", "scales the queue of pending launches and copies per device", false},
      {"CUDA_GRAPHS_USE_NODE_PRIORITY", "0", "1", "1 makes graphs use their nodes' priorities instead of the stream's", false},
      {"CUDA_DEVICE_WAITS_ON_EXCEPTION", "0", "1", "1 halts a process whose kernel faults, so that a debugger can attach", false},
      {"CUDA_DEVICE_DEFAULT_PERSISTING_L2_CACHE_PERCENTAGE_LIMIT", "0", "50",
       "the share of L2 set aside for persisting accesses under MPS", true},
      {"CUDA_DISABLE_PERF_BOOST", "0", "1", "1 stops the driver from raising the device's performance state", true},
      {"CUDA_AUTO_BOOST", nullptr, "0", "overrides nvidia-smi's auto-boost setting (deprecated)", true},
      // Peer access (CUDA 13.5 and newer; driver 580, CUDA 13.0, does not read it)
      {"CUDA_DISABLE_IOMMU_ACS_P2P_CAPABILITY_CHECK", "0", "1",
       "1 skips the IOMMU/ACS topology check that cuDeviceCanAccessPeer and cuCtxEnablePeerAccess make from "
       "CUDA 13.5 on",
       false},
      // Module loading
      {"CUDA_MODULE_LOADING", "LAZY|DEFAULT", "EAGER",
       "EAGER loads every kernel of a module or library at cuModuleLoad* or cuLibraryLoad*, not when first asked for", false},
      {"CUDA_MODULE_DATA_LOADING", "LAZY|DEFAULT", "EAGER", "EAGER loads a module's variables when it is loaded, not at first use", false},
      {"CUDA_BINARY_LOADER_THREAD_COUNT", "0", "4", "the number of CPU threads that load device binaries", false},
      // Error log management
      {"CUDA_LOG_FILE", nullptr, "stderr", "the driver writes a message for each failed call to this file, stdout or stderr", true},
      // GPU core dumps (CUDA-GDB manual)
      {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "0", "1", "1 writes a GPU core dump when a kernel faults, then aborts the process", false},
      {"CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION", "1", "0",
       "with GPU core dumps on, 0 leaves out the CPU core dump (deprecated since 12.5 for CUDA_COREDUMP_GENERATION_FLAGS)",
       false},
      {"CUDA_ENABLE_LIGHTWEIGHT_COREDUMP", "0", "1",
       "1 left memory out of GPU core dumps; CUDA-GDB 13.0 removed its support (use CUDA_COREDUMP_GENERATION_FLAGS)",
       false},
      {"CUDA_ENABLE_USER_TRIGGERED_COREDUMP", "0", "1", "1 opens a pipe per process; a write to it triggers a GPU core dump", false},
      {"CUDA_COREDUMP_FILE", nullptr, "core.%p.nvcudmp", "the name of the GPU core dump file", false},
      {"CUDA_COREDUMP_PIPE", nullptr, "corepipe.%p", "the name of the pipe that triggers a GPU core dump", false},
      {"CUDA_COREDUMP_SHOW_PROGRESS", "0", "1", "1 prints the progress of a GPU core dump to stderr", false},
      {"CUDA_COREDUMP_GENERATION_FLAGS", nullptr, "skip_abort", "flags that change what a GPU core dump holds and whether the process aborts", false},
  };
  return table;
}

const EnvVariable* findEnvVariable(const std::string& name) {
  for (const auto& v : cudaEnvironmentVariables())
    if (name == v.name) return &v;
  return nullptr;
}

std::vector<std::string> variablesButDeviceChoice() {
  std::vector<std::string> names;
  for (const auto& v : cudaEnvironmentVariables())
    if (std::string(v.name) != "CUDA_VISIBLE_DEVICES" && std::string(v.name) != "CUDA_DEVICE_ORDER")
      names.emplace_back(v.name);
  return names;
}

std::string activeValue(const EnvVariable& variable) {
  const char* value = std::getenv(variable.name);
  if (!value) return "";
  if (variable.defaultValue) {
    const std::string defaults = std::string("|") + variable.defaultValue + "|";
    if (defaults.find(std::string("|") + value + "|") != std::string::npos) return "";
  }
  return *value ? value : "(empty)";
}

bool belowDefault(const std::string& value) {
  char* end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 10);
  return end != value.c_str() && n < 8;  // CUDA_DEVICE_MAX_CONNECTIONS' default
}

EnvironmentError::EnvironmentError(std::string variable, const std::string& message)
    : std::runtime_error(message), variable_(std::move(variable)) {}

namespace {

// Variables every lesson feels, noted unless the lesson says more about them.
constexpr EnvUse kEveryLesson[] = {
    {"CUDA_VISIBLE_DEVICES", Under::Teaches, "device 0 and the device count are of the devices it lists"},
    {"CUDA_DEVICE_ORDER", Under::Teaches, "device 0 may be another GPU than nvidia-smi's first"},
    {"CUDA_LOG_FILE", Under::Teaches, "the errors this lesson provokes on purpose also appear in the driver's log"},
};

std::string programName() {
  char path[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "the lesson";
}

// Whether the use applies: its variable is set to a value that matters; the value, or "".
std::string mattering(const EnvUse& use) {
  const EnvVariable* v = findEnvVariable(use.variable);
  if (!v) return "";
  const std::string value = activeValue(*v);
  if (value.empty() || (use.matters && !use.matters(value))) return "";
  return value;
}

}  // namespace

void checkEnvironment(const std::vector<EnvUse>& uses) {
  if (std::getenv("WORKBOOK_ENVIRONMENT_USES")) {  // the environment suites ask what the lesson declares
    for (const EnvUse& use : uses)
      std::printf("uses %s %s\n", use.variable,
                  use.how == Under::Stops ? "stops" : use.how == Under::Controls ? "controls" : "teaches");
    std::fflush(stdout);
    std::exit(0);
  }
  std::vector<EnvUse> all(uses);
  for (const EnvUse& common : kEveryLesson) {
    bool declared = false;
    for (const EnvUse& u : uses) declared = declared || std::strcmp(u.variable, common.variable) == 0;
    if (!declared) all.push_back(common);
  }
  for (const EnvUse& use : all) {
    const std::string value = mattering(use);
    if (value.empty() || use.how != Under::Stops) continue;
    const EnvVariable* v = findEnvVariable(use.variable);
    throw EnvironmentError(use.variable,
        std::string(use.variable) + "=" + value + " is set in your environment. NVIDIA documents: " + v->documented +
        ".\nThis lesson cannot show what its page teaches under it: " + use.here +
        ".\nWhat to do: run it without the variable: env -u " + use.variable + " " + programName());
  }
  for (const EnvUse& use : all) {
    const std::string value = mattering(use);
    if (value.empty()) continue;
    const EnvVariable* v = findEnvVariable(use.variable);
    std::printf("Your environment sets %s=%s: %s.\n  %s: %s.\n", use.variable, value.c_str(), v->documented,
                use.how == Under::Controls ? "This lesson sets it itself for the processes it starts" : "Here",
                use.here);
  }
  // Out before cuInit: under CUDA_LOG_FILE=stderr the driver writes its lines straight to the same
  // terminal or pipe, and one landing inside a half-written note would cut it in two.
  std::fflush(stdout);
}

}  // namespace wb

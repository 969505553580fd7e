// Lesson 00: your machine.
//
// What you learn: what a machine must have before CUDA programs run well there, and how a program
// finds out for itself. Run it first, on your own machine: it says what the machine has and what
// will go wrong there, each finding with the lesson that explains it. It links no CUDA library: it
// opens libcuda.so.1 with dlopen and takes every driver function through cuGetProcAddress (lesson
// 12, step 4), so it starts on any machine and says "no driver" there instead of being stopped by
// the loader. In order: the CUDA environment variables in effect; the driver library the loader
// finds, and any stub of the toolkit's on its path; the versions and what they allow; this process
// and its devices (compute mode, MPS, kernels they can run); the module loading mode and the JIT
// cache; what each device supports (virtual memory, file-descriptor and IPC sharing, memory pools,
// green contexts); every pair of devices (peer access, and a copy whose bytes are checked).
// Exit code 0: nothing needs doing; 6: a finding needs action, and says what; 2: no usable driver
// or device. --json prints the same findings for tools.
//
// APIs (through cuGetProcAddress): cuDriverGetVersion, cuInit, cuDeviceGetCount, cuDeviceGet,
//       cuDeviceGetName, cuDeviceGetAttribute, cuDeviceTotalMem, cuDeviceGetPCIBusId,
//       cuModuleGetLoadingMode, cuDeviceGetDevResource, cuDevSmResourceSplitByCount,
//       cuDeviceCanAccessPeer, cuDeviceGetP2PAttribute, cuDevicePrimaryCtxRetain, cuCtxEnablePeerAccess,
//       cuMemcpyPeer
// Run:  ctest -R lesson00
//       (or build/lessons/lesson00-your-machine [--json] [--driver <libcuda>] [--fork-first])
#include "loaded_driver.hpp"
#include "machine.hpp"
#include "nvml.hpp"
#include "process.hpp"
#include "workbook.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Options {
  bool json = false;
  bool forkFirst = false;  // initialise CUDA, fork, and survey from the forked child
  std::string driver = "libcuda.so.1";
};

bool forkedChild = false;  // this process is the child --fork-first made: it ends with _exit

//! [report]
// What the program found, step by step. People read the lines as they come; --json prints the same
// findings at the end, for tools. Each finding's first line is "[severity] id (lesson NN)".
class Report {
 public:
  explicit Report(bool json) : json_(json) {}
  bool json() const { return json_; }
  void step(int n, const char* title) {
    step_ = n;
    if (!json_) wb::step(n, title);
  }
  void say(const std::string& line) const {
    if (!json_) std::printf("%s\n", line.c_str());
  }
  void add(wb::Finding f) {
    f.step = step_;
    if (!json_) {
      std::printf("[%s] %s%s\n    %s\n", wb::severityName(f.severity), f.id.c_str(),
                  f.lesson.empty() ? "" : (" (lesson " + f.lesson + ")").c_str(), f.what.c_str());
      if (!f.detail.empty()) std::printf("    %s\n", f.detail.c_str());
      if (!f.todo.empty()) std::printf("    What to do: %s\n", f.todo.c_str());
    }
    findings_.push_back(std::move(f));
  }
  //! [report]
  const std::vector<wb::Finding>& findings() const { return findings_; }
  size_t count(wb::Severity s) const {
    size_t n = 0;
    for (const auto& f : findings_) n += f.severity == s;
    return n;
  }
  int exitCode() const {
    return count(wb::Severity::NoDriver) ? wb::kExitNoGpu
           : count(wb::Severity::Action) ? wb::kExitNeedsAction
                                         : wb::kExitOk;
  }

 private:
  bool json_;
  int step_ = 0;
  std::vector<wb::Finding> findings_;
};

using Api = wb::DriverApi;  // the driver functions this program calls (common/loaded_driver.hpp)
using wb::attribute, wb::Basis, wb::busId, wb::CallFailed, wb::finding, wb::join, wb::need, wb::Severity;

// ---- Step 1 ----------------------------------------------------------------------------------------

//! [environment]
// The CUDA variables set to anything but their documented default: what NVIDIA documents each to
// do, and the lesson that shows what it changes. The driver reads them at cuInit, once: to change
// one, change it before the program starts (or in the program before anything initialises CUDA).
void environment(Report& r) {
  const auto active = wb::activeCudaVariables();
  for (const wb::ActiveVariable& a : active)
    r.add(finding(std::string("env.") + a.variable->name, Severity::Note, Basis::Documented,
                  std::string("Your environment sets ") + a.variable->name + "=" + a.value + ": " +
                      a.variable->documented + ".",
                  a.lesson));
  if (active.empty())
    r.add(finding("env", Severity::Ok, Basis::Documented,
                  "none of the " + std::to_string(wb::cudaEnvironmentVariables().size()) +
                      " CUDA variables of the programming guide's table is set to anything but its default"));
}
//! [environment]

// ---- Step 2 ----------------------------------------------------------------------------------------

//! [needed]
// What this program needs before main: the libraries its dynamic section names (lesson 12 reads
// the same section for its imports). libcuda is not among them, so the loader starts it anywhere;
// the driver is opened at run time, below.
void neededLibraries(Report& r) {
  const wb::DynamicSection self = wb::readDynamicSection(wb::selfPath());
  bool needsDriver = false;
  size_t driverImports = 0;
  for (const auto& n : self.needed) needsDriver = needsDriver || n.rfind("libcuda.so", 0) == 0;
  for (const auto& s : self.imported)
    driverImports += s.rfind("cu", 0) == 0 && s.size() > 2 && std::isupper(static_cast<unsigned char>(s[2]));
  r.say("this program needs, before main: " + join(self.needed) + "; it imports " +
        std::to_string(driverImports) + " driver functions");
  if (needsDriver)
    r.add(finding("program.needs-driver", Severity::Action, Basis::Computed,
                  "this build of the program links libcuda: without a driver the loader stops it before main",
                  "12", "", "build it as lessons/CMakeLists.txt does (the driver opened at run time)"));
}
//! [needed]

//! [open-driver]
// The driver, as the loader finds it for dlopen("libcuda.so.1"): every driver answers
// cuDriverGetVersion without cuInit, and the toolkit's stub answers CUDA_ERROR_STUB_LIBRARY.
bool openDriver(Report& r, const wb::LoadedDriver& d, int& version) {
  const std::string module = wb::kernelModuleVersion();
  wb::Finding f = finding("driver.library", Severity::NoDriver, Basis::Documented, "", "12",
                          module.empty() ? "No NVIDIA kernel module is loaded (/proc/driver/nvidia/version)."
                                         : "The NVIDIA kernel module " + module + " is loaded.");
  const CUresult rc = d.opened() ? d.version(&version) : CUDA_ERROR_NOT_FOUND;
  if (!d.opened()) {
    f.what = "no " + d.asked() + " could be opened: " + d.openError();
    f.detail += " A program linked to libcuda would not even start here: the loader ends it, exit code 127.";
    f.todo = "install the NVIDIA driver (nvidia-smi must list your GPU); in a container, start it with the "
             "GPU runtime, which mounts the driver's libraries";
  } else if (rc == CUDA_ERROR_STUB_LIBRARY) {
    f.what = "the " + d.asked() + " the loader found, " + d.path() + ", is the CUDA toolkit's stub library, "
             "not a driver: every call answers CUDA_ERROR_STUB_LIBRARY";
    f.todo = "install the NVIDIA driver, and keep the toolkit's stubs/ folder off LD_LIBRARY_PATH";
  } else if (rc != CUDA_SUCCESS || !d.hasProcAddress()) {
    f.what = d.path() + (rc != CUDA_SUCCESS ? " answered cuDriverGetVersion with " + d.describe(rc)
                                            : " lacks cuGetProcAddress_v2: a driver older than CUDA 12.0");
    f.todo = "install the NVIDIA driver, of CUDA 12.0 or newer";
  } else {
    f.severity = Severity::Ok;
    f.what = (d.asked() == d.path() ? d.path() + " is" : d.asked() + " is " + d.path() + ",") +
             " a driver of CUDA " + wb::cudaVersionText(version);
  }
  r.add(f);
  return f.severity == Severity::Ok;
}
//! [open-driver]

//! [driver-files]
// Every other libcuda the loader could find, in its search order. A stub of the toolkit's among
// them is a trap: a program that opens "libcuda.so" (some do), or runs with another LD_LIBRARY_PATH,
// gets the stub, and every call of it answers CUDA_ERROR_STUB_LIBRARY. Each file is asked in a
// forked child, before this process initialises CUDA, so it never loads into this process.
void driverFiles(Report& r, const wb::LoadedDriver& d) {
  for (const wb::DriverFile& f : wb::driverFilesOnLoaderPath()) {
    if (!d.path().empty() && f.real == d.path()) {
      r.say("  " + f.path + " (" + f.foundBy + "): the one loaded");
      continue;
    }
    const wb::DriverFileKind k = wb::inspectDriverFile(f.path);
    r.say("  " + f.path + " (" + f.foundBy + "): " +
          (k.kind == wb::DriverFileKind::Driver ? "a driver of CUDA " + wb::cudaVersionText(k.version)
           : k.kind == wb::DriverFileKind::Stub ? std::string("the toolkit's stub")
                                                : "not a driver: " + k.why));
    if (k.kind == wb::DriverFileKind::Stub && d.opened() && d.path() != f.real)
      r.add(finding(
          "driver.stub-on-path", Severity::Action, Basis::Documented,
          "the toolkit's stub " + f.path + " is on the loader's path (" + f.foundBy + ")", "12",
          "A program that opens libcuda.so instead of libcuda.so.1, or finds this folder first, gets the "
          "stub and no GPU.",
          "remove " + f.path.substr(0, f.path.find_last_of('/')) +
              " from LD_LIBRARY_PATH: the stub is for linking only"));
  }
}
//! [driver-files]

// ---- Step 3 ----------------------------------------------------------------------------------------

//! [versions]
// Three versions meet in a running program (lesson 12): the cuda.h it was built with, the driver it
// runs on, and the toolkit that built its kernel images. NVIDIA's compatibility guide: a driver
// runs what was built with its own CUDA version or older; a newer minor version of its own major
// version runs under minor version compatibility, without the newer features; a newer major not.
void versions(Report& r, int driver, bool usable) {
  const int built = CUDA_VERSION, major = built / 1000;
  const std::string isa = wb::imagesPtxIsa(), b = wb::cudaVersionText(built), v = wb::cudaVersionText(driver);
  r.say("built with cuda.h of CUDA " + b + "; kernel images by nvcc " + wb::imageToolkitVersion() +
        ", their PTX ISA " + (isa.empty() ? "unknown (no vector_ops.ptx)" : isa));
  if (!usable) return r.say("the driver's side: left out, no usable driver (step 2)");
  const std::string jit = wb::ptxIsaOf(driver);
  r.say("the driver supports CUDA " + v + ", whose JIT compiles PTX ISA up to " +
        (jit.empty() ? "a version newer than this program knows" : jit));
  wb::Finding f = finding("versions.toolkit", Severity::Ok, Basis::Documented, "the driver (CUDA " + v +
                          ") runs programs built with CUDA " + b + " and older", "12");
  if (driver < built && driver / 1000 == major) {
    f.severity = Severity::Note;
    f.what = "programs built with CUDA " + b + " run on this CUDA " + v +
             " driver under minor version compatibility, without the features newer than it";
  } else if (driver < built) {
    f.severity = Severity::Action;
    f.what = "programs built with CUDA " + b + ", as every later lesson, do not run on a driver of CUDA " + v;
    f.todo = "install a driver of branch " + std::to_string(wb::minorVersionFloor(major)) + " or newer (the "
             "compatibility guide's floor for CUDA " + std::to_string(major) + ".x), or on a data-center GPU "
             "the cuda-compat package of CUDA " + b;
  }
  r.add(f);
}
//! [versions]

// The user-mode driver's version against the kernel module's: a cuda-compat setup loads a newer
// libcuda over an older module on purpose (forward compatibility, lesson 12).
void driverAgainstModule(Report& r, const wb::LoadedDriver& d) {
  const std::string file = wb::versionInFileName(d.path()), module = wb::kernelModuleVersion();
  if (file.empty() || module.empty() || file == module) return;
  r.add(finding(
      "versions.forward-compatibility", Severity::Note, Basis::Documented,
      "the user-mode driver is " + file + ", the kernel module " + module, "12",
      "A newer libcuda over an older kernel module is the "
      "CUDA forward compatibility package: it works on the GPUs and under the conditions NVIDIA's "
      "compatibility guide lists; elsewhere cuInit fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803) or "
      "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)."));
}

// ---- Step 4 ----------------------------------------------------------------------------------------

//! [init-failures]
// What each way cuInit can fail means, and what to do about it.
wb::Finding whyNot(wb::InitAnswer answer, const std::string& said) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  wb::Finding f = finding("process.init", Severity::NoDriver, Basis::Documented, said, "01", "",
                          "check nvidia-smi and the kernel log (dmesg) for the driver's own message");
  if (answer == wb::InitAnswer::NoDevice) {
    f.what += ": the driver sees no CUDA device";
    if (visible) f.what += std::string(" (CUDA_VISIBLE_DEVICES is '") + visible + "')";
    f.todo = "check that nvidia-smi lists a GPU, and that CUDA_VISIBLE_DEVICES, where set, names one";
  } else if (answer == wb::InitAnswer::ForkedAfterInit) {
    f.basis = Basis::Observed, f.lesson = "17";
    f.what += ": what driver 580 answered in a child forked after its parent's cuInit; CUDA between fork "
              "and exec is undefined";
    f.todo = "start CUDA workers as fresh programs (fork and exec, or multiprocessing's \"spawn\"), or fork "
             "before anything in the parent initialises CUDA";
  } else if (answer == wb::InitAnswer::DriverMismatch) {
    f.lesson = "12";
    f.what += ": the user-mode driver and the kernel module, or this GPU and the forward compatibility "
              "package, do not go together";
    f.todo = "install one driver (its libcuda and kernel module together), or cuda-compat only where it "
             "supports the GPU";
  }
  return f;
}
//! [init-failures]

//! [init]
// cuInit's answer says whether this process can use CUDA at all, and if not, why. A process that
// knows it was forked after its own cuInit (--fork-first) says so, whatever the driver answers.
bool initialise(Report& r, const wb::LoadedDriver& d, const Api& api) {
  const CUresult rc = api.cuInit(0);
  const std::string said = "cuInit(0) returned " + d.describe(rc);
  if (const int parent = wb::initialisedIn()) {
    r.add(finding("process.init", Severity::NoDriver, Basis::Documented,
                  "this process (pid " + std::to_string(getpid()) + ") was forked after pid " +
                      std::to_string(parent) + "'s cuInit; here " + said,
                  "17", "CUDA between fork and exec is undefined, whatever the driver answers.",
                  whyNot(wb::InitAnswer::ForkedAfterInit, said).todo));
    return false;
  }
  const wb::InitAnswer answer = wb::classifyInit(rc);
  if (answer != wb::InitAnswer::Ready) {
    r.add(whyNot(answer, said));
    return false;
  }
  wb::rememberInit();
  r.add(finding("process.init", Severity::Ok, Basis::Documented,
                said + " in this process (pid " + std::to_string(getpid()) + "): CUDA can be used here",
                "17"));
  return true;
}
//! [init]

//! [compute-mode]
// Who may use the device: the compute mode (nvidia-smi -c sets it), and whether contexts made on
// it are shared through an MPS server.
void computeMode(Report& r, const wb::LoadedDriver& d, const Api& api, CUdevice dev, int n) {
  const std::string id = "device." + std::to_string(n);
  const int mode = attribute(d, api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
  const std::string what = "device " + std::to_string(n) + "'s compute mode is " + wb::computeModeName(mode);
  if (mode == CU_COMPUTEMODE_PROHIBITED)
    r.add(finding(id + ".compute-mode", Severity::Action, Basis::Documented,
                  what + ": no context can be made on it", "17", "",
                  "set it back with nvidia-smi -i <gpu> -c DEFAULT (as root), or use another GPU"));
  else if (mode == CU_COMPUTEMODE_EXCLUSIVE_PROCESS)
    r.add(finding(id + ".compute-mode", Severity::Note, Basis::Documented,
                  what + ": one process at a time may have a context on it (MPS clients count as one)", "17",
                  "Lesson 17's processes that share a GPU, and any server that forks workers onto one GPU, "
                  "need DEFAULT or MPS."));
  else
    r.add(finding(id + ".compute-mode", Severity::Ok, Basis::Documented,
                  what + ": several processes may use it", "17"));
  if (attribute(d, api, dev, CU_DEVICE_ATTRIBUTE_MPS_ENABLED) == 1)
    r.add(finding(id + ".mps", Severity::Note, Basis::Documented,
                  "contexts made on device " + std::to_string(n) +
                      " are shared through MPS (CU_DEVICE_ATTRIBUTE_MPS_ENABLED)", "17",
                  "Kernels of several processes then run side by side in one server; a fault in one client "
                  "can end the others' work."));
}
//! [compute-mode]

//! [kernels-for-device]
// Whether the course's kernel images run on a device: a cubin for sm_XY runs on devices of
// compute capability X.z with z >= Y (NVIDIA's binary compatibility); elsewhere the driver must
// compile the fatbin's PTX (of the newest built architecture), which its JIT must know the ISA of.
void kernelsFor(Report& r, int n, int major, int minor, int driver) {
  const unsigned arch = static_cast<unsigned>(major * 10 + minor);
  const std::vector<unsigned> built = wb::builtArchitectures();
  const std::string sm = "sm_" + std::to_string(arch), isa = wb::imagesPtxIsa(), jit = wb::ptxIsaOf(driver);
  wb::Finding f = finding("device." + std::to_string(n) + ".kernels", Severity::Note, Basis::Documented,
                          "the driver compiles the images' PTX for " + sm + " when a kernel is first loaded "
                          "(no machine code for it is built): the JIT cache (step 5) keeps it", "12");
  for (unsigned b : built)
    if (b / 10 == arch / 10 && b % 10 <= arch % 10) {
      f.severity = Severity::Ok, f.lesson = "06";
      f.what = "the course's images hold machine code for sm_" + std::to_string(b) + ", which runs on " + sm;
      return r.add(f);
    }
  const std::string rebuild = "build with -DWORKBOOK_CUDA_ARCHS=\"...;" + std::to_string(arch) + "\"";
  if (arch < built.back()) {
    f.severity = Severity::Action, f.lesson = "06", f.todo = rebuild;
    f.what = "no machine code in the course's images runs on " + sm + ", and their PTX is for a newer one";
  } else if (!isa.empty() && !jit.empty() && wb::compareVersions(isa, jit) > 0) {
    f.severity = Severity::Action, f.basis = Basis::Computed, f.todo = rebuild + ", or update the driver";
    f.what = sm + " needs the images' PTX compiled, and its ISA " + isa + " is newer than the JIT's " + jit;
  }
  r.add(f);
}
//! [kernels-for-device]

// Every device: what it is, who may use it, and whether the course's kernels run on it.
int devices(Report& r, const wb::LoadedDriver& d, const Api& api, int driver) {
  int count = 0;
  need(d, api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  r.say("the driver sees " + std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s"));
  if (count == 0)
    r.add(finding("process.devices", Severity::NoDriver, Basis::Documented,
                  "cuInit(0) succeeded, and cuDeviceGetCount counts no device", "01", "",
                  "check that nvidia-smi lists a GPU, and that CUDA_VISIBLE_DEVICES, where set, names one"));
  for (int n = 0; n < count; ++n) {
    CUdevice dev = 0;
    need(d, api.cuDeviceGet(&dev, n), "cuDeviceGet");
    char name[256] = {};
    need(d, api.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
    size_t memory = 0;
    need(d, api.cuDeviceTotalMem(&memory, dev), "cuDeviceTotalMem");
    const int major = attribute(d, api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
              minor = attribute(d, api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    r.say("device " + std::to_string(n) + ": " + name + ", compute capability " + std::to_string(major) +
          "." + std::to_string(minor) + ", " + wb::bytes(memory));
    computeMode(r, d, api, dev, n);
    kernelsFor(r, n, major, minor, driver);
  }
  return count;
}

//! [mps-folder]
// Where an MPS control daemon would meet this process: at cuInit the driver tries to connect to one
// in this folder, and if it answers, the process becomes its client.
void mpsFolder(Report& r) {
  const wb::MpsPipeFolder m = wb::mpsPipeFolder();
  const std::string where = m.fromVariable
                                ? m.folder + " (CUDA_MPS_PIPE_DIRECTORY)"
                                : "nvidia-mps in /tmp, the default (CUDA_MPS_PIPE_DIRECTORY is unset)";
  if (!m.exists)
    return r.add(finding("process.mps", Severity::Ok, Basis::Documented, "no MPS pipe folder: " + where +
                         " does not exist, so no MPS control daemon serves this process", "17"));
  r.add(finding("process.mps", Severity::Note, Basis::Documented,
                "the MPS pipe folder " + where + " exists (" + std::to_string(m.entries) +
                    " entries): a control daemon may serve this process", "17",
                "Under MPS a process's kernels share the GPU with other clients', and its compute mode is "
                "usually EXCLUSIVE_PROCESS."));
}
//! [mps-folder]

// ---- Step 5 ----------------------------------------------------------------------------------------

//! [loading-mode]
// Lazy loading (the default since CUDA 12.2) loads a kernel when it is first needed; EAGER loads
// every kernel of a module at cuModuleLoad (lesson 06). What CUDA_MODULE_LOADING chose, as the driver says.
void loadingMode(Report& r, const wb::LoadedDriver& d, const Api& api) {
  if (!api.cuModuleGetLoadingMode) return r.say("cuModuleGetLoadingMode: not in this driver");
  CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
  need(d, api.cuModuleGetLoadingMode(&mode), "cuModuleGetLoadingMode");
  if (mode == CU_MODULE_LAZY_LOADING)
    r.add(finding("loading.mode", Severity::Ok, Basis::Documented,
                  "modules load lazily: each kernel when first needed, so a load is cheap and a kernel's "
                  "first use pays", "06"));
  else
    r.add(finding("loading.mode", Severity::Note, Basis::Documented,
                  "modules load eagerly: every kernel at cuModuleLoad or cuLibraryLoad "
                  "(CUDA_MODULE_LOADING=EAGER): start-up pays for all of them", "06"));
}
//! [loading-mode]

//! [jit-cache]
// Where the driver keeps the machine code its JIT compiled, and whether it can. A folder it cannot
// write means every process compiles the same PTX again, at every cold start (lesson 12, step 6).
void jitCacheFinding(Report& r) {
  const wb::JitCache c = wb::jitCache();
  const std::string where = wb::shownPath(c.folder) + (c.folderFromVariable ? " (CUDA_CACHE_PATH)" : "");
  r.say("JIT cache: " + where + ", " +
        (c.exists ? std::to_string(c.files) + " files, " + wb::bytes(c.usedBytes)
                  : std::string("not created yet")) +
        "; its limit " + wb::bytes(c.maxBytes) +
        (c.maxFromVariable ? " (CUDA_CACHE_MAXSIZE)" : " (the default)"));
  if (c.disabled || c.maxBytes == 0)
    r.add(finding("jit.cache", Severity::Note, Basis::Documented, std::string("the JIT cache is off (") +
                  (c.disabled ? "CUDA_CACHE_DISABLE=1" : "CUDA_CACHE_MAXSIZE=0: nothing fits") +
                  "): every process compiles the PTX it loads again", "12"));
  else if (!c.writable)
    r.add(finding("jit.cache", Severity::Action, Basis::Computed, "this process cannot write the JIT cache " +
                  where + ": " + wb::shownPath(c.writableCheckedAt) + " is not a folder it may write in", "12",
                  "Every process then compiles again the PTX it loads, at every start.",
                  "point CUDA_CACHE_PATH at a folder the program may write (a container's home is often "
                  "read-only)"));
  else if (c.usedBytes >= c.maxBytes)
    r.add(finding("jit.cache", Severity::Note, Basis::Computed, "the JIT cache " + where + " holds " +
                  wb::bytes(c.usedBytes) + ", its whole limit: what it compiles next replaces older entries",
                  "12"));
  else
    r.add(finding("jit.cache", Severity::Ok, Basis::Computed, "the JIT cache " + where + " can be written",
                  "12"));
}
//! [jit-cache]

// ---- Step 6 ----------------------------------------------------------------------------------------

//! [features]
// What the later lessons need of a device, each by the attribute the reference documents for it.
void features(Report& r, const wb::LoadedDriver& d, const Api& api, CUdevice dev, int n) {
  struct Feature {
    const char* id;
    CUdevice_attribute attribute;
    const char* what;
    const char* lesson;
  };
  const Feature all[] = {
      {"virtual-memory", CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
       "virtual memory (cuMemCreate, cuMemMap)", "14"},
      {"posix-fd", CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
       "memory exported as a POSIX file descriptor", "14"},
      {"ipc-memory", CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
       "legacy IPC memory (cuIpcGetMemHandle needs unified addressing)", "17"},
      {"ipc-events", CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, "interprocess events (cuIpcGetEventHandle)",
       "17"},
      {"memory-pools", CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
       "stream-ordered allocation (cuMemAllocAsync)", "13"},
  };
  for (const Feature& f : all) {
    const int has = attribute(d, api, dev, f.attribute);
    const std::string id = "device." + std::to_string(n) + "." + f.id,
                      what = std::string(f.what) + " on device " + std::to_string(n);
    if (has == 1)
      r.add(finding(id, Severity::Ok, Basis::Documented, what + ": supported", f.lesson));
    else
      r.add(finding(id, Severity::Note, Basis::Documented,
                    what + ": " + (has < 0 ? "this driver does not say" : "not supported"), f.lesson,
                    std::string("Lesson ") + f.lesson + "'s steps that need it are left out here."));
  }
}
//! [features]

//! [green-contexts]
// Green contexts split a device's SMs (lesson 16). The smallest partition is not one SM: asked for
// one group of at least 1 SM, cuDevSmResourceSplitByCount rounds up to what the device can split off.
void greenContexts(Report& r, const wb::LoadedDriver& d, const Api& api, CUdevice dev, int n) {
  const std::string device = "device " + std::to_string(n);
  wb::Finding f = finding("device." + std::to_string(n) + ".green-contexts", Severity::Note,
                          Basis::Documented, "no green contexts on " + device + ": ", "16");
#if CUDA_VERSION >= 12040
  CUdevResource whole{}, smallest{}, rest{};
  unsigned groups = 1;
  const CUresult has = api.cuDeviceGetDevResource
                           ? api.cuDeviceGetDevResource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM)
                           : CUDA_ERROR_NOT_SUPPORTED;
  if (has == CUDA_SUCCESS) {
    const CUresult split = api.cuDevSmResourceSplitByCount(&smallest, &groups, &whole, &rest, 0, 1);
    f.severity = Severity::Ok, f.basis = Basis::Computed;
    f.what = "green contexts on " + device + ": " + std::to_string(whole.sm.smCount) + " SMs; " +
             (split == CUDA_SUCCESS && groups == 1
                  ? "the smallest partition is " + std::to_string(smallest.sm.smCount) + " SMs"
                  : "one group of at least 1 SM: cuDevSmResourceSplitByCount returned " + d.describe(split));
  } else {
    f.what += api.cuDeviceGetDevResource ? "cuDeviceGetDevResource returned " + d.describe(has)
                                         : std::string("the driver predates CUDA 12.4");
  }
#else
  (void)d, (void)api, (void)dev;
  f.what += "this program was built with CUDA " + wb::cudaVersionText(CUDA_VERSION) + ", before 12.4's API";
#endif
  r.add(f);
}
//! [green-contexts]

// ---- Step 7 ----------------------------------------------------------------------------------------

//! [pairs]
// Every pair of devices: may each access the other's memory (cuDeviceCanAccessPeer answers per
// direction), what links them (NVML), and a round trip whose bytes are checked.
void pairs(Report& r, const wb::LoadedDriver& d, const Api& api, int count) {
  if (count < 2)
    return r.add(finding("pairs", Severity::Ok, Basis::Computed, std::to_string(count) + " device" +
                         (count == 1 ? "" : "s") + ": no pair of devices to check", "18"));
  const wb::Primaries primary(d, api, count);
  for (int i = 0; i < count; ++i)
    for (int j = i + 1; j < count; ++j) {
      const CUdevice a = primary.devices[i], b = primary.devices[j];
      int ab = 0, ba = 0, rank = -1;  // rank: the reference's relative performance of the link
      need(d, api.cuDeviceCanAccessPeer(&ab, a, b), "cuDeviceCanAccessPeer");
      need(d, api.cuDeviceCanAccessPeer(&ba, b, a), "cuDeviceCanAccessPeer");
      need(d, api.cuDeviceGetP2PAttribute(&rank, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, a, b), "P2P rank");
      std::string why;
      const auto links = wb::nvml::nvlinksBetween(busId(d, api, a), busId(d, api, b), why);
      const std::string pair = std::to_string(i) + " and " + std::to_string(j);
      r.say("devices " + pair + ": peer access " + (ab ? "yes" : "no") + " one way, " + (ba ? "yes" : "no") +
            " the other, rank " + std::to_string(rank) + "; " + (links ? links->describe() : why));
      //! [pairs]
      //! [pair-verdict]
      const bool peer = ab && ba, intact = wb::roundTrip(d, api, primary.contexts[i], primary.contexts[j], peer);
      wb::Finding f = finding("pair." + std::to_string(i) + "-" + std::to_string(j), Severity::Ok,
                              Basis::Computed, "4 MiB from device " + std::to_string(i) + " to " +
                              std::to_string(j) + " and back, every byte intact, ", "18");
      f.what += peer ? "with peer access both ways" : "without peer access (staged in host memory)";
      f.severity = peer ? Severity::Ok : Severity::Note;
      if (!intact) {
        f.severity = Severity::Action;
        f.what = "a round trip between devices " + pair + " came back with other bytes than were sent";
        f.todo = "check nvidia-smi topo -m, and the PCIe ACS and IOMMU settings NVIDIA's documentation gives "
                 "for peer-to-peer; until then keep peer access off";
      }
      r.add(f);
    }
}
//! [pair-verdict]

// ---- Step 8 ----------------------------------------------------------------------------------------

//! [summary]
// The verdict: the exit code, and each finding that needs action with what to do.
int summary(Report& r) {
  const int code = r.exitCode();
  for (const wb::Finding& f : r.findings())
    if (f.severity == Severity::Action || f.severity == Severity::NoDriver)
      r.say("step " + std::to_string(f.step) + ", " + f.id + ": " + f.todo +
            (f.lesson.empty() ? "" : " (lesson " + f.lesson + ")"));
  const size_t actions = r.count(Severity::Action);
  r.say(code == wb::kExitNoGpu ? "Exit code 2: no usable CUDA driver or device here; the lessons cannot run."
        : code == wb::kExitNeedsAction ? "Exit code 6: " + std::to_string(actions) + " finding" +
                                             (actions == 1 ? " needs" : "s need") + " action (above)."
                                       : "Exit code 0: nothing needs doing; the lessons can run here.");
  return code;
}
//! [summary]

// In --fork-first: cuInit here, then fork; the forked child goes on with the survey and this
// process ends with the child's exit code.
void forkAfterInit(Report& r, const wb::LoadedDriver& d, const Api& api) {
  need(d, api.cuInit(0), "cuInit");
  wb::rememberInit();
  r.say("--fork-first: cuInit(0) succeeded in pid " + std::to_string(getpid()) +
        "; fork(), and the child goes on");
  std::fflush(stdout);
  wb::forkAndGoOnInChild();  // this process ends with the child's exit code
  forkedChild = true;
}

// Runs one step; a driver call that fails where nothing should ends that step only.
template <typename Body>
void inStep(Report& r, int n, const char* title, Body&& body) {
  r.step(n, title);
  try {
    body();
  } catch (const CallFailed& e) {
    r.add(finding("step" + std::to_string(n) + ".failed", Severity::Action, Basis::Observed,
                  std::string("this step could not finish: ") + e.what(), "", "",
                  "check nvidia-smi and the kernel log (dmesg); run the lesson again once the GPU answers"));
  }
}

int survey(const Options& o) {
  Report r(o.json);
  inStep(r, 1, "The CUDA variables in your environment", [&] { environment(r); });
  // Before the driver is opened: with CUDA_LOG_FILE=stderr its log lines go straight to stderr, and
  // would land inside what stdout still holds back (lesson 24).
  std::fflush(stdout);
  const wb::LoadedDriver d(o.driver);
  int driver = 0;
  bool usable = false;
  inStep(r, 2, "The driver library the loader finds", [&] {
    neededLibraries(r);
    usable = openDriver(r, d, driver);
    driverFiles(r, d);
  });
  inStep(r, 3, "Versions, and what they allow", [&] {
    versions(r, driver, usable);
    if (usable) driverAgainstModule(r, d);
  });
  std::vector<std::string> missing;
  const Api api = usable ? lookUpAll(d, missing) : Api{};
  if (usable && !missing.empty()) {
    r.add(finding("driver.functions", Severity::NoDriver, Basis::Documented,
                  d.path() + " lacks " + join(missing) + ", which every driver of CUDA 12.0 and newer has",
                  "12", "", "install the NVIDIA driver, of CUDA 12.0 or newer"));
    usable = false;
  }
  int count = 0;
  inStep(r, 4, "This process and its devices", [&] {
    if (!usable) return r.say("left out: no usable driver (step 2)");
    if (o.forkFirst) forkAfterInit(r, d, api);
    usable = initialise(r, d, api);
    if (usable) count = devices(r, d, api, driver);
    mpsFolder(r);
  });
  inStep(r, 5, "Loading kernels: the loading mode and the JIT cache", [&] {
    if (usable) loadingMode(r, d, api);
    jitCacheFinding(r);
  });
  inStep(r, 6, "What each device supports", [&] {
    if (!usable) return r.say("left out: no usable driver or device (steps 2 and 4)");
    for (int n = 0; n < count; ++n) {
      CUdevice dev = 0;
      need(d, api.cuDeviceGet(&dev, n), "cuDeviceGet");
      features(r, d, api, dev, n);
      greenContexts(r, d, api, dev, n);
    }
  });
  inStep(r, 7, "Every pair of devices", [&] {
    if (!usable) return r.say("left out: no usable driver or device (steps 2 and 4)");
    pairs(r, d, api, count);
  });
  r.step(8, "What needs doing");
  const int code = summary(r);
  if (o.json) wb::printJson("lesson00-your-machine", r.findings(), code);
  std::fflush(stdout);  // the report comes before the error line, also in a log that holds both
  if (!o.json &&
      code == wb::kExitNoGpu)  // every lesson says on stderr why it cannot run here: the first reason
    for (const wb::Finding& f : r.findings())
      if (f.severity == Severity::NoDriver) {
        std::fprintf(stderr, "error: no CUDA program can run here: %s\nWhat to do: %s.\n", f.what.c_str(),
                     f.todo.c_str());
        break;
      }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") o.json = true;
    else if (a == "--fork-first") o.forkFirst = true;
    else if (a == "--driver" && i + 1 < argc) o.driver = argv[++i];
    else
      return std::fprintf(stderr, "usage: %s [--json] [--driver <libcuda file>] [--fork-first]\n", argv[0]),
             wb::kExitUsage;
  }
  // The environment suites ask which variables a lesson declares: every one of the table's, each
  // named in step 1 with what it changes (this call prints them and exits in that mode only).
  if (std::getenv("WORKBOOK_ENVIRONMENT_USES")) {
    std::vector<wb::EnvUse> uses;
    for (const wb::EnvVariable& v : wb::cudaEnvironmentVariables())
      uses.emplace_back(v.name, wb::Under::Teaches, "step 1 names it, with what it changes");
    wb::checkEnvironment(uses);
  }
  try {
    const int code = survey(o);
    std::fflush(stdout);
    // The forked child ends without exit's handlers: they are its parent's (the driver's among them).
    if (forkedChild) _exit(code);
    return code;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    if (forkedChild) _exit(wb::kExitDriverError);
    return wb::kExitDriverError;
  }
}

// Lesson 12's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-12
#include "exercises.hpp"
#include "exercise.hpp"

#include <cudaTypedefs.h>  // PFN_<call>_v<version>: the function pointer types of cuda.h's calls

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex12 {

// Exercise 1 of 3 (entry-point): A driver function looked up by name and version, every answer told apart
//
// Task: A library built with a new toolkit must still start on older drivers, so it does not link
// the driver functions it may lack: it looks them up at run time with cuGetProcAddress, by name and
// by the CUDA version whose signature its code was written against. What it does when a lookup
// gives no pointer depends on why: a function this driver does not have calls for a fallback, or
// for a newer driver; a function the driver has only from a version newer than the one asked for
// means the code asks with the wrong version, and would call the wrong signature if it asked with
// another; a version newer than the driver supports is refused outright. Write resolveEntryPoint.
//
//   R1: It looks symbol up with cuGetProcAddress as of cudaVersion, the version it is given, and
//       returns Found with the pointer when the driver has the function as of that version.
//   R2: A function this driver does not have is NotInDriver, with no pointer.
//   R3: A function the driver has only from a version newer than cudaVersion is NotInVersion, with
//       no pointer.
//   R4: A cudaVersion newer than the driver supports, by a minor or a major version, is
//       BeyondDriver, with no pointer; the driver's own version is not.
//   R5: Any other failure of the call throws wb::DriverError: an error for a version this driver
//       does support is not BeyondDriver.
//   R6 (not checked: for the functions looked up every flag finds the same pointer): it asks with
//       the default flags.
//
// The check: exercise12.entry-point resolves cuMemAlloc, cuMemFree and cuDriverGetVersion as of CUDA
// 12.0 and verifies that each is Found and works when called through its type from cudaTypedefs.h:
// it allocates and frees 4 KiB in the primary context, and reads the same version as
// cuDriverGetVersion. It verifies that cuMemAlloc as of the driver's own version is Found. Then it
// verifies NotInDriver for a name no driver has, NotInVersion for cuLibraryLoadData as of CUDA 11.8
// (it arrived in 12.0), and BeyondDriver for cuMemAlloc as of a CUDA version one minor past the
// driver's and one major past it, each with no pointer. Last, it makes cuGetProcAddress itself fail
// (the check stands between your code and the driver), once with CUDA_ERROR_INVALID_VALUE and once
// with CUDA_ERROR_NOT_SUPPORTED, for cuMemAlloc as of CUDA 12.0, and verifies that each is thrown as
// wb::DriverError with its code. It does not tell the default flags from the per-thread or legacy
// ones: for the functions it looks up they find the same pointer.
//
// Learn it in: lesson 12, step 3 ("Entry points at run time")
Resolved resolveEntryPoint(const char* symbol, int cudaVersion) {
  wb::notDone();
}

// Exercise 2 of 3 (version-check): A start-up check of the driver against the toolkit the program was built with
//
// Task: When a program built on a build server meets a machine, the first line of its log should
// say whether the driver there can run it, and what to do if not: "the driver supports CUDA 12.4,
// this program was built with CUDA 12.8" helps more than a failure at the first kernel. NVIDIA's
// compatibility guide: a driver runs programs built with the toolkit of its own CUDA version and
// with every older one; a program built with a newer minor version of the driver's own major
// version runs under minor version compatibility, without the features newer than the driver (and
// PTX from that toolkit is too new for the driver to compile); a program built with a newer major
// version does not run (unless the CUDA forward compatibility package is installed, on data-center
// GPUs). Write checkVersions, which says which of Full, MinorVersion and None applies, with one line
// for the log, and checkThisProcess.
//
//   R1: checkVersions says Full when the driver's version is at least the toolkit's, across major
//       versions too.
//   R2: It says MinorVersion when the driver is older than the toolkit but of the same major
//       version.
//   R3: It says None when the driver's major version is older than the toolkit's.
//   R4: Its message names both versions as major.minor (12.4, not 12040).
//   R5 (not checked: advice is prose, which no check can judge): the message says what to do.
//   R6: checkThisProcess says what checkVersions says for the driver this process runs on
//       (cuDriverGetVersion) and the cuda.h it was built with (CUDA_VERSION).
//
// The check: exercise12.version-check gives checkVersions eight pairs (the same version, a newer
// driver minor, a newer driver major, an older driver minor, and an older driver major, each as
// 12.x or 13.x) and verifies the level and that the message names both versions as major.minor.
// Then it verifies that checkThisProcess says what checkVersions says for cuDriverGetVersion and
// CUDA_VERSION, on this driver and while the check makes cuDriverGetVersion report a driver one
// major version older than CUDA_VERSION and then one newer (the check stands between your code and
// the driver). It does not judge the advice in the message, only the versions it names.
//
// Learn it in: lesson 12, step 1 ("Three versions")
VersionCheck checkVersions(int driverVersion, int toolkitVersion) {
  wb::notDone();
}

VersionCheck checkThisProcess() {
  wb::notDone();
}

// Exercise 3 of 3 (cubin-or-ptx): A kernel from the cubin for this GPU, or from PTX where the cubin cannot run
//
// Task: A plugin ships each kernel as a cubin for the GPUs it was built for and as PTX, and loads
// them itself. On a GPU it was built for, the cubin must be used: it is ready to run, while PTX is
// compiled by the driver at every cold start (lesson 12, step 6). On another GPU the cubin does not
// load, and the PTX is compiled for it. Write loadKernel, which loads an image into the current
// context with cuModuleLoadData and gets the kernel name from it. Under lazy loading a load can
// succeed and its error come only when the kernel is first needed, so getting the kernel is part of
// loading it.
//
//   R1: Where the cubin loads and has the kernel, the kernel comes from the cubin, and the result
//       says it did not come from the PTX.
//   R2: If either step fails for the cubin, what was loaded is unloaded and the same is done with
//       the PTX; the result says the kernel came from the PTX.
//   R3: If the PTX fails too (the JIT may be forbidden on this machine, or neither image has the
//       kernel), nothing is left loaded and the PTX's error is thrown as a wb::DriverError: the
//       cubin's is expected on other GPUs and says nothing about why the fallback failed.
//   R4: On success the module of the kernel is the only one left loaded.
//
// The check: exercise12.cubin-or-ptx runs two child processes (this check again), each with the
// driver's JIT settings chosen explicitly, whatever your shell sets, and an empty JIT cache folder of
// its own. With the JIT allowed, the child loads fill from the cubin built for this device's
// architecture and verifies that it did not come from the PTX, then from a cubin for another
// architecture and verifies that it did; each time it runs fill and scale (from the same module)
// and checks the result. Then it asks for a kernel neither image has, and verifies that loadKernel
// throws a wb::DriverError with the code the PTX alone gets (CUDA_ERROR_NOT_FOUND). With the JIT
// forbidden (CUDA_DISABLE_PTX_JIT=1), the child verifies that the device's own cubin still loads,
// not from PTX, and that with the foreign cubin loadKernel throws a wb::DriverError with the code the
// PTX alone gets there. After every call it counts the modules the process holds (the check stands
// between your code and the driver): one more after a success, none after a failure. It does not
// try a cubin that fails for another reason than its architecture (a damaged image), which the
// driver does not always survive.
//
// Learn it in: lesson 12, step 5 ("Images against devices and drivers"), and lesson 06, step 5 ("Every load error")
LoadedKernel loadKernel(const std::vector<char>& cubin, const std::vector<char>& ptx, const char* name) {
  wb::notDone();
}

}  // namespace ex12

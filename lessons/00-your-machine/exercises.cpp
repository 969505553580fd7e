// Lesson 00's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-00
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex00 {

// Exercise 1 of 2 (cuda-usable): Whether this process can use CUDA at all, and why not
//
// Task: A service should say in its first log line whether CUDA can work in this process, and why
// not, instead of failing in its first request; and it must start to say it, also where there is no
// driver. Write cudaUsable with dlopen and dlsym yourself (lesson 00's program does it with
// common/loaded_driver.hpp, which does more): open library with dlopen (RTLD_NOW | RTLD_LOCAL),
// take cuInit and cuDeviceGetCount from it with dlsym, by those names (every driver exports them),
// then call cuInit(0) and count the devices.
//
//   R1: A library that cannot be opened is NoDriver, and why names library as given and dlerror()'s
//       text.
//   R2: A library that lacks cuInit or cuDeviceGetCount is Unusable.
//   R3: cuInit answering CUDA_ERROR_STUB_LIBRARY is StubDriver (the toolkit's stub, a file for
//       linking, not a driver).
//   R4: cuInit answering CUDA_ERROR_NO_DEVICE is NoDevice (no GPU, or CUDA_VISIBLE_DEVICES hides
//       them all).
//   R5: cuInit answering CUDA_ERROR_NOT_INITIALIZED is ForkedAfterInit (what driver 580 answered in
//       a process forked after its parent's cuInit; NVIDIA calls any CUDA use between fork and exec
//       undefined).
//   R6 (not checked: no driver at hand fails cuInit otherwise, and no stand-in can): any other
//       failure of cuInit is Unusable.
//   R7: After a cuInit that succeeded, at least one device is Usable.
//   R8 (not checked: no driver at hand fails the count after its cuInit succeeded): after a cuInit
//       that succeeded, a failed cuDeviceGetCount is Unusable and a count of 0 NoDevice.
//   R9: Wherever a call failed, why names the call and its CUresult by number (34, 100, 3, ...).
//   R10: It never throws and never ends the process: this runs where nothing works.
//
// The check: exercise00.cuda-usable asks about this machine's driver (Usable), a library path
// where no file is (NoDriver, why naming the path and what dlerror() says of it), the build's copy
// of the toolkit's stub (StubDriver, why naming cuInit and 34), a shared library that is not a
// driver, libm.so.6 (Unusable); in a child process started with CUDA_VISIBLE_DEVICES empty
// (NoDevice, why naming cuInit and 100); and in a child forked after the check's own cuInit
// (ForkedAfterInit, why naming cuInit and 3). No ask may throw.
//
// Learn it in: lesson 00, step 2 ("The driver library the loader finds") and step 4 ("This process and its devices")
CudaVerdict cudaUsable(const std::string& library) {
  wb::notDone();
}

// Exercise 2 of 2 (jit-cache): A JIT cache the process can write, chosen before cuInit
//
// Task: A service that loads PTX, its own or a library's, pays the JIT's compile at every start
// unless the driver can keep what it compiled. In a container the home folder is often read-only,
// or HOME unset. The driver reads its cache settings once, at cuInit, from the environment, so a
// service settles them first thing in main. Write prepareJitCache.
//
//   R1: When CUDA_CACHE_DISABLE is "1" the cache is off: it returns enabled false and changes
//       nothing (no folder made, the environment as it was), whatever the folder; any other value
//       leaves the cache on.
//   R2: The folder is CUDA_CACHE_PATH when it is set and not empty.
//   R3: Otherwise it is .nv/ComputeCache in the home folder: $HOME when it is set and not empty,
//       else the home folder of this process's user in the password database (getpwuid(getuid())).
//   R4: The driver creates a missing folder, so the folder, from CUDA_CACHE_PATH or from the home,
//       is usable when the nearest folder on its path that exists (the folder itself, or the
//       closest one above it) is a directory this process may write in and enter:
//       access(W_OK | X_OK). A usable folder is returned as it is, moved false, and the
//       environment is left as it was.
//   R5: When the folder is not usable, it creates fallback (and the folders above it), sets
//       CUDA_CACHE_PATH to it in this process's environment with setenv, and returns it with moved
//       true.
//   R6: When fallback cannot be created, it throws std::runtime_error and leaves the environment as
//       it was.
//   R7: maxBytes is CUDA_CACHE_MAXSIZE read as a 64-bit count of bytes (it may be past 4 GiB), or
//       the documented default, 1073741824, when it is not set; whether the cache is on or off.
//
// The check: exercise00.jit-cache sets the variables in its own process and calls prepareJitCache
// with a fallback in a scratch folder: a CUDA_CACHE_PATH that exists, one not created yet under a
// writable folder, one under a regular file and one under a regular file that may be executed
// (each of which must move to the fallback: a folder, and CUDA_CACHE_PATH naming it); no
// CUDA_CACHE_PATH (or an empty one) with HOME set, with HOME empty and with HOME unset (the
// password database's home), and with a HOME under a regular file (which must move);
// CUDA_CACHE_DISABLE=1 with a folder that cannot be written (nothing changes, and maxBytes is
// still read) and CUDA_CACHE_DISABLE=0 (it moves); CUDA_CACHE_MAXSIZE of 6 GiB, and unset; and a
// fallback that cannot be created either (std::runtime_error, CUDA_CACHE_PATH as it was). It does
// not cover folders that permissions alone forbid: a process of root's may write in them.
//
// Learn it in: lesson 00, step 5 ("Loading kernels: the loading mode and the JIT cache"), and lesson 12, step 6 ("What the JIT costs, and its cache")
JitCacheSetup prepareJitCache(const std::string& fallback) {
  wb::notDone();
}

}  // namespace ex00

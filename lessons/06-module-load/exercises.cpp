// Lesson 06's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-06
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex06 {

// Exercise 1 of 3 (jit-log): Loading PTX with the JIT's error log returned to the caller
//
// Task: Your service compiles PTX that a code generator writes at run time, and when the driver
// refuses it, "CUDA_ERROR_INVALID_PTX" alone tells the generator's authors nothing: the JIT
// compiler's own log says which line and what is wrong. Write loadPtx, which loads with
// cuModuleLoadDataEx and gives the JIT an error log buffer (CU_JIT_ERROR_LOG_BUFFER and
// CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES; the size travels in the void* itself).
//
//   R1: It loads the PTX text into the current context, whichever context that is, and returns
//       CUDA_SUCCESS, the module and an empty log for PTX that compiles.
//   R2: It returns what happened instead of throwing: the CUresult, and a module that is nullptr
//       unless it loaded.
//   R3: The log is the JIT's error log as text: just the characters the JIT wrote.
//   R4: Every call returns the whole log of its own load, a few hundred characters too, and nothing
//       of an earlier load's.
//   R5: The thread's context stack is as it was, and the process holds nothing more than the module
//       it returns, whether the load worked or not.
//
// The check: exercise06.jit-log loads, in a context it created, a PTX text that uses an instruction
// that does not exist, then one whose made-up instruction has a name of 120 characters. It verifies
// that each result is CUDA_ERROR_INVALID_PTX with no module, that each log names its own bad
// instruction in full and not the other's, that a log holds no NUL bytes, and that the process holds
// nothing more. Then, after one more load of broken PTX, it loads the course's vector_ops.ptx and
// verifies success, an empty log, kernels from the module that compute the right answer in that
// created context, and a context stack as it was.
//
// Learn it in: lesson 06, step 2 ("Three kinds of image")
PtxLoad loadPtx(const std::string& ptx) {
  wb::notDone();
}

// Exercise 2 of 3 (module-cache): A kernel cache that loads a module once per context
//
// Task: A library's kernels must launch in whatever context its caller has current: the primary
// context of one device, a context of the caller's own, another device's. A module and its
// functions belong to the context they were loaded in, so the library keeps one module per context.
// Write ModuleCache. The contexts outlive the cache.
//
//   R1: The constructor reads and checks the image once (wb::readVerifiedImage): an image cut short
//       throws its wb::ImageError there, before the driver sees a byte of it.
//   R2: function(name) returns name's CUfunction for the current context, whichever it is, loading
//       the image there (cuModuleLoadData) the first time that context asks and never again;
//       modules() says how many modules it holds.
//   R3: A thread with no current context gets the CUDA_ERROR_INVALID_CONTEXT of a failed call (as
//       wb::DriverError), and no context is made, retained or made current for it.
//   R4: Every failed driver call is thrown as CU_CHECK throws it (a name the image lacks, a load that
//       fails).
//   R5: A load that failed leaves nothing behind: modules() does not count it, and the context's
//       next request loads again.
//   R6: The destructor unloads every module, each with its own context current.
//   R7: function() and the destructor leave the thread's context stack as they found it, also when
//       function() throws.
//
// The check: exercise06.module-cache asks for fill and scale in device 0's primary context, in a
// context of its own on device 0, in the primary context again, and in device 1's primary context
// where there are two GPUs, and verifies after each request that the caller's stack is as it was.
// It verifies that the cache then holds one module per context and the process exactly that many
// modules more, that the contexts got different functions that each compute the right answer in
// their own context, and that the destructor, run with two contexts on the caller's stack (the top
// one never asked for a function), made a context current at least once per module, left the stack
// as it was and no module held. It asks with no context current (CUDA_ERROR_INVALID_CONTEXT,
// nothing held), for a name the image lacks (a wb::DriverError), and after a cuModuleLoadData that
// it makes fail (a wb::DriverError, modules() 0, the caller's stack as it was, then a request that
// loads and computes), and it constructs one from a copy of the image cut to 300 bytes (a
// wb::ImageError).
//
// Learn it in: lesson 06, step 3 ("One module per context")
ModuleCache::ModuleCache(const std::string& file) {
  wb::notDone();
}

ModuleCache::~ModuleCache() {}

CUfunction ModuleCache::function(const char* name) {
  wb::notDone();
}

size_t ModuleCache::modules() const {
  wb::notDone();
}

// Exercise 3 of 3 (image-choice): Choosing the image a device can run from per-architecture cubins and PTX
//
// Task: A plugin ships its kernels as one cubin per architecture plus PTX, not as a fatbin, so the
// choice the driver makes inside a fatbin is yours. Write chooseImage, which returns a pointer to
// the element of images that runs on a device of compute capability deviceArch (major * 10 + minor:
// 90 for 9.0, 100 for 10.0, 120 for 12.0). PTX runs on newer devices because the driver compiles it
// at load time.
//
//   R1: A cubin for sm_XY is chosen only for a device of the same major version X and a minor
//       version of Y or more.
//   R2: PTX for compute_XY is chosen only for a device of XY or newer: compute_86 runs on 8.9 and
//       9.0, not on 8.0.
//   R3: Machine code is preferred to PTX (it needs no compile), even to newer PTX.
//   R4: Among the cubins that run, it takes the newest architecture; among PTX, likewise. The list
//       is in no order.
//   R5: When no element runs, an empty list included, it returns nullptr.
//   R6: The answer points to the caller's element of images, not to a copy.
//
// The check: exercise06.image-choice asks about devices from 7.5 to 12.1 with lists where the
// newest cubin is of another major version, or of a newer minor, where the runnable cubin comes
// after one that does not run, where only PTX fits (of the device's own architecture too), where
// PTX of the device's major version but a newer minor does not, where nothing does, where the list
// is empty and where a cubin and newer PTX both fit, and compares each answer with the right
// element of the list. Then it builds the list from this build's cubins and PTX for this GPU, and
// from the cubins of other major versions and PTX, and loads and runs what each choice names.
//
// Learn it in: lesson 06, step 5 ("Every load error")
const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  wb::notDone();
}

}  // namespace ex06

// Lesson 25's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-25

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex25 {

// Exercise 1 of 3 (crash-capture): A process set up to leave a lightweight GPU core dump behind
//
// Task: A batch service wants every kernel fault to leave a GPU core dump it can open with cuda-gdb
// later, without its disks filling with device memory. Write captureGpuCrashes, which sets the
// global settings with cuCoredumpSetAttributeGlobal (not per context: the setting is for every
// context created from now on).
//
//   R1: It turns dumps on exception on (CU_COREDUMP_ENABLE_ON_EXCEPTION) in the global settings.
//   R2: It names the file path in the global settings (CU_COREDUMP_FILE, the string with its NUL),
//       on every call.
//   R3: It sets the global CU_COREDUMP_GENERATION_FLAGS to exactly CU_COREDUMP_LIGHTWEIGHT_FLAGS,
//       plus CU_COREDUMP_SKIP_ABORT when keepRunning (a process that must see the error and report
//       it itself) and without it otherwise, whatever an earlier call set.
//   R4: It asks each number attribute for the size the driver expects before setting it (its
//       reference: called with value NULL, it puts that size in size).
//   R5: It leaves the current context's own settings as they are (no cuCoredumpSetAttribute).
//   R6: If a call fails, it throws (CU_CHECK).
//
// The check: exercise25.crash-capture runs in device 0's primary context and puts every global
// setting back as it found it afterwards. It calls captureGpuCrashes with a path and keepRunning
// false, then with another path and true, then with a third and false, and after each reads the
// global settings back: dumps on, the file that path, the flags CU_COREDUMP_LIGHTWEIGHT_FLAGS with
// CU_COREDUMP_SKIP_ABORT exactly when keepRunning; and it verifies that the sizes of
// CU_COREDUMP_ENABLE_ON_EXCEPTION and CU_COREDUMP_GENERATION_FLAGS were asked with value NULL. It
// verifies that cuCoredumpSetAttribute (the per-context call) was not called. Then it
// makes the first, the second and the third cuCoredumpSetAttributeGlobal call fail in turn, and the
// first and the second cuCoredumpGetAttributeGlobal (the check's ledger fails the call), and
// verifies that captureGpuCrashes threw each time. It faults no kernel: whether a dump is then
// written is lesson 25's step 2. It needs CUDA 12.5 or newer (the generation flags); under
// compute-sanitizer, with which the CUDA-GDB manual does not support dumps, or with a core-dump
// variable set in the environment (whose values cuda.h says take precedence over the program's), it
// reports itself skipped.
//
// Learn it in: lesson 25, step 2 ("Core dumps set up by the program: lightweight, per context, no abort")
void captureGpuCrashes(const std::string& path, bool keepRunning) {
  wb::notDone();
}

// Exercise 2 of 3 (context-dump): A dump file of its own for one job's context
//
// Task: A server runs each job in a context of its own and wants a fault in one job to leave a
// lightweight GPU core dump named after the job, without turning dumps on for any other context and
// without changing the global settings (the contexts created later take those). Write
// dumpContextTo. cuCoredumpSetAttribute is the per-context call, which acts on the current
// context. cuda.h says of CU_COREDUMP_LIGHTWEIGHT_FLAGS that its dumps "will not have a dump of GPU
// memory or non-reloc ELF images", and of CU_COREDUMP_SKIP_ABORT that GPU exceptions "will not
// raise an abort() in the host CPU process", so the server can report the job's error itself; and
// that CU_COREDUMP_ENABLE_USER_TRIGGER and CU_COREDUMP_PIPE cannot be set per context: this job
// needs neither. The server also creates each job's context with CU_CTX_COREDUMP_ENABLE (lesson 25,
// step 2: on driver 580 a context enabled only after its creation wrote no dump in three of four
// runs); this function sets what the dump holds and where it goes.
//
//   R1: If path is empty, it throws std::invalid_argument before any driver call.
//   R2: It makes context current for the call by pushing it, and pops it again: the caller's
//       context stack is left exactly as it was found, also when a call fails.
//   R3: There, with cuCoredumpSetAttribute, it turns CU_COREDUMP_ENABLE_ON_EXCEPTION on and sets
//       CU_COREDUMP_FILE to path (the string with its NUL): context's own settings.
//   R4: It sets context's CU_COREDUMP_GENERATION_FLAGS to exactly CU_COREDUMP_LIGHTWEIGHT_FLAGS |
//       CU_COREDUMP_SKIP_ABORT.
//   R5: It changes no other settings: not the global ones (never cuCoredumpSetAttributeGlobal),
//       not the caller's context's, not another job's.
//   R6: It asks each number attribute for the size the driver expects before setting it (its
//       reference: called with value NULL, it puts that size in size).
//   R7: If a call fails, it throws the driver's error (CU_CHECK).
//
// The check: exercise25.context-dump runs with device 0's primary context current (the caller's
// own) and creates two more contexts, A and B, neither of them current. It calls dumpContextTo(A,
// pathA), then dumpContextTo(B, pathB), and after each verifies that the caller's context stack is
// as it was, and for A that the sizes of CU_COREDUMP_ENABLE_ON_EXCEPTION and
// CU_COREDUMP_GENERATION_FLAGS were asked with value NULL. Then it reads each context's own
// settings back (pushing it): dumps on, its own file, the flags exactly
// CU_COREDUMP_LIGHTWEIGHT_FLAGS | CU_COREDUMP_SKIP_ABORT; and it verifies that the caller's
// context's settings and the global settings are what they were, and that
// cuCoredumpSetAttributeGlobal was not called. Then it makes the first, the second and the third
// cuCoredumpSetAttribute call fail in turn, the first and the second cuCoredumpGetAttribute, and
// then the push (the check's ledger fails the call), and verifies each time that dumpContextTo
// threw the driver's error (a wb::DriverError with that code) and left the caller's stack as it
// found it. Last, an empty path: std::invalid_argument, no push and no core-dump call, the stack as
// found. It puts back every setting it changes and destroys the contexts it created; it faults no
// kernel. It needs CUDA 12.5 or newer (the generation flags); under compute-sanitizer (with which
// the CUDA-GDB manual does not support dumps), or with a core-dump variable set in the environment
// (whose values cuda.h says take precedence over the program's), it reports itself skipped.
//
// Learn it in: lesson 25, step 2 ("Core dumps set up by the program: lightweight, per context, no abort"), and lesson 03, step 2 ("Push, pop, set")
void dumpContextTo(CUcontext context, const std::string& path) {
  wb::notDone();
}

// Exercise 3 of 3 (dump-settings): Where a context's dump would go, read back
//
// Task: An operator's health endpoint reports, for each job's context, whether a fault there would
// leave a GPU core dump, where it would go and what it would leave out. Write readDumpSettings,
// which reads CU_COREDUMP_ENABLE_ON_EXCEPTION, CU_COREDUMP_FILE and CU_COREDUMP_GENERATION_FLAGS.
// cuCoredumpGetAttribute acts on the current context.
//
//   R1: Given a context, it makes it current for the call by pushing it, and pops it again: the
//       caller's context stack as it was found, also when a call fails.
//   R2: Given a context, it returns that context's own settings, read with cuCoredumpGetAttribute.
//   R3: Given nullptr, it returns the global settings, read with cuCoredumpGetAttributeGlobal, with
//       no context made current (the caller may have none).
//   R4: It reads each attribute the way cuda.h says: first with value NULL, which puts in size "the
//       size of the memory region (in bytes) expected", then into exactly that many bytes; it
//       assumes no width for a number and no fixed buffer for the file (cuda.h allows a path of up
//       to 1023 characters, and a job's path can be long).
//   R5: onException is whether the value is non-zero, file the string up to its NUL, flags the
//       number.
//   R6: If a call fails, it throws the driver's error (CU_CHECK).
//
// The check: exercise25.dump-settings runs with device 0's primary context current (the caller's
// own) and creates one more context, C, not current. It gives C settings of its own (dumps on, a
// file whose path is over 600 characters long, in folders it makes in a scratch folder, and
// generation flags of its choosing) and sets global settings of its own (another file, other flags;
// it puts every global setting back afterwards). It verifies that readDumpSettings(C) returns C's
// settings, readDumpSettings of the caller's context that context's, and readDumpSettings(nullptr)
// the global ones, also when called from a thread with no current context, each as the check reads
// them itself; that readDumpSettings(C) and readDumpSettings(nullptr) read each attribute into the
// size a read with value NULL put back just before; and that the caller's context stack is as it
// was after each call. Then it makes each cuCoredumpGetAttribute call of readDumpSettings(C) fail
// in turn, each cuCoredumpGetAttributeGlobal call of readDumpSettings(nullptr), and the push of C
// (the check's ledger fails the call), and verifies each time that the function threw the driver's
// error (a wb::DriverError with that code) and left the caller's stack as it found it. It faults no
// kernel, and destroys the context it created. It needs CUDA 12.5 or newer (the generation flags);
// under compute-sanitizer, or with a core-dump variable set in the environment, it reports itself
// skipped.
//
// Learn it in: lesson 25, step 2 ("Core dumps set up by the program: lightweight, per context, no abort"), and lesson 03, step 3 ("Each thread has its own stack")
DumpSettings readDumpSettings(CUcontext context) {
  wb::notDone();
}

}  // namespace ex25

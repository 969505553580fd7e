// Lesson 24's exercises. Replace each body with your solution, then run ctest -R exercise24.

// The starting bodies use none of their parameters and members yet (warnings are errors in some
// builds; Clang's warning about a private member must be silenced before the class is declared).
#pragma GCC diagnostic ignored "-Wunused-parameter"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunused-private-field"
#endif

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex24 {

// Exercise 1 of 3 (driver-reason): The driver's own words for the call that just failed
//
// Task: A server logs the CUresult of every call that fails, and CUDA_ERROR_INVALID_VALUE does not
// say which argument was wrong. Write driverReason: call `call` exactly once and store what it
// returned in result. When it returned CUDA_SUCCESS, return "". When it failed, return the messages
// the driver logged from the moment of the call on, and only those: never an earlier failure's
// (take an iterator with cuLogsCurrent just before the call, and dump from it with
// cuLogsDumpToMemory after). Each message without the bracketed fields that begin its line in the
// dump ([time][thread][source][severity], and any further leading "[...]": drop every leading
// bracketed field and the spaces after them), one message per line in the order the driver logged
// them, the "Returning ..." line included, joined with '\n' and no newline at the end. The dump may
// hold up to 25600 bytes (the reference's maximum): give it that much room and say so through
// size. Register no callback. If cuLogsCurrent fails, still call `call` once, and return "".
//
// The check: exercise24.driver-reason runs in device 0's primary context, made current. First the
// check makes refused calls of its own (cuMemAlloc of 0 bytes); then it calls driverReason with a
// call the driver refuses and logs (cuLogsDumpToMemory into no buffer) and verifies that result is
// CUDA_ERROR_INVALID_VALUE, that the call ran once, and that the text equals what the check reads
// from an iterator of its own taken just before driverReason, stripped as the task says: nothing of
// the earlier refusals, nothing missing. Then a call that makes three refused allocations before it
// returns (every one of their messages must be there, in order), and a call that succeeds ("" and
// CUDA_SUCCESS, the call run once). Last, that driverReason registered no callback
// (cuLogsRegisterCallback not called). It needs CUDA 12.9 or newer (the header and the driver);
// with an older one the exercise reports itself skipped.
//
// Learn it in: lesson 24, step 2 ("The log buffer, read from an iterator"), and step 4 ("A checked call that says why")
std::string driverReason(const std::function<CUresult()>& call, CUresult& result) {
  wb::notDone();
}

// Exercise 2 of 3 (log-collector): A collector that keeps what the driver logs while it lives
//
// Task: A service wants the driver's messages in its own logs as they happen, from every thread.
// Write LogCollector (declared in exercises.hpp). The constructor registers a callback with
// cuLogsRegisterCallback, passing the collector itself as userData, so that each collector keeps
// its own messages (two collectors never share what they hold); if the driver refuses, it throws.
// The callback (a function of yours with cuda.h's CUlogsCallback signature) hands each message to
// add(message, length), which keeps it as a std::string of length characters, without a trailing
// newline or NUL, under the mutex (the reference does not say from which thread the driver calls
// back). messages() returns every message kept so far, oldest first, and keeps them: calling it
// again returns them again, and more once more arrive. The destructor unregisters the callback with
// the handle cuLogsRegisterCallback gave, so that nothing reaches a collector that is gone.
//
// The check: exercise24.log-collector runs in device 0's primary context. With a collector alive it
// makes refused calls (cuMemAlloc of 0 bytes) and verifies that messages() equals what the check
// reads from an iterator of its own taken before the collector was made (each line stripped of its
// leading bracketed fields, as lesson 24 strips them), twice in a row, and grows after one more
// refused call and after a refused call in another thread. It verifies that the destructor
// unregistered the very handle the constructor registered, and nothing else was left registered.
// Then a second collector, made after the first is gone, must hold none of the first's messages.
// Last it makes cuLogsRegisterCallback fail (the check's ledger fails the call) and verifies that
// the constructor threw. It cannot prove that add() locks the mutex (a race shows only sometimes);
// keep it locked. It needs CUDA 12.9 or newer; with an older one the exercise reports itself skipped.
//
// Learn it in: lesson 24, step 1 ("The driver's words for a refused call")
LogCollector::LogCollector() {
  wb::notDone();
}

LogCollector::~LogCollector() {}

std::vector<std::string> LogCollector::messages() const {
  wb::notDone();
}

void LogCollector::add(const char* message, size_t length) {
  wb::notDone();
}

// Exercise 3 of 3 (crash-capture): A process set up to leave a lightweight GPU core dump behind
//
// Task: A batch service wants every kernel fault to leave a GPU core dump it can open with cuda-gdb
// later, without its disks filling with device memory. Write captureGpuCrashes: with
// cuCoredumpSetAttributeGlobal (not per context: the setting is for every context created from now
// on), turn dumps on exception on (CU_COREDUMP_ENABLE_ON_EXCEPTION), name the file path
// (CU_COREDUMP_FILE, the string with its NUL), and set CU_COREDUMP_GENERATION_FLAGS to exactly
// CU_COREDUMP_LIGHTWEIGHT_FLAGS, plus CU_COREDUMP_SKIP_ABORT when keepRunning (a process that must
// see the error and report it itself) and without it otherwise, whatever an earlier call set. Ask
// each number attribute for the size the driver expects (its reference: called with value NULL, it
// puts that size in size). Leave the current context's own settings as they are. If a call fails,
// throw (CU_CHECK).
//
// The check: exercise24.crash-capture runs in device 0's primary context and puts every global
// setting back as it found it afterwards. It calls captureGpuCrashes with a path and keepRunning
// false, then with another path and true, then with a third and false, and after each reads the
// global settings back: dumps on, the file that path, the flags CU_COREDUMP_LIGHTWEIGHT_FLAGS with
// CU_COREDUMP_SKIP_ABORT exactly when keepRunning. It verifies that cuCoredumpSetAttribute (the
// per-context call) was not called and the current context's own CU_COREDUMP_ENABLE_ON_EXCEPTION
// and CU_COREDUMP_FILE are what they were. Then it makes the first, the second and the third
// cuCoredumpSetAttributeGlobal call fail in turn (the check's ledger fails the call) and verifies
// that captureGpuCrashes threw each time. It faults no kernel: whether a dump is then written is
// lesson 24's step 8. It needs CUDA 12.5 or newer (the generation flags); under compute-sanitizer,
// with which the CUDA-GDB manual does not support dumps, it reports itself skipped.
//
// Learn it in: lesson 24, step 8 ("Core dumps set up by the program: lightweight, per context, no abort")
void captureGpuCrashes(const std::string& path, bool keepRunning) {
  wb::notDone();
}

}  // namespace ex24

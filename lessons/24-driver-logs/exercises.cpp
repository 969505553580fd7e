// Lesson 24's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-24

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
// say which argument was wrong. Write driverReason, which returns the driver's own words for a
// failed call: take an iterator with cuLogsCurrent just before the call, and dump from it with
// cuLogsDumpToMemory after.
//
//   R1: It calls `call` exactly once and stores what it returned in result.
//   R2: When the call returned CUDA_SUCCESS, it returns "".
//   R3: When the call failed, it returns the messages the driver logged from the moment of the call
//       on, and only those: never an earlier failure's, every one the call logged, in the order the
//       driver logged them, the "Returning ..." line included.
//   R4: Each message is its line in the dump without the bracketed fields that begin it
//       ([time][thread][source][severity], and any further leading "[...]": every leading
//       bracketed field and the spaces after them are dropped), one message per line, joined with
//       '\n' and no newline at the end.
//   R5: The dump gets room for up to 25600 bytes (the reference's maximum), and size says so.
//   R6: It registers no callback.
//   R7: If cuLogsCurrent fails, it still calls `call` once, and returns "" (and throws nothing).
//
// The check: exercise24.driver-reason runs in device 0's primary context, made current. First the
// check makes refused calls of its own (cuMemAlloc of 0 bytes); then it calls driverReason with a
// call the driver refuses and logs (cuLogsDumpToMemory into no buffer) and verifies that result is
// CUDA_ERROR_INVALID_VALUE, that the call ran once, and that the text equals what the check reads
// from an iterator of its own taken just before driverReason, stripped as the task says: nothing of
// the earlier refusals, nothing missing. Then a call that makes twelve refused allocations before
// it returns (every one of their messages must be there, in order: more bytes than a small buffer
// holds), and a call that refuses an allocation and then succeeds ("" and CUDA_SUCCESS, the call
// run once). It verifies that driverReason registered no callback (cuLogsRegisterCallback not
// called). Last, it makes cuLogsCurrent fail (the check's ledger fails the call) around a refused
// call: the call must run once, its result be stored, and the answer be "". It needs CUDA 12.9 or
// newer (the header and the driver); with an older one the exercise reports itself skipped.
//
// Learn it in: lesson 24, step 2 ("The log buffer, read from an iterator"), and step 4 ("A checked call that says why")
std::string driverReason(const std::function<CUresult()>& call, CUresult& result) {
  wb::notDone();
}

// Exercise 2 of 3 (log-collector): A collector that keeps what the driver logs while it lives
//
// Task: A service wants the driver's messages in its own logs as they happen, from every thread.
// Write LogCollector (declared in exercises.hpp). The callback (a function of yours with cuda.h's
// CUlogsCallback signature) hands each message to add(message, length).
//
//   R1: The constructor registers a callback with cuLogsRegisterCallback, passing the collector
//       itself as userData, so that each collector keeps its own messages (two collectors never
//       share what they hold).
//   R2: If the driver refuses the registration, the constructor throws.
//   R3: Every message the driver logs while the collector lives, from any thread, is kept by add as
//       a std::string of length characters, without a trailing newline or NUL.
//   R4 (not checked: a race of two add calls shows only sometimes): add keeps each message under
//       the mutex (the reference does not say from which thread the driver calls back).
//   R5: messages() returns every message kept so far, oldest first, and keeps them: calling it
//       again returns them again, and more once more arrive.
//   R6: The destructor unregisters the callback with the handle cuLogsRegisterCallback gave, so
//       that nothing reaches a collector that is gone.
//
// The check: exercise24.log-collector runs in device 0's primary context. With a collector alive it
// makes refused calls (cuMemAlloc of 0 bytes) and verifies that messages() equals what the check
// reads from an iterator of its own taken before the collector was made (each line stripped of its
// leading bracketed fields, as lesson 24 strips them), twice in a row, and grows after one more
// refused call and after a refused call in another thread. It verifies that the destructor
// unregistered the very handle the constructor registered, and nothing else was left registered.
// Then a second collector, made after the first is gone, must hold none of the first's messages.
// It hands a collector's add messages of its own, one ending in a newline, one in a NUL and one
// whose length stops before the end of its text, and verifies what messages() then ends with. Last
// it makes cuLogsRegisterCallback fail (the check's ledger fails the call) and verifies that the
// constructor threw. It needs CUDA 12.9 or newer; with an older one the exercise reports itself
// skipped.
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

// Exercise 3 of 3 (printf-room): Room for a context's printf before its first kernel
//
// Task: A service's kernels print diagnostics with printf, and a FIFO too small for what they print
// loses lines (lesson 24, step 6). Write ensurePrintfRoom: make the printf FIFO of context (its
// limit CU_LIMIT_PRINTF_FIFO_SIZE) hold at least lines * bytesPerLine bytes, and return its size in
// bytes. The limit calls answer for the current context. The reference lets the driver change the
// value it is asked for (clamp it, round it up) and says cuCtxGetLimit tells what it set. It also
// says that setting this limit "must be performed before launching any kernel that uses the
// printf() device system call, otherwise CUDA_ERROR_INVALID_VALUE will be returned".
//
//   R1: If lines or bytesPerLine is 0, or their product does not fit in a size_t, it throws
//       std::invalid_argument before any driver call.
//   R2: It makes context current for the work with cuCtxPushCurrent and takes it off with
//       cuCtxPopCurrent (never cuCtxSetCurrent), so that the calling thread's context stack is
//       exactly as it found it, when it returns and when it throws, and the caller's own current
//       context keeps its FIFO.
//   R3: It reads the limit with cuCtxGetLimit; when the FIFO already holds lines * bytesPerLine
//       bytes, it changes nothing (never shrinks the FIFO, calls no cuCtxSetLimit) and returns the
//       size read, also once a printf kernel has run in the context.
//   R4: Otherwise it sets the limit to lines * bytesPerLine with cuCtxSetLimit and returns what
//       cuCtxGetLimit reads afterwards.
//   R5: When the driver refuses a call (cuCtxSetLimit once a printf kernel has run, or any other),
//       it throws its error as CU_CHECK does.
//
// The check: exercise24.printf-room creates a context on device 0 and pops it, so that it is not
// current, and pushes device 0's primary context as the caller's. It asks for more than the new
// context's FIFO holds and verifies that cuCtxSetLimit was asked for exactly that, that the answer
// equals what cuCtxGetLimit reads in the new context and is at least what was asked, that the
// primary context's FIFO kept its size, and that the caller's stack is as it was, with no
// cuCtxSetCurrent called. It grows the FIFO itself, then asks for half of it and for exactly what
// it holds, and verifies that both answers are the size it has, unchanged, with no cuCtxSetLimit
// called. It passes a 0 for lines, for bytesPerLine and for both, and products that overflow a
// size_t (one that wraps to 0, one that wraps to 4096), and verifies std::invalid_argument each
// time, with no cuCtxPushCurrent, cuCtxPopCurrent, cuCtxSetCurrent, cuCtxGetLimit or cuCtxSetLimit
// called. It makes the push, the first cuCtxGetLimit, the cuCtxSetLimit and the cuCtxGetLimit after
// it fail in turn (the check's ledger fails the call) and verifies that each time the failure was
// thrown as a wb::DriverError with its code and the caller's stack is as it was. Last, it runs
// lesson 24's print_lines kernel (one line) in a new context, makes sure that the driver now
// refuses to change that context's FIFO (a driver that does not makes that case report itself
// skipped), and verifies that a request the FIFO already holds still returns its size, and that a
// larger one throws the driver's error, with the caller's stack as it was.
//
// Learn it in: lesson 24, step 6 ("The printf FIFO: what a kernel that prints too much loses")
size_t ensurePrintfRoom(CUcontext context, size_t lines, size_t bytesPerLine) {
  wb::notDone();
}

}  // namespace ex24

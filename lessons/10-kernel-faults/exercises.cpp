// Lesson 10's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-10

// The starting bodies use none of their parameters and members yet (warnings are errors in some
// builds; Clang's warning about a private member must be silenced before the class is declared).
#pragma GCC diagnostic ignored "-Wunused-parameter"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunused-private-field"
#endif

#include "exercises.hpp"
#include "exercise.hpp"
#include "process.hpp"

namespace ex10 {

// Exercise 1 of 3 (supervisor): A supervisor that finishes a job although one chunk faults
//
// Task: A batch service runs a job of many chunks on the GPU. A chunk whose kernel faults must cost
// that chunk, not the job, and no process may go on using CUDA after its fault. Write runJob, the
// supervisor. A worker does its chunks in the order of its arguments, prints the line
// `chunk <id> done <result>` as soon as each is finished (flushed, so the line survives the
// worker's death), and exits with code 0 after the last; a fault makes it exit with an error.
//
//   R1: It does no GPU work itself but runs the chunks through worker processes, one worker at a
//       time, each started with `wb::runProcess(argv, {}, workerSeconds)` (common/process.hpp),
//       where argv is worker followed by the ids of the chunks it is to do, one argument each
//       (std::to_string), in the order given.
//   R2: A worker that ends before it has reported all of its chunks, whether it exited with an error
//       or was killed by a signal, was stopped by the first chunk it did not report: that chunk has
//       had one more attempt, and a fresh worker starts with that chunk and the ones after it.
//   R3: A chunk that has had maxAttempts attempts has failed: the fresh worker starts with the chunk
//       after it.
//   R4: A finished chunk is never run again, and a fresh worker is started only when the last one
//       ended before it had reported all of its chunks.
//   R5: It returns one ChunkOutcome per chunk, in the order given: whether it is done, the result
//       its worker reported (a 64-bit number), and its attempts (the worker that finished it and
//       the workers it stopped).
//   R6 (not checked: waiting for a worker's time limit would cost the check its seconds): a worker
//       that hangs, ended at its time limit, counts as R2 says, through the chunks it reported.
//
// The check: exercise10.supervisor runs your runJob in a child process (ended after 60 s) on nine
// chunks with maxAttempts 2 and workers of its own: this check binary in a worker mode, which runs
// lesson 10's job_chunk kernel and faults (a write to address 0x10) on one chunk at its first
// attempt only and on another at every attempt, and on a third chunk kills itself with SIGKILL at
// its first attempt. It verifies that runJob returned within the time limit; that every chunk but
// the one that always faults is done with the sum computed on the host (each sum needs more than 32
// bits), after 1 attempt, or 2 for the chunks that faulted or were killed once; that the chunk that
// always faults is not done after exactly 2 attempts; from the workers' own log, that each chunk
// was begun exactly that many times and that every worker was started with the chunks from the
// first unfinished one on, one argument each; and that five workers were started, the fewest that
// can finish the job. It does not try a worker that hangs until its time limit (waiting for that
// limit would cost the check its seconds), so read how a worker ended only through the chunks it
// reported.
//
// Learn it in: lesson 10, step 5 ("A supervisor that finishes the job"), and step 1 ("A fault, call by call")
std::vector<ChunkOutcome> runJob(const std::vector<std::string>& worker, const std::vector<unsigned>& chunks,
                                 unsigned maxAttempts, unsigned workerSeconds) {
  wb::notDone();
}

// Exercise 2 of 3 (must-restart): A health check that tells from an error whether the process must be replaced
//
// Task: An inference server serves requests until a call fails. Then it must decide: was the error
// about that one request (an allocation that did not fit, a launch the device refused, a kernel
// name the image lacks), so the next request can go on; or has this process lost its CUDA for good,
// so it must stop taking work and exit for its supervisor to start a fresh one? Restarting on every
// error turns one oversized request into an outage; going on after a fault fails every request
// after it. Write mustRestart. Codes the reference says neither of (an uncorrectable ECC error, an
// unknown error) are yours to decide; the check does not test them.
//
//   R1: True for every error the reference documents as leaving the process or its context
//       unusable: read the comments on the CUresult codes in cuda.h ("This leaves the process in an
//       inconsistent state and any further CUDA work will return the same error. To continue using
//       CUDA, the process must be terminated and relaunched."), and CUDA_ERROR_ASSERT's "The
//       context cannot be used anymore" (a server whose work lives in the primary context has no
//       other context to go on in).
//   R2: False for CUDA_SUCCESS, and for CUDA_ERROR_NOT_READY (which cuda.h calls "not actually an
//       error": work still running).
//   R3: False for every error after which the context goes on working.
//
// The check: exercise10.must-restart verifies that mustRestart says true for each code cuda.h
// documents so (CUDA_ERROR_ followed by ILLEGAL_ADDRESS, LAUNCH_TIMEOUT, HARDWARE_STACK_ERROR,
// ILLEGAL_INSTRUCTION, MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED,
// ASSERT, MPS_CLIENT_TERMINATED, EXTERNAL_DEVICE, and with CUDA 13's header CONTAINED and
// TENSOR_MEMORY_LEAK) and false for CUDA_SUCCESS and CUDA_ERROR_NOT_READY. Then it asks about the
// codes this driver really returns: child processes fault four ways (an illegal address,
// `__trap()`, a failed device-side assert, a misaligned read), and what their synchronisation
// returned must mean restart, where a later allocation failed too and the code is one of those
// documented. And in this process, six calls that fail must not mean restart: a launch of 2048
// threads per block, an allocation of twice the device's memory, registering the same host memory
// twice, looking up a kernel the image does not have, the time between two events never recorded,
// and an allocation from a thread with no current context; after each, the check proves the
// context still works by running a kernel and reading its sum.
//
// Learn it in: lesson 10, step 2 ("Other faults"), and step 3 ("Errors that are not sticky")
bool mustRestart(CUresult error) {
  wb::notDone();
}

// Exercise 3 of 3 (launch-log): Launches that name the kernel behind an asynchronous fault
//
// Task: A fault is reported by a later call, whichever one runs after the driver has seen it, so
// the error a server logs names an innocent line. Write LaunchLog (declared in exercises.hpp), a
// launcher that makes every error name the launches that may have caused it. The constructor takes
// the stream to launch into and whether to debug. Debug mode is slow, for finding the kernel;
// without it nothing waits but wait(), and an error names the few launches since the last
// successful wait instead of an innocent line.
//
//   R1: launch(name, f, blocks, threads, args) launches f over blocks x threads (one dimension, no
//       shared memory) in the log's stream and remembers its name; outside debug mode it returns
//       without waiting for the kernel.
//   R2: wait() synchronises the log's stream, and no other: other streams of the context hold work
//       that is none of the log's business.
//   R3: Any failure, the launch call's own, a fault reported later or a wait() that fails, throws
//       LaunchError with the CUresult the driver returned and the names of every launch since the
//       last wait() that succeeded, in launch order, the failing launch's own included.
//   R4: After throwing, from a launch or from wait(), the list starts empty again, as it does after
//       a successful wait().
//   R5: In debug mode every launch waits for its kernel (as wait() does, the log's stream alone)
//       before it returns, so a fault is thrown by the launch that faulted, naming it alone.
//
// The check: exercise10.launch-log launches fill (a kernel that works), scribble (lesson 10's
// write_to, at address 0x10) and after (one that works) through a LaunchLog, then calls wait(), in
// two child processes. In debug mode it verifies that the launch of scribble threw, with
// CUDA_ERROR_ILLEGAL_ADDRESS and the suspects {scribble}; without it, that the launch of after or
// the wait threw, with CUDA_ERROR_ILLEGAL_ADDRESS and the suspects {fill, scribble, after}. In this
// process, where nothing faults, it verifies that two launches of 2048 threads per block in a row
// each throw the code the driver gives that launch, naming that launch alone; that with the log's
// stream held by a gate kernel (lesson 09) and a memset of the sum queued behind it, a launch
// returns while the gate still waits, and gives the right sum once the gate opens (so it ran after
// the memset, in that stream); that neither wait() nor a debug-mode launch synchronises the whole
// context (cuCtxSynchronize); and that one more launch and then a refused one name those two only.
// Last, it makes cuStreamSynchronize fail once (without reaching the driver): wait() must throw
// that code naming the launch before it, and a launch and a refused one after it name those two
// only.
//
// Learn it in: lesson 10, step 4 ("Finding the faulting launch"), and lesson 09, step 1 ("A stream is a queue")
LaunchLog::LaunchLog(CUstream stream, bool debug) {
  wb::notDone();
}

void LaunchLog::launch(const std::string& name, CUfunction f, unsigned blocks, unsigned threads, void** args) {
  wb::notDone();
}

void LaunchLog::wait() {
  wb::notDone();
}

}  // namespace ex10

// Lesson 17's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-17
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex17 {

// Exercise 1 of 3 (fork-pool): A pool of worker processes, each a fresh program that initialises CUDA itself
//
// Task: A service hands each batch to a worker process of its own, which initialises CUDA, runs the
// batch and writes its result to its standard output. A worker must not use CUDA between fork() and
// exec(): NVIDIA's guidelines (rule 1.6) call any CUDA use there undefined, whether or not this
// process had initialised CUDA when it forked (step 1 shows what one driver gave such a child). So
// every worker is a fresh program, and this process may use CUDA itself. Write runWorkers: start n
// workers, all of them before waiting for any. Worker i runs the program argv[0] with the arguments
// argv and then i in decimal as one more (execv: no shell), with its standard output a pipe to this
// process; its standard error stays this process's. Build every argument before fork(): between
// fork() and exec() call only async-signal-safe functions (dup2, alarm, execv, _exit), since this
// process may have threads, the driver's among them. A worker still running after limitSeconds is
// ended: alarm(limitSeconds) in the child before exec does it, as an alarm survives exec. Read the
// pipes as data arrives on any of them (poll), never one after another and never after waiting for
// the worker: a worker that writes more than a pipe holds waits until it is read, and must not lose
// its time to another worker. Return what each worker wrote, in the order of the index, or "" for a
// worker that exited with a code other than 0 or was ended by a signal, whatever it wrote. When
// runWorkers returns, every worker has ended and been waited for (no zombie), this process holds
// the descriptors it held before the call, and no worker inherited a pipe end besides its own
// output (make the pipes close-on-exec).
//
// The check: exercise17.fork-pool calls runWorkers in a process of its own that has called cuInit,
// with this check binary as the workers' program. First two workers (limit 20 s) that each wait
// until the other has started (a worker still alone after 3 s says so), count the pipe descriptors
// they inherited beyond their output, then initialise CUDA, write 1000 + index into device memory,
// read it back and print it with their process id. Then six workers (limit 1 s) whose index decides
// what they do: one prints a line once another has written all of its 200000 bytes (which needs its
// pipe read meanwhile), one prints and exits with code 3, one prints and is killed by a signal, the
// one that prints 200000 bytes, one prints a line and writes another to its standard error, and one
// never ends. It verifies every result against what that worker did, in index order, that each came
// from a process of its own, that the call returned, and that afterwards the process has no child
// left to wait for and as many open descriptors as before. It cannot see whether the child called
// anything but async-signal-safe functions between fork() and exec(). On a device whose compute
// mode is not CU_COMPUTEMODE_DEFAULT (several processes may not each have a context there) the
// exercise reports itself skipped.
//
// Learn it in: lesson 17, step 1 ("CUDA and fork"), and lesson 10, step 5 ("A supervisor that finishes the job")
std::vector<std::string> runWorkers(const std::vector<std::string>& argv, unsigned n, unsigned limitSeconds) {
  wb::notDone();
}

// Exercise 2 of 3 (event-handoff): A consumer ordered after another process's producer by an interprocess event
//
// Task: A preprocessing process (the producer) writes each batch into device memory it shares with
// the inference process (the consumer), in a stream of its own, and records behind the write an
// event created with CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING; it sends the event's handle
// (cuIpcGetEventHandle) with the batch. Write copyAfter, which runs in the consumer with the
// stream's context current: open the producer's event, and enqueue in stream a copy of bytes from
// shared (the batch, already mapped in this process) into host (pinned memory) that runs only once
// the producer's work before the event is done. Return the opened event without waiting for
// anything: the caller destroys it once the copy has run. Open the event once and make nothing else
// that outlives the call; when a call after the open fails, destroy the event before the error goes
// on (CU_CHECK throws it), so that a failed handoff leaks nothing.
//
// The check: exercise17.event-handoff starts a producer process (this check again) whose stream is
// held by a gate kernel; behind the gate the producer overwrites the shared buffer, which held an
// old value, and then records the event. The check calls copyAfter and verifies that the copy was
// still pending when it returned (cuStreamQuery says CUDA_ERROR_NOT_READY and the host buffer is
// untouched), that the calling thread's context stack is as it was, and that the process holds one
// event more than before (the one returned) and nothing else more; then it tells the producer to
// open its gate and verifies that the gate was still waiting then (copyAfter did not wait for it),
// and that once the stream ran, every word of the host buffer is the producer's new value and none
// the old one. Last, with two more events of the producer, it makes cuStreamWaitEvent fail once,
// and then the copy (the check turns the driver's answer into an error), and verifies that
// copyAfter threw each time and that the process holds nothing more than before. On a device whose
// compute mode is not CU_COMPUTEMODE_DEFAULT the exercise reports itself skipped.
//
// Learn it in: lesson 17, step 5 ("Ordering another process's work: interprocess events")
CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  wb::notDone();
}

// Exercise 3 of 3 (share-server): Handing device memory to another process and keeping none of it
//
// Task: A model server loads weights once and hands them to client processes, and it runs for
// weeks: whatever it keeps of memory a client already has is a leak. Write shareWithClient, called
// with a context of dev current: create device memory on dev (location dev, not device 0) that can
// be exported as a POSIX file descriptor, bytes rounded up to the minimum granularity, copy the
// bytes at data into it, export it, and send the client one ShareOffer with the descriptor
// (wb::sendMessage) and the rounded size. Wait for the client's ShareReply (wb::receiveMessage, at
// most kShareReplySeconds). Then give back everything this process holds of the memory (its handle,
// its mapping and address range, the exported descriptor) and return: the client's mapping alone
// keeps it alive, and the client's unmap gives it back to the device. When the offer cannot be
// sent, no reply comes, or the reply says the client did not map the memory (mapped != 1), give
// back all of it too, and then throw std::runtime_error.
//
// The check: exercise17.share-server starts a client process (this check again); with two devices
// the memory is device 1's, and the check runs with device 1's context current. First it calls
// shareWithClient on a socket whose other end is closed, then once with the client refusing (it
// replies mapped = 0), and verifies that both threw and that the process then holds no more
// allocation handles, mappings, address ranges and open descriptors than before. Then the client
// imports the descriptor, maps the memory and replies; once shareWithClient has returned, the check
// verifies that this process holds nothing more than before (handles, mappings, address ranges,
// descriptors), and that the client found an allocation of the rounded size on the right device. It
// tells the client to read the memory, which must hold all of the data (64 MiB and a part of a
// granule); the client then unmaps it, and the device's free memory, read before the call with the
// client already running, must be back where it was (within 32 MiB). With one device, that the
// memory was made on dev and not on device 0 cannot be told apart, and the exercise reports itself
// skipped after the rest has passed; so does the whole exercise on a device whose compute mode is
// not CU_COMPUTEMODE_DEFAULT.
//
// Learn it in: lesson 17, step 4 ("Sharing by file descriptor: who holds the memory")
void shareWithClient(int socket, CUdevice dev, const void* data, std::size_t bytes) {
  wb::notDone();
}

}  // namespace ex17

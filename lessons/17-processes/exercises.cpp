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
// every worker is a fresh program, and this process may use CUDA itself. Write runWorkers. A worker
// that writes more than a pipe holds waits until it is read; alarm(limitSeconds) in the child before
// exec survives exec.
//
//   R1: It starts n workers, all of them before waiting for any. Worker i runs the program argv[0]
//       with the arguments argv and then i in decimal as one more (execv: no shell), its standard
//       output a pipe to this process and its standard error this process's.
//   R2 (not checked: no check sees what a child calls between fork() and exec()): It builds every
//       argument before fork(), and between fork() and exec() calls only async-signal-safe
//       functions (dup2, alarm, execv, _exit), since this process may have threads, the driver's.
//   R3: A worker still running after limitSeconds is ended.
//   R4: It reads the pipes as data arrives on any of them (poll), never one after another and never
//       after waiting for the worker, so that no worker loses its time to another.
//   R5: It returns what each worker wrote, in the order of the index, or "" for a worker that
//       exited with a code other than 0 or was ended by a signal, whatever it wrote.
//   R6: When it returns, every worker has ended and been waited for (no zombie), this process holds
//       the descriptors it held before the call, and no worker inherited a pipe end besides its own
//       output (the pipes are close-on-exec).
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
// stream's context current; shared is the batch, already mapped in this process, and host is
// pinned memory.
//
//   R1: It opens the producer's event and enqueues in stream a copy of bytes from shared into host
//       that runs only once the producer's work before the event is done.
//   R2: It returns the opened event without waiting for anything: the caller destroys it once the
//       copy has run.
//   R3: It opens the event once and makes nothing else that outlives the call.
//   R4: A call that fails throws (CU_CHECK), the open included; when a call after the open fails,
//       it destroys the event before the error goes on, so that a failed handoff leaks nothing.
//   R5: The calling thread's context stack is as it was.
//
// The check: exercise17.event-handoff starts a producer process (this check again) whose stream is
// held by a gate kernel; behind the gate the producer overwrites the shared buffer, which held an
// old value, and then records the event. The check calls copyAfter and verifies that the copy was
// still pending when it returned (cuStreamQuery says CUDA_ERROR_NOT_READY and the host buffer is
// untouched), that the calling thread's context stack is as it was, and that the process holds one
// event more than before (the one returned) and nothing else more; then it tells the producer to
// open its gate and verifies that the gate was still waiting then (copyAfter did not wait for it),
// and that once the stream ran, every word of the host buffer is the producer's new value and none
// the old one. Last, with two more events of the producer, it makes cuIpcOpenEventHandle fail
// once, then cuStreamWaitEvent, and then the copy (the check turns the driver's answer into an
// error), and verifies that copyAfter threw each time and that the process holds nothing more than
// before. On a device whose compute mode is not CU_COMPUTEMODE_DEFAULT the exercise reports itself
// skipped.
//
// Learn it in: lesson 17, step 5 ("Ordering another process's work: interprocess events")
CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  wb::notDone();
}

// Exercise 3 of 3 (share-server): Handing device memory to another process and keeping none of it
//
// Task: A model server loads weights once and hands them to client processes, and it runs for
// weeks: whatever it keeps of memory a client already has is a leak. Write shareWithClient, called
// with a context of dev current. The client's mapping alone keeps the memory alive once the server
// has let go, and the client's unmap gives it back to the device.
//
//   R1: It creates device memory on dev (location dev, not device 0) that can be exported as a
//       POSIX file descriptor, of bytes rounded up to the minimum granularity, and copies the bytes
//       at data into it.
//   R2: It exports it and sends the client one ShareOffer with the descriptor (wb::sendMessage) and
//       the rounded size, then waits for the client's ShareReply (wb::receiveMessage, at most
//       kShareReplySeconds).
//   R3: When the reply says the client mapped the memory (mapped == 1), it gives back everything
//       this process holds of it (its handle, its mapping and address range, the exported
//       descriptor) and returns.
//   R4: When the offer cannot be sent, no reply comes, or the reply says the client did not map the
//       memory (mapped != 1: 0 or any other value), it gives back all of it too, and then throws
//       std::runtime_error.
//   R5 (not checked: a gate cannot delay this copy, which waits for its stream first): the
//       data has landed in the memory before the offer goes out. From pageable memory
//       cuMemcpyHtoD may return before its DMA has finished (NVIDIA's "API synchronization
//       behavior"), and the client may read the memory as soon as it has the descriptor.
//
// The check: exercise17.share-server starts a client process (this check again); with two devices
// the memory is device 1's, and the check runs with device 1's context current. First it calls
// shareWithClient on a socket whose other end is closed, then twice with the client refusing (it
// replies mapped = 0, then mapped = 2), and verifies that each threw std::runtime_error and that
// the process then holds no more allocation handles, mappings, address ranges and open descriptors
// than before (it does not try a client that never replies). Then the client imports the
// descriptor, maps the memory and replies; once shareWithClient has returned, the check verifies
// that this process holds nothing more than before (handles, mappings, address ranges,
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

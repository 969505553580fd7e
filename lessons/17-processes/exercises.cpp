// Lesson 17's exercises. Replace each body with your solution, then run ctest -R exercise17.
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex17 {

// Exercise 1 of 3 (fork-pool): A pool of forked workers, each initialising CUDA itself
//
// Task: A service hands batches to worker processes it forks, the way Python's multiprocessing does
// on Linux and prefork servers do: each worker is a copy of this process, made by fork() with no
// exec. Write runForked. First make sure a CUDA driver is installed, without initialising CUDA in
// this process (throw std::runtime_error when there is none). Then fork n workers, all of them before
// waiting for any. Worker i runs job(i), which initialises CUDA for itself, sends the line job
// returns to this process through a pipe, and ends with _exit, running nothing else of this
// process; a worker still running after limitSeconds is ended (an alarm in the worker). Return the
// lines in the order of their index, "" for a worker that failed: job threw, the worker was ended,
// or it sent nothing. This process must not have called cuInit when it forks: a worker forked after
// cuInit cannot use CUDA.
//
// The check: exercise17.fork-pool calls runForked(4, job, 10) in a process of its own that has made
// no CUDA call, with a job that initialises CUDA, writes 1000 + index into device memory, reads it
// back and reports its process id. It verifies that every worker's line is right, that each came
// from a different process and none from this one, and that CUDA was not initialised in this
// process at any fork() it made (a pthread_atfork handler asks the driver, which answers
// CUDA_ERROR_NOT_INITIALIZED until cuInit).
//
// Learn it in: lesson 17, step 1 ("CUDA and fork")
std::vector<std::string> runForked(unsigned n, Job job, unsigned limitSeconds) {
  wb::notDone();
}

// Exercise 2 of 3 (event-handoff): A consumer ordered after another process's producer by an interprocess event
//
// Task: A preprocessing process (the producer) writes each batch into device memory it shares with
// the inference process (the consumer), in a stream of its own, and records behind the write an
// event created with CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING; it sends the event's handle
// (cuIpcGetEventHandle) with the batch. Write copyAfter, which runs in the consumer: open the
// producer's event, and enqueue in stream a copy of bytes from shared (the batch, already mapped in
// this process) into host (pinned memory) that runs only once the producer's work before the event
// is done. Return the opened event without waiting for anything: the caller destroys it once the copy
// has run.
//
// The check: exercise17.event-handoff starts a producer process (this check again) whose stream is
// held by a gate kernel; behind the gate the producer overwrites the shared buffer, which held an
// old value, and then records the event. The check calls copyAfter and verifies that the copy was
// still pending when it returned (cuStreamQuery says CUDA_ERROR_NOT_READY and the host buffer is
// untouched); then it tells the producer to open its gate and verifies that the gate was still
// waiting then (copyAfter did not wait for it), and that once the stream ran, every word of the
// host buffer is the producer's new value and none the old one.
//
// Learn it in: lesson 17, step 5 ("Ordering another process's work: interprocess events")
CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  wb::notDone();
}

// Exercise 3 of 3 (share-server): Handing device memory to another process and keeping none of it
//
// Task: A model server loads weights once and hands them to client processes, and it runs for
// weeks: whatever it keeps of memory a client already has is a leak. Write shareWithClient: create
// device memory on dev that can be exported as a POSIX file descriptor (bytes rounded up to the
// granularity), copy the bytes at data into it, export it, and send the client one ShareOffer with
// the descriptor (wb::sendMessage). Wait for the client's ShareReply (wb::receiveMessage, at most
// kShareReplySeconds; throw std::runtime_error without one). Then give back everything this process
// holds of the memory, and return: the client's mapping alone keeps it alive, and the client's unmap
// gives it back to the device.
//
// The check: exercise17.share-server starts a client process (this check again) that imports the
// descriptor, maps the memory and replies. Once shareWithClient has returned, the check tells the
// client to read the memory, which must hold the 256 MiB of data in every word; the client then
// unmaps it, and the device's free memory, read before the call with the client already running,
// must be back where it was (within 32 MiB).
//
// Learn it in: lesson 17, step 4 ("Sharing by file descriptor: who holds the memory")
void shareWithClient(int socket, CUdevice dev, const void* data, std::size_t bytes) {
  wb::notDone();
}

}  // namespace ex17

// Lesson 09's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-09

// The starting bodies use none of their parameters and members yet (warnings are errors in some
// builds; Clang's warning about a private member must be silenced before the class is declared).
#pragma GCC diagnostic ignored "-Wunused-parameter"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunused-private-field"
#endif

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex09 {

// Exercise 1 of 3 (pipeline): A chunked copy/compute pipeline in two streams
//
// Task: A server uploads a batch and runs a kernel over it. Done one after the other, the copy
// engine idles while the kernel runs and the SMs idle while the copy runs. Write pipeline, which
// copies the n floats at host (pinned memory) to device part by part in stream copies and burns each
// part in stream compute, so that part i + 1 is copied while part i is burned. The caller
// synchronises both streams.
//
//   R1: It splits the n floats into `chunks` parts of n / chunks floats, the last one taking the
//       remainder as well (n need not be a multiple of chunks); it copies each part to the same
//       offset of device in copies, and launches burn(device + offset, the part's length, rounds)
//       with kBurnBlocks blocks of kBurnThreads threads in compute.
//   R2: Each part's kernel starts only after its own part has arrived and waits for no later part;
//       no copy waits for a kernel.
//   R3: It only enqueues: it returns before any of the copies and kernels has run.
//   R4: Every event it makes is destroyed before it returns (waits already enqueued stay in force).
//   R5: A driver call that fails throws, and leaves no event behind.
//
// The check: exercise09.pipeline holds copies with a gate kernel and calls pipeline for a count
// that the chunks do not divide; it verifies that pipeline returned while the gate was still closed
// and left no event (or other handle) behind, and that once the streams ran every element equals a
// reference burned on the GPU after a plain copy. It records a pipeline with stream capture (lesson
// 15 teaches it; here it only draws the order as a graph) and verifies that each part's kernel
// depends on its own part's copy and on no later copy, that no copy depends on a kernel, and that
// each kernel was launched with kBurnBlocks blocks of kBurnThreads threads (burn covers any grid, so
// only the launch shows it). It makes the second cuStreamWaitEvent fail, and the third kernel
// launch (without reaching the driver): pipeline must throw and leave no event behind. Then it
// times, in this run, copying all parts alone, burning them alone (with rounds chosen so both take
// about as long) and the pipeline, and verifies that the pipeline saved at least 0.8 of what a
// perfect overlap would: its time is at most sum - 0.8 * (sum - ideal), with sum = copy + burn and
// ideal = max + min / chunks.
//
// Learn it in: lesson 09, step 3 ("Overlapping a copy with a kernel"), and step 4 ("cuStreamWaitEvent orders work across streams")
void pipeline(CUfunction burn, const float* host, CUdeviceptr device, unsigned n, unsigned chunks, unsigned rounds,
              CUstream copies, CUstream compute) {
  wb::notDone();
}

// Exercise 2 of 3 (preload-kernels): Every kernel of a library loaded before a gate closes
//
// Task: Under lazy loading (the default) a kernel is loaded into a context at its first launch, and
// loading may wait for the kernels already running there. Code that needs two kernels to run at
// the same time, one waiting on a flag the other sets, as lesson 09's gate waits on the host, then
// waits until the first gives up, or forever. Write preloadKernels. You cannot launch the kernels
// to load them (you know none of their parameters): list the library's kernels, get each one's
// CUfunction in the current context, and make sure each is fully loaded.
//
//   R1: When it returns, every kernel of library is fully loaded into the current context, so that
//       no later launch there has to load one (and none waits for the kernels running there).
//   R2: It loads into whichever context the caller made current (a primary context, one of the
//       caller's own, another device's), on each call, however many contexts were served before.
//   R3: The caller's context stack is as it was.
//   R4: A driver call that fails throws.
//
// The check: exercise09.preload-kernels loads streams.fatbin afresh with device 0's primary context
// current and calls preloadKernels. Then it launches the gate kernel in one stream and a stamp
// kernel in another, and verifies that the stamp ran while the gate was still waiting; and that
// every function of the library's module in that context reports itself loaded
// (cuLibraryGetModule, cuModuleEnumerateFunctions, cuFuncIsLoaded), and that the context stack is
// as it was. It does the same for one library in the primary context and then in a context of its
// own (cuCtxCreate), and with two GPUs in device 1's primary context too. It makes cuFuncLoad fail
// once, then the third cuFuncLoad, then the second cuKernelGetFunction (without reaching the
// driver): preloadKernels must throw each time.
//
// Learn it in: lesson 07, step 2 ("What is in it"), and lesson 09's section "Pending work on purpose: the gate"
void preloadKernels(CUlibrary library) {
  wb::notDone();
}

// Exercise 3 of 3 (staging-ring): A staging buffer reused only after the copy that reads it has run
//
// Task: A producer thread uploads frames from ordinary (pageable) memory. It must never block on
// the GPU: when the GPU falls behind, it drops the frame or tries again later; and it reuses its
// own memory as soon as an upload call returns. Write StagingRing, whose tryUpload takes the ring's
// buffers in turn.
//
//   R1: The constructor allocates, once, `buffers` staging buffers of bytesEach bytes in pinned
//       memory (cuMemAllocHost), with an event each; tryUpload allocates nothing.
//   R2: A ring of 0 buffers or of 0 bytes is refused with std::invalid_argument.
//   R3: An upload of more bytes than bytesEach throws std::invalid_argument, whether its buffer is
//       free or not; one of exactly bytesEach bytes is taken.
//   R4: If the constructor's allocation of a buffer or an event fails part way, it throws, and what
//       was made is given back before the exception leaves.
//   R5: While the ring's next buffer's last copy has not run (cuEventQuery answers
//       CUDA_ERROR_NOT_READY), tryUpload returns false at once and does nothing: it writes nothing
//       and the ring stays at that buffer. A buffer whose copy has run is taken.
//   R6: Any other error of the query throws.
//   R7: Otherwise it copies src into the buffer, enqueues the copy from the buffer to dst in stream
//       with cuMemcpyHtoDAsync, records the buffer's event in stream right behind that copy (an
//       event recorded before it would complete before the copy has run), moves the ring on and
//       returns true, before the copy has run; what arrives is src as it was at the call.
//   R8 (not checked: the driver may stage pageable src itself): the copy to dst reads the
//       staging buffer, not src (lesson 09, step 2: a copy straight from src arrives right as well).
//   R9: If the copy cannot be enqueued, it throws and leaves the ring as it was.
//   R10 (not checked: cuMemFreeHost may wait by itself): the destructor waits for the buffers'
//       last copies before it frees them (the reference says nothing either way of cuMemFreeHost,
//       so a destructor that does not wait cannot be shown to fail).
//   R11: The destructor gives back every buffer and event.
//
// The check: exercise09.staging-ring makes a ring of two buffers and, with a gate kernel holding the
// stream, uploads three frames, overwriting each source right after its call. It verifies that
// the first two were accepted and the third refused while the gate was still closed, that an
// upload one byte too large was refused with std::invalid_argument then too, and that tryUpload
// allocated nothing; and, once the gate opened and the stream ran, that the device holds the first
// two frames as they were passed, that the refused frame wrote nothing, that the same upload is
// accepted now, and that the destroyed ring gave back everything it held. With one buffer's copy
// run and the other's held by a gate, it verifies that a refused upload leaves the ring at the busy
// buffer: the next upload is refused too. It refuses a ring of 0 buffers or of 0 bytes and an
// upload larger than a buffer, and takes one of exactly a buffer's size. It makes calls fail
// without reaching the driver: the second cuEventCreate and the second cuMemAllocHost of a
// constructor (nothing may be left behind), a cuEventQuery (tryUpload must throw), and a
// cuMemcpyHtoDAsync while the ring's other buffer is held by a gate (tryUpload must throw without
// recording an event, and the next uploads must be accepted, the first while the gate is still
// closed, and arrive).
//
// Learn it in: lesson 09, step 2 ("Asynchronous copies need pinned memory"), and step 1 ("A stream is a queue")
StagingRing::StagingRing(unsigned buffers, std::size_t bytesEach) {
  wb::notDone();
}

StagingRing::~StagingRing() {}

bool StagingRing::tryUpload(const void* src, std::size_t bytes, CUdeviceptr dst, CUstream stream) {
  wb::notDone();
}

}  // namespace ex09

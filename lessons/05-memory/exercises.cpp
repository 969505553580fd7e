// Lesson 05's exercises. Replace each body with your solution, then run ctest -R exercise05.
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex05 {

// Exercise 1 of 3 (staging-copy): A pinned staging copy that returns before the copy has run
//
// Task: A data loader hands you batches in ordinary (pageable) host memory and refills each
// buffer with the next batch the moment your call returns. Copying from pageable memory is slow and
// may keep the host waiting for the stream; copying from pinned memory is a DMA that the call only
// enqueues. Write StagingUploader::upload: copy the bytes at src into a pinned staging buffer of
// yours (cuMemAllocHost), enqueue cuMemcpyHtoDAsync from it to dst in stream, and return at once,
// before the copy has run. A staging buffer is busy until the stream has passed its copy: record an
// event (cuEventRecord) after the copy, and use a buffer again only once cuEventQuery says its event
// is done, and only if it is large enough. Never wait for a stream: when every buffer is busy, take a
// new one. Pinned allocations are slow, so reserve(count, bytes) makes them before a burst: it makes
// sure at least count buffers of at least bytes each are held. stagingBuffers() says how many you
// hold; the destructor waits for the copies still reading them and frees them. (Lesson 09, step 2
// shows why an asynchronous copy needs pinned memory.)
//
// The check: exercise05.staging-copy reserves two buffers, then, with a gate kernel holding the
// stream, uploads two different batches from one source buffer that it refills right after each
// upload returns. It verifies that two buffers were reserved, that both uploads returned while the
// gate was still closed, and that once the stream ran each destination holds its batch. Then four
// uploads, each waited for, must leave one staging buffer: a buffer whose copy has run is used again.
//
// Learn it in: lesson 05, step 7 ("Bandwidth, pinned against pageable")
void StagingUploader::upload(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  wb::notDone();
}

void StagingUploader::reserve(size_t count, size_t bytes) {
  wb::notDone();
}

size_t StagingUploader::stagingBuffers() const {
  wb::notDone();
}

StagingUploader::~StagingUploader() {}

// Exercise 2 of 3 (fill-elements): Fill a buffer with a value of any element size, without a kernel
//
// Task: A framework initialises tensors to a constant: int8 and fp16 and fp32, but also fp64 and
// int64, and it has no kernel for it. Write fillElements: set count elements from dst on, each
// elementSize bytes (1, 2, 4 or 8), to the elementSize bytes at value, and not one byte more.
// cuMemsetD8, cuMemsetD16 and cuMemsetD32 take a count of elements, not of bytes. There is no
// 8-byte memset: a 2D memset can set every other 4-byte word (cuMemsetD2D32 with a pitch of 8 bytes
// and a width of one word sets one word per row, count rows), once for the low half and once for
// the high half. dst is aligned to the element size, not necessarily to more. Throw
// std::invalid_argument for another element size.
//
// The check: exercise05.fill-elements fills 1, 3 and 4099 elements of each size, starting one
// element into a buffer of known bytes, with a value whose bytes all differ. It verifies that every
// element holds the value's bytes in order and that every byte before and after the elements is as
// it was.
//
// Learn it in: lesson 05, step 3 ("memset counts elements")
void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count) {
  wb::notDone();
}

// Exercise 3 of 3 (pointer-kind): Tell device, pinned and pageable memory apart from a bare pointer
//
// Task: Your library's copy routine takes any pointer its caller has: device memory, pinned host
// memory, or an ordinary malloc'd or std::vector buffer, and picks its path by what the memory is
// (device memory needs no copy, pinned memory can be copied asynchronously, pageable memory must
// be staged). Write memoryKind: say which of the three p points into, from any address inside the
// allocation, whichever context allocated it. Memory the application pinned with cuMemHostAlloc or
// cuMemHostRegister counts as pinned. Unified addressing lets the driver answer from the address
// alone; for memory it never saw it answers with an error, which here is an answer, not a failure.
//
// The check: exercise05.pointer-kind asks about the start and an address inside a cuMemAlloc
// buffer, a buffer of another context, cuMemAllocHost and cuMemHostAlloc memory, a range pinned with
// cuMemHostRegister (before, during and after), a std::vector and a variable on the stack, and
// compares each answer with what the memory is.
//
// Learn it in: lesson 05, step 2 ("Pinned and pageable host memory")
MemoryKind memoryKind(const void* p) {
  wb::notDone();
}

}  // namespace ex05

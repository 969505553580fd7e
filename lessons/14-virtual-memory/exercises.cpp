// Lesson 14's exercises. Replace each body with your solution, then run ctest -R exercise14.
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex14 {

// Exercise 1 of 3 (growable-buffer): A growable device buffer whose base address never changes
//
// Task: A framework's caching allocator keeps its tensors in a few large segments, and kernels,
// CUDA graphs and other tensors hold pointers into them. Write GrowableBuffer (declared in
// exercises.hpp): the constructor reserves addresses for capacity bytes on dev (rounded up to the
// granularity) and maps nothing; grow(bytes) makes at least bytes usable from data() by creating,
// mapping and granting access to more physical memory right after what is mapped, in whole
// granules, keeping the contents; a grow to no more than size() does nothing, and one past the
// capacity throws std::length_error and changes nothing. data() is the base address from
// construction on and never changes; size() is what is mapped. The destructor gives everything
// back: no handle left unreleased, no mapping, no reservation.
//
// The check: exercise14.growable-buffer grows a buffer of 1 GiB capacity three times (1 MiB,
// three granules and a byte, 100 MiB), and verifies that data() never changes, that size() is
// the request rounded up to the granularity, that data written before each growth reads back
// after it and the whole of size() takes writes, that a smaller grow changes nothing and one past
// the capacity throws std::length_error, that the buffer took little more device memory than it
// mapped, and that once it is destroyed the device's free memory is back where it was.
//
// Learn it in: lesson 14, step 4 ("A buffer that grows in place")
GrowableBuffer::GrowableBuffer(CUdevice dev, size_t capacity) {
  wb::notDone();
}

GrowableBuffer::~GrowableBuffer() {}

void GrowableBuffer::grow(size_t bytes) {
  wb::notDone();
}

CUdeviceptr GrowableBuffer::data() const {
  wb::notDone();
}

size_t GrowableBuffer::size() const {
  wb::notDone();
}

// Exercise 2 of 3 (granular-alloc): A cuMemAlloc replacement that maps whole granules and no more
//
// Task: A memory manager replaces cuMemAlloc with the virtual memory calls, so that it can later
// remap, share or grow what it hands out. Write allocate: reserve addresses, create physical memory
// on dev and map it, for bytes rounded up to the minimum granularity (every size, address and
// offset must be a multiple of it) and not one granule more; grant dev read and write access; and
// return the address and the mapped size. The caller gives it back with cuMemUnmap(ptr, size) and
// cuMemAddressFree(ptr, size) only, so the mapping must be the only thing holding the memory.
//
// The check: exercise14.granular-alloc allocates 1 byte, one granule less a byte, one granule, one
// granule and a byte, three granules and 64 MiB and a byte; it verifies for each that size is bytes
// rounded up to the granularity, that ptr is a multiple of it, that cuMemGetAccess says read-write
// for dev, and that all of size takes a memset and reads back; and that after cuMemUnmap and
// cuMemAddressFree of all of them the device's free memory is back where it was.
//
// Learn it in: lesson 14, step 2 ("Reserve, create, map, grant access")
Allocation allocate(CUdevice dev, size_t bytes) {
  wb::notDone();
}

// Exercise 3 of 3 (share-handle): Mapping memory another process exported as a file descriptor
//
// Task: An inference server's scheduler process owns the GPU memory of a shared cache and hands it
// to worker processes: it created the memory with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
// exported it and sent the descriptor over a Unix socket. Write mapShared, which runs in the
// worker: import the allocation fd names, map its size bytes at addresses of the worker's own and
// make them readable and writable by dev, and return the address. Afterwards the mapping must be
// what holds the memory in this process: the caller closes fd and later takes it down with
// cuMemUnmap(ptr, size) and cuMemAddressFree(ptr, size).
//
// The check: exercise14.share-handle creates and exports memory, writes a pattern into it, sends
// the descriptor over a Unix socket to a child process (this check again), where mapShared runs; the
// child verifies that cuMemGetAccess says read-write, that it reads the parent's pattern, writes a
// mark into the first word, and unmaps and frees the range; the parent verifies that the child
// succeeded within its time limit and that the mark arrived in its own memory.
//
// Learn it in: lesson 14, step 7 ("Sharing memory with another process")
CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
  wb::notDone();
}

}  // namespace ex14

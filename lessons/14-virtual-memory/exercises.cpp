// Lesson 14's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-14
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex14 {

// Exercise 1 of 3 (growable-buffer): A growable device buffer whose base address never changes
//
// Task: A framework's caching allocator keeps its tensors in a few large segments, and kernels,
// CUDA graphs and other tensors hold pointers into them. Write GrowableBuffer (declared in
// exercises.hpp): device memory that grows in place behind one reservation of addresses.
//
//   R1: The constructor reserves addresses for capacity bytes on dev, rounded up to the minimum
//       granularity, and maps nothing (size() is 0); that rounded capacity is all the buffer may
//       ever use, and it may use all of it.
//   R2: grow(bytes) makes at least bytes usable from data(): size() becomes bytes rounded up to the
//       granularity, by creating on dev only the physical memory it lacks, in whole granules, and
//       mapping it right after what is mapped.
//   R3: dev may read and write every granule of size(), whichever context is current.
//   R4: grow keeps the contents.
//   R5: A grow to no more than size() does nothing (grow(0) included); one past the capacity throws
//       std::length_error and changes nothing.
//   R6: If a driver call in grow fails, grow throws and the buffer is as it was, holding nothing
//       more; the next grow works.
//   R7: data() is the base address from construction on and never changes.
//   R8: The destructor gives everything back: no handle left unreleased, no mapping, no
//       reservation.
//   R9: The calling thread's current context is as it was throughout, also when grow throws.
//
// The check: exercise14.growable-buffer runs in a context it created. It grows a buffer of 1 GiB
// capacity on device 0 four times (1 MiB, three granules and a byte, 100 MiB, 128 MiB) and
// verifies that data() never changes, that size() is the request rounded up to the granularity,
// that cuMemGetAccess says read-write for dev in every granule, that data written before each
// growth reads back after it and the whole of size() takes writes, that grow(0), a smaller grow
// and one past the capacity (std::length_error) change nothing, that the buffer took little more
// device memory than it mapped, and that once it is destroyed nothing is held (the check's ledger
// counts handles, mappings and reservations) and the context stack is as it was. A buffer asked
// for three granules and a byte must grow to four granules, and no further. It makes cuMemCreate,
// cuMemMap, then cuMemSetAccess, fail in a grow and verifies that grow threw, size(), what is held
// and the context stack did not change, and the next grow works. With two devices it also grows a buffer on device 1 while
// device 0's context is current, and verifies that its memory is on device 1 and that device 1
// may read and write it; with one, the exercise reports itself skipped. On an H200 the recommended
// granularity equals the minimum (2 MiB), so the check cannot tell which one the buffer rounds to.
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
// and map it (cuMemCreate's size and cuMemMap's address and size must be multiples of the
// granularity; cuMemMap's offset must currently be 0), and return the address and the mapped size.
//
//   R1: size is bytes rounded up to the minimum granularity and not one granule more, for any size,
//       past 4 GiB too; ptr is a multiple of the granularity.
//   R2: The memory is created on dev, whichever context is current, and all of size is mapped at
//       ptr.
//   R3: dev may read and write all of it.
//   R4: The mapping is the only thing holding the memory: the caller's cuMemUnmap(ptr, size) and
//       cuMemAddressFree(ptr, size) give everything back.
//   R5: If a call fails, it throws, leaving nothing reserved, created or mapped.
//   R6: The calling thread's current context is as it was, also when allocate throws.
//
// The check: exercise14.granular-alloc runs in a context it created. It allocates 1 byte, one
// granule less a byte, one granule, one granule and a byte, three granules, 64 MiB and a byte, and
// 4 GiB and a byte on device 0, and verifies for each that size is bytes rounded up to the
// granularity, that ptr is a multiple of it, that no allocation handle is left held (the check's
// ledger counts them), that the memory is on dev and cuMemGetAccess says read-write for dev, and
// that all of size takes a memset whose first and last bytes read back; and that after cuMemUnmap
// and cuMemAddressFree of all of them nothing is held. It asks for more memory than the device
// has, and makes cuMemCreate, cuMemMap and cuMemSetAccess fail in turn, and verifies each time
// that allocate threw and left nothing held and the context stack as it was. With two devices it also allocates on device 1 while
// device 0's context is current, and verifies that the memory is there and device 1 may read and
// write it; with one, the exercise reports itself skipped. On an H200 the recommended granularity
// equals the minimum (2 MiB), so the check cannot tell which one allocate rounds to.
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
// worker and maps that memory at addresses of the worker's own.
//
//   R1: It imports the allocation fd names (cuMemImportFromShareableHandle takes the descriptor's
//       value cast to a pointer, not its address).
//   R2: It maps its size bytes at addresses of the worker's own, makes them readable and writable
//       by dev, and returns the address: the worker reads what the exporter wrote, and its writes
//       reach the exporter's memory.
//   R3: fd stays the caller's: it is not closed.
//   R4: The mapping is what holds the memory in this process (every import is paired with a
//       cuMemRelease): the caller's cuMemUnmap(ptr, size) and cuMemAddressFree(ptr, size) give
//       everything back.
//   R5: If a call fails, it throws, leaving nothing imported, reserved or mapped.
//   R6: The calling thread's current context is as it was, also when mapShared throws.
//
// The check: exercise14.share-handle creates and exports memory on device 0, writes a pattern into
// it and sends the descriptor over a Unix socket to a child process (this check again), which runs
// in a context it created. In the child it first makes cuMemAddressReserve, cuMemMap, then
// cuMemSetAccess, fail and verifies that mapShared threw and left nothing held (the check's ledger
// counts imported handles, reservations and mappings) and the context stack as it was; then it calls mapShared and verifies that the descriptor is still
// open, that no imported handle is left held, that the context stack is as it was, that
// cuMemGetAccess says read-write for dev, that it reads the parent's pattern and can write a mark
// into the first word, and that after cuMemUnmap and cuMemAddressFree nothing is held. The parent
// verifies that the child succeeded within its time limit and that the mark arrived in its own
// memory. With two devices it does the same with memory on device 1, and mapShared given device
// 1; with one, the exercise reports itself skipped, as it does on a device that cannot export
// POSIX file descriptors.
//
// Learn it in: lesson 14, step 7 ("Sharing memory with another process")
CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
  wb::notDone();
}

}  // namespace ex14

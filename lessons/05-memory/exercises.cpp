// Lesson 05's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-05
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex05 {

// Exercise 1 of 3 (bounded-upload): An upload that refuses to write past the end of its allocation
//
// Task: A model loader writes each tensor into device memory at an address and a size that it reads
// from a file or that a plugin hands it. cuMemcpyHtoD copies whatever range it is given, and its
// reference does not promise to refuse one that runs past the end of an allocation: a wrong offset
// or a corrupt size can overwrite the allocation next to it. Write uploadWithin, which copies bytes
// from src to dst only after cuMemGetAddressRange (which names the allocation from any address
// inside it) says they fit. bytes is whatever the caller computed, a negative difference turned
// into a huge size_t included.
//
//   R1: When all of [dst, dst + bytes) lies in the one allocation that contains dst, from its start
//       or any address inside it, it copies the bytes there with cuMemcpyHtoD, to the last byte.
//   R2: When the bytes do not fit between dst and the end of that allocation, it throws
//       std::out_of_range and copies nothing, for any bytes up to (size_t)-1 and in allocations
//       larger than 4 GiB: compare in 64 bits, without computing a sum that can wrap.
//   R3: When dst lies in no allocation it throws std::invalid_argument and copies nothing, for any
//       bytes, 0 included (the driver then answers CUDA_ERROR_NOT_FOUND or CUDA_ERROR_INVALID_VALUE:
//       an answer here, not a failure).
//   R4: Zero bytes at an address inside an allocation copy nothing and are no error.
//   R5: Any other failure of cuMemGetAddressRange, and a cuMemcpyHtoD that fails, throw.
//   R6: The caller's context stack is as it was.
//
// The check: exercise05.bounded-upload makes a context of its own current, seeds a 64 KiB
// allocation with one byte value and uploads into it at its start, from an address inside it up to
// its last byte, and zero bytes at its start; it verifies every byte of the allocation, and that
// the context stack is as it was. Then it asks for copies one byte too long, from an address inside that run past the
// end, of 2^32 + 16 bytes and of (size_t)-64 bytes, each of which must throw std::out_of_range, and
// to address 0 and to a host address, of 16 bytes and of none, which must throw
// std::invalid_argument; every byte must stay as it was. It makes cuMemGetAddressRange fail once
// with CUDA_ERROR_INVALID_CONTEXT, and one cuMemcpyHtoD fail (neither reaching the driver):
// uploadWithin must throw, and not std::invalid_argument for the first. Last, in an allocation of
// 4 GiB + 64 KiB (skipped where the device has no room for it), a 1 MiB copy near its start and a
// copy that ends exactly at its end must land, and one byte more, or 1 MiB, from 60 KiB before the
// end must be refused. It does not cover pinned host memory as dst: what cuMemGetAddressRange says
// of it, the reference does not say.
//
// Learn it in: lesson 05, step 1 ("Allocating device memory"), and step 4 ("Round trips")
void uploadWithin(CUdeviceptr dst, const void* src, size_t bytes) {
  wb::notDone();
}

// Exercise 2 of 3 (fill-elements): Fill a buffer with a value of any element size, without a kernel
//
// Task: A framework initialises tensors to a constant: int8 and fp16 and fp32, but also fp64 and
// int64, and it has no kernel for it. Write fillElements. cuMemsetD8, cuMemsetD16 and cuMemsetD32
// take a count of elements, not of bytes. There is no 8-byte memset: a 2D memset can set every
// other 4-byte word (cuMemsetD2D32 with a pitch of 8 bytes and a width of one word sets one word per
// row, count rows), once for the low half and once for the high half. dst is aligned to the element
// size, not necessarily to more.
//
//   R1: For each element size 1, 2, 4 and 8, it sets count elements from dst on to the elementSize
//       bytes at value, in their order, and not one byte before or after them.
//   R2: count may be 0 (nothing is set) and may be past 2^32 (every element is set).
//   R3: Any other element size throws std::invalid_argument and writes nothing, for any count, 0
//       included.
//   R4: A memset the driver fails throws, for every element size (each size's memsets).
//
// The check: exercise05.fill-elements fills 0, 1, 3 and 4099 elements of each size, starting one
// element into a buffer of known bytes, with a value whose bytes all differ. It verifies that every
// element holds the value's bytes in order and that every byte before and after the elements is as
// it was. Element sizes 0, 3 and 16, with 3 elements and with none, must throw
// std::invalid_argument and write nothing. It makes the memset of each size fail once, and for 8
// bytes the second of its two memsets too (without reaching the driver): fillElements must throw.
// Last, it sets 2^32 + 5 one-byte elements (skipped where the device has no room for 4 GiB) and
// verifies both ends of the range.
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
// be staged). Write memoryKind: say which of the three p points into now. Unified addressing lets
// the driver answer from the address alone; for memory it never saw it answers
// CUDA_ERROR_INVALID_VALUE, which here is an answer, not a failure.
//
//   R1: Device memory is Device, from its start or any address inside, whichever context or device
//       allocated it and whichever context is current.
//   R2: Memory the application pinned (cuMemAllocHost, cuMemHostAlloc) is PinnedHost, from any
//       address inside.
//   R3: Memory the driver never saw (malloc'd, a std::vector, the stack) is PageableHost.
//   R4: The answer is what the memory is now: a range is PinnedHost while it is registered with
//       cuMemHostRegister, and PageableHost before and after.
//   R5: Any error of the driver's other than CUDA_ERROR_INVALID_VALUE is a failure: throw.
//
// The check: exercise05.pointer-kind asks about the start and an address inside a cuMemAlloc
// buffer, a buffer of another context, cuMemAllocHost and cuMemHostAlloc memory, one address of a
// range before, while and after it is registered with cuMemHostRegister, a std::vector and a
// variable on the stack, and compares each answer with what the memory is; with two GPUs, also
// device 1's memory, asked with device 0's context current. It makes cuPointerGetAttribute fail
// once with CUDA_ERROR_INVALID_CONTEXT (without reaching the driver): memoryKind must throw.
//
// Learn it in: lesson 05, step 2 ("Pinned and pageable host memory")
MemoryKind memoryKind(const void* p) {
  wb::notDone();
}

}  // namespace ex05

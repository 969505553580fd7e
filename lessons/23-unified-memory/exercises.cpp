// Lesson 23's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-23

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex23 {

// Exercise 1 of 3 (place-for-kernel): Managed memory made ready for a kernel on a chosen device, without waiting
//
// Task: A library is handed bytes of managed memory at ptr and is about to launch a kernel on device
// dev in stream; the host must not wait. Write placeForKernel: read dev's
// CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, then advise the range and prefetch it. Use
// wb::memAdvise and wb::memPrefetchAsync (common/compat.hpp), with dev as a
// CU_MEM_LOCATION_TYPE_DEVICE location and flags 0, so one source builds with CUDA 12 and 13. The
// reference asks it of the stream's device too ("hStream must be associated with a device that has a
// non-zero value" of the attribute): here the caller's stream belongs to dev, as the check's does.
//
//   R1: Where CONCURRENT_MANAGED_ACCESS is 0 the reference allows neither call below: it changes
//       nothing and returns false.
//   R2: Otherwise it advises the whole range (all bytes from ptr) CU_MEM_ADVISE_SET_PREFERRED_LOCATION
//       on dev.
//   R3: Then it prefetches the whole range to dev in stream, never the NULL stream, and returns
//       true.
//   R4: The device is dev, whatever context is current.
//   R5: It does not wait for the prefetch (no synchronisation of any kind): the kernel the caller
//       launches next in stream is ordered after it.
//   R6: The calling thread's context stack is as it was.
//   R7: If a call fails (the attribute's query, the advice, the prefetch), it throws its error as
//       CU_CHECK does.
//
// The check: exercise23.place-for-kernel runs in a context it created on device 0. It holds a
// stream with the gate kernel, calls placeForKernel on 3 MiB and 5 bytes of managed memory, and
// verifies that it returned true while the gate was still closed, that the prefetch went into that
// stream, that nothing was synchronised, and, once the stream has run, that the whole range's
// PREFERRED_LOCATION and LAST_PREFETCH_LOCATION are device 0 and the stack is as it was. It makes the
// driver answer 0 for CONCURRENT_MANAGED_ACCESS and verifies false and no advice or prefetch. It makes
// the attribute's query, the advice and the prefetch fail, each in turn, and verifies the error was
// thrown. With two devices it asks for device 1 while device 0's context is current and verifies
// both attributes name device 1; with one, that case reports itself skipped.
//
// Learn it in: lesson 23, step 4 ("Advice, and reading it back") and step 5 ("Prefetching in stream order")
bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  wb::notDone();
}

// Exercise 2 of 3 (placement-of): Where a managed range's advice and prefetches point, as locations
//
// Task: A memory profiler reports, for a managed buffer, where it is meant to live and where it was
// last sent. Write placementOf. From CUDA 12.2 the range attributes PREFERRED_LOCATION_TYPE and
// _ID, LAST_PREFETCH_LOCATION_TYPE and _ID give locations (a type is sizeof(CUmemLocationType)
// bytes, an id 4); before 12.2 only the int attributes exist, where CU_DEVICE_CPU is the host and
// CU_DEVICE_INVALID is none. Use cuMemRangeGetAttribute or cuMemRangeGetAttributes.
//
//   R1: readMostly is CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY (an int, 4 bytes) of the whole range: true
//       only where every page of it is read mostly.
//   R2: preferred is where the range is meant to live, as a CUmemLocation: CU_MEM_LOCATION_TYPE_DEVICE
//       with the ordinal, _HOST, _HOST_NUMA with the node, or _INVALID where nothing holds for all of
//       the range (never advised, or parts that differ).
//   R3: lastPrefetch is where the range was last prefetched, as a CUmemLocation likewise (_INVALID
//       where never prefetched, or parts that differ).
//   R4: It asks about the whole range of bytes from ptr: the call's second number is a count of
//       bytes, not an end address.
//   R5: It changes nothing: no advice, no prefetch.
//   R6: If a call fails, it throws its error as CU_CHECK does.
//
// The check: exercise23.placement-of sets up ranges of 3 MiB and 100 bytes and calls placementOf on
// each: one never advised nor prefetched (both INVALID, not read mostly); one read mostly, preferring
// device 0 and prefetched to the host; one preferring the host and prefetched to device 0; one whose
// halves prefer and were sent to different places (both INVALID); one whose first half only is read
// mostly (not read mostly); where the system has host NUMA nodes, one advised to prefer and sent to
// the node nearest the device (its preferred location is compared with what the driver itself
// reports: one driver answered INVALID there); with two devices, one preferring and sent to device
// 1. It compares the types, and the ids of devices and NUMA nodes (the reference says to ignore the
// id of the others). It makes the range query fail (cuMemRangeGetAttribute or
// cuMemRangeGetAttributes, whichever is called first) and verifies the error was thrown.
//
// Learn it in: lesson 23, step 4 ("Advice, and reading it back") and step 5 ("Prefetching in stream order")
Placement placementOf(CUdeviceptr ptr, size_t bytes) {
  wb::notDone();
}

// Exercise 3 of 3 (hand-over): Scratch buffers handed to another processor in one call, without copying stale data
//
// Task: A pipeline's stage is done with its scratch buffers (managed memory) and the next stage, on
// the processor at to (a device or the host), will write them before it reads them. Moving their old
// contents would be wasted work. Write handOver. The batch calls refuse the legacy NULL stream, and
// stream is never it. cuda.h asks more of the machine than of to: "All devices in the system must
// have a non-zero value for the device attribute CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
// otherwise the API will return an error", which R6 turns into a throw.
//
//   R1: With CUDA 13.0 or newer, it discards every range and prefetches it to to with one call of
//       cuMemDiscardAndPrefetchBatchAsync: count is the number of ranges, one location (to) that
//       applies from operation 0 on (prefetchLocIdxs {0}, numPrefetchLocs 1), flags 0.
//   R2: The call is in stream.
//   R3: An empty list makes no call at all.
//   R4: It does not wait for the stream.
//   R5 (not checked: the check is built with CUDA 13.0, where this branch is not compiled): Before
//       13.0 no batch and no discard exist: it prefetches each range with wb::memPrefetchAsync.
//   R6: If a call fails, it throws its error as CU_CHECK does.
//
// The check: exercise23.hand-over holds a stream with the gate kernel and hands three ranges of
// different sizes to device 0; it verifies that handOver returned while the gate was closed, made
// exactly one cuMemDiscardAndPrefetchBatchAsync call into that stream, with a count of 3, one
// location, from operation 0, and flags 0, and no other prefetch or discard, and that once the
// stream has run each range's LAST_PREFETCH_LOCATION is device 0. It hands them to the host likewise,
// and verifies CU_DEVICE_CPU. It calls handOver with no ranges and verifies no call and no error, and
// makes the batch call fail and verifies the error was thrown. With two devices it hands them to
// device 1; with one, that case reports itself skipped. Built with a toolkit before 13.0 the check
// reports itself skipped.
//
// Learn it in: lesson 23, step 6 ("Batches: prefetch and discard several ranges in one call")
void handOver(const std::vector<Range>& ranges, CUmemLocation to, CUstream stream) {
  wb::notDone();
}

}  // namespace ex23

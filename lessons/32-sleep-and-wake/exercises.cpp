// Lesson 32's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-32

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex32 {

// Exercise 1 of 4 (map-region): A region whose addresses outlive its memory
//
// Task: The component keeps its weights and its cache in regions whose addresses never change, so
// that the graphs captured with those addresses stay valid across a sleep. Build a region the way
// lesson 14 builds one, one call at a time, keeping the handle (sleep releases it later), and give
// all of it back in freeRegion.
//
//   R1: mapRegion reserves addresses for at least `bytes`, rounded up to the device's minimum
//       allocation granularity (region.size), creates pinned device memory of that size on dev,
//       maps it at region.base and grants dev read-write access: the whole range is usable at once.
//   R2: freeRegion gives back everything the region holds (its mapping and handle while awake, its
//       reservation always), for an awake region and for a sleeping one, and leaves it empty.
//   R3: When a call of mapRegion fails, it gives back what it made before the failure and throws
//       wb::DriverError.
//
// The check: exercise32.map-region maps a region of the granularity + 4 KiB and verifies its size (two
// granules), that cuMemGetAccess reports read-write at its first and last byte, that a pattern
// written over the whole range reads back, and (by the ledger) one reservation, one handle and one
// mapping more than before; freeRegion must leave the ledger as it was. A region whose handle the
// check unmapped and released itself (asleep) must be freed too. Last, it makes cuMemCreate, cuMemMap
// and cuMemSetAccess fail in turn and verifies wb::DriverError and that nothing is left held.
//
// Learn it in: lesson 32, step 1 ("Weights and a cache behind reserved addresses, and the graphs that use them"), and lesson 14, step 2 ("Reserve, create, map, grant access")
Region mapRegion(CUdevice dev, size_t bytes) {
  wb::notDone();
}

void freeRegion(Region& region) {
  wb::notDone();
}

// Exercise 2 of 4 (sleep-region): Sleep: save, unmap, release, keep the addresses
//
// Task: To give the device's memory to someone else for a while (a trainer, another model), the
// component saves what must survive to pinned host memory, discards the rest, and releases the
// device memory, keeping the reserved addresses for the wake. Write sleepRegion.
//
//   R1: When saveTo is not null, the region's size bytes are copied into saveTo with cuMemcpyDtoH
//       (which returns when the copy is complete), before anything is released.
//   R2: The memory is given back: the whole range unmapped and the handle released; region.handle
//       is 0 afterwards.
//   R3: The addresses are kept: region.base and region.size unchanged and the reservation not freed,
//       so memory can be mapped at region.base again.
//   R4: Nothing is released before the save is complete: when the copy fails, the region is left
//       mapped, with its handle and contents, and sleepRegion throws wb::DriverError.
//   R5: A region already asleep is left as it is (no call, no error).
//
// The check: exercise32.sleep-region writes a pattern into a region of 4 MiB, sleeps it into pinned
// memory and verifies the pattern there, region.handle 0, base and size unchanged, and by the ledger
// no handle and no mapping held but the reservation kept; then it maps memory at region.base itself.
// It sleeps a region with saveTo nullptr (discard) and sleeps a sleeping region again. Last, it makes
// cuMemcpyDtoH fail and verifies wb::DriverError, the handle, the mapping and the pattern still there.
//
// Learn it in: lesson 32, step 3 ("Sleep: save the weights, discard the cache, keep the addresses")
void sleepRegion(Region& region, void* saveTo) {
  wb::notDone();
}

// Exercise 3 of 4 (wake-region): Wake: the same addresses, memory again, the contents restored
//
// Task: Waking is the sleep backwards: memory is created and mapped at the addresses kept, access is
// granted again (a new mapping starts with none: cuMemUnmap's reference), and what was saved is
// copied back, so that an executable graph captured before the sleep runs on it unchanged. Write
// wakeRegion.
//
//   R1: It creates memory of region.size on region.device, maps it at region.base (the same address,
//       no new reservation) and grants read-write access; region.handle is the new handle.
//   R2: When restoreFrom is not null (pinned host memory), region.size bytes from it are copied into
//       the region with cuMemcpyHtoD (from pinned memory it returns when the copy is done).
//   R3: A region already awake is left as it is (no call, no error).
//   R4: When a call fails, it gives back what it made (the region stays asleep: handle 0, nothing
//       mapped) and throws wb::DriverError.
//
// The check: exercise32.wake-region sleeps a region holding a pattern (unmapping and releasing it
// itself), wakes it from pinned memory holding another pattern (so memory that came back with the old
// bytes cannot pass for a restore) and verifies the same base, a new handle, read-write access, the
// second pattern, and by the ledger one reservation, one handle and one mapping. It wakes an
// awake region again. Last, it makes cuMemMap, then cuMemSetAccess, then the restoring cuMemcpyHtoD
// fail, and verifies wb::DriverError, handle 0 and nothing held but the reservation; the region then
// wakes normally.
//
// Learn it in: lesson 32, step 4 ("Wake: the same addresses, the same executable graphs")
void wakeRegion(Region& region, const void* restoreFrom) {
  wb::notDone();
}

// Exercise 4 of 4 (sleep-when-idle): Refuse to sleep while a stream still uses the memory
//
// Task: Releasing memory that queued work will still read is a fault waiting to happen (cuMemUnmap's
// reference even notes the call may synchronise). The component's sleep must neither wait for the
// engine's streams nor release under their work: it refuses, and the caller drains its streams and
// asks again. `users` are the streams that use the region. Write sleepWhenIdle.
//
//   R1: When any stream of users still has work (cuStreamQuery answers CUDA_ERROR_NOT_READY), it
//       throws ex32::SleepRefused, at once, without waiting for that work.
//   R2: A refusal changes nothing: the region stays mapped with its handle and contents, and nothing
//       more is held.
//   R3: When every stream of users is idle, it sleeps the region as sleepRegion does (saving to
//       saveTo when not null).
//   R4: When cuStreamQuery fails with another error, it throws wb::DriverError: neither a refusal
//       nor a sleep.
//
// The check: exercise32.sleep-when-idle holds the second of two streams with the gate kernel (a
// kernel that waits for the host, lesson 09) and verifies SleepRefused while the gate is still
// waiting, and the region unchanged. It makes cuStreamQuery fail with CUDA_ERROR_INVALID_HANDLE and
// verifies wb::DriverError with the region awake. Then the milestones together: a weights region
// and a cache region, a graph captured from a copy of the weights into the cache and a kernel on the
// cache, launched; sleepWhenIdle saves the weights and discards the cache, wakeRegion brings both
// back at the same addresses, the same executable graph is launched again and its result verified,
// and freeRegion leaves nothing held.
//
// Learn it in: lesson 32, step 2 ("Refused: a stream still uses the memory"), and lesson 09, step 1 ("A stream is a queue")
void sleepWhenIdle(Region& region, void* saveTo, const std::vector<CUstream>& users) {
  wb::notDone();
}

}  // namespace ex32

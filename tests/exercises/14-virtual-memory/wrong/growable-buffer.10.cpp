// Wrong (R9): makes dev's primary context current for a grow, and a failed call throws past the pop
//
// "The virtual memory calls should run in a context of dev": grow retains dev's primary context
// and pushes it, and pops and releases it at the end. A failed cuMemCreate still gives the retain
// back, but CU_CHECK throws before the pop: the caller's thread is left with dev's primary context
// on top of its own. In "R6 R9: when cuMemCreate, cuMemMap or cuMemSetAccess fails ...",
// `wbx::contextStack() == stackBefore` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex14 {

namespace {

size_t roundUp(size_t bytes, size_t granule) { return (bytes + granule - 1) / granule * granule; }

CUmemAllocationProp onDevice(CUdevice dev) {
  CUmemAllocationProp prop{};  // zeroed: every field not set here must be 0
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  return prop;
}

// Maps handle at [at, at + size), grants dev read-write there and releases the handle, so the mapping
// is the only owner of the memory. On failure nothing is left mapped or held, and it throws.
void mapOwned(CUdeviceptr at, size_t size, CUmemGenericAllocationHandle handle, CUdevice dev) {
  CUresult rc = cuMemMap(at, size, 0, handle, 0);
  cuMemRelease(handle);  // mapped: the mapping keeps the memory; not mapped: this frees it
  CU_CHECK(rc);
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  rc = cuMemSetAccess(at, size, &access, 1);
  if (rc != CUDA_SUCCESS) cuMemUnmap(at, size);  // the last reference: the memory goes with it
  CU_CHECK(rc);
}

}  // namespace

// The reservation is the buffer's identity: taken once, for the whole capacity rounded up to the
// granularity, so every address in it stays valid for the buffer's life however far it grows.
GrowableBuffer::GrowableBuffer(CUdevice dev, size_t capacity) {
  const CUmemAllocationProp prop = onDevice(dev);
  s_.dev = dev;
  CU_CHECK(cuMemGetAllocationGranularity(&s_.granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  s_.capacity = roundUp(capacity, s_.granularity);
  CU_CHECK(cuMemAddressReserve(&s_.base, s_.capacity, s_.granularity, 0, 0));
}

// cuMemUnmap must be given each mapping whole, as it was mapped; each handle was released when it was
// mapped, so unmapping frees the memory. The reservation goes last.
GrowableBuffer::~GrowableBuffer() {
  for (const auto& [at, bytes] : s_.pieces) cuMemUnmap(at, bytes);
  cuMemAddressFree(s_.base, s_.capacity);
}

// New physical memory for the difference only, mapped right after what is mapped: nothing moves and
// nothing is copied. The state changes only once the new piece is mapped and granted.
void GrowableBuffer::grow(size_t bytes) {
  const size_t target = roundUp(bytes, s_.granularity);
  if (target <= s_.size) return;
  if (target > s_.capacity)
    throw std::length_error("GrowableBuffer::grow(" + std::to_string(bytes) + "): past the capacity of " +
                            std::to_string(s_.capacity) + " bytes");
  const size_t more = target - s_.size;
  const CUdeviceptr at = s_.base + s_.size;
  const CUmemAllocationProp prop = onDevice(s_.dev);
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, s_.dev));
  CU_CHECK(cuCtxPushCurrent(primary));  // "the memory calls run in dev's context"
  CUmemGenericAllocationHandle handle = 0;
  CUresult rc = cuMemCreate(&handle, more, &prop, 0);
  if (rc != CUDA_SUCCESS) cuDevicePrimaryCtxRelease(s_.dev);
  CU_CHECK(rc);  // throws with dev's primary context still pushed
  mapOwned(at, more, handle, s_.dev);
  s_.pieces.emplace_back(at, more);
  s_.size = target;
  CU_CHECK(cuCtxPopCurrent(&primary));
  CU_CHECK(cuDevicePrimaryCtxRelease(s_.dev));
}

CUdeviceptr GrowableBuffer::data() const { return s_.base; }

size_t GrowableBuffer::size() const { return s_.size; }

}  // namespace ex14

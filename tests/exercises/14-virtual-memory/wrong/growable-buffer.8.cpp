// Wrong (R4): replaces the mapping with one piece of the new size at the same base, losing the contents
//
// "One piece per buffer is simpler than a list": each grow creates memory for the whole new size,
// unmaps the old pieces and maps the new one at the base. The base never moves and only the new
// size is held, but the new physical memory holds none of what was written: in "R1 R2 R3 R4 R5 R7
// R8 R9: grown four times ...", `back == written` fails ("the contents did not survive the growth").
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
  const CUmemAllocationProp prop = onDevice(s_.dev);
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, target, &prop, 0));
  for (const auto& [at, bytes] : s_.pieces) cuMemUnmap(at, bytes);  // one piece is simpler to keep
  s_.pieces.clear();
  s_.size = 0;
  mapOwned(s_.base, target, handle, s_.dev);
  s_.pieces.emplace_back(s_.base, target);
  s_.size = target;
}

CUdeviceptr GrowableBuffer::data() const { return s_.base; }

size_t GrowableBuffer::size() const { return s_.size; }

}  // namespace ex14

// Wrong (R5): a grow past the capacity first grows to the capacity, then throws std::length_error
//
// "Give the caller as much as it can have, then say it was not enough": the throw is right, but
// the buffer has changed, and the caller that catches the error holds more memory than before.
// In "R1 R2 R3 R4 R5 R7 R8 R9: grown four times ...", after `grow(capacity + 1)` threw,
// `buf.size() == mapped` fails (and the holdings changed).
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
  const size_t wanted = roundUp(bytes, s_.granularity);
  const size_t target = wanted > s_.capacity ? s_.capacity : wanted;  // as far as it can
  if (target <= s_.size && wanted <= s_.capacity) return;
  if (target == s_.size)
    throw std::length_error("GrowableBuffer::grow(" + std::to_string(bytes) + "): past the capacity of " +
                            std::to_string(s_.capacity) + " bytes");
  const size_t more = target - s_.size;
  const CUdeviceptr at = s_.base + s_.size;
  const CUmemAllocationProp prop = onDevice(s_.dev);
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, more, &prop, 0));
  mapOwned(at, more, handle, s_.dev);
  s_.pieces.emplace_back(at, more);
  s_.size = target;
  if (wanted > s_.capacity)
    throw std::length_error("GrowableBuffer::grow(" + std::to_string(bytes) + "): past the capacity of " +
                            std::to_string(s_.capacity) + " bytes; grown to the capacity");
}

CUdeviceptr GrowableBuffer::data() const { return s_.base; }

size_t GrowableBuffer::size() const { return s_.size; }

}  // namespace ex14

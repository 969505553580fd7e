// Wrong (R6): checks cuMemMap with CU_CHECK before the handle is released, so a failed map leaks the handle
//
// Each call checked as it is made, and the release after the map "as the lesson does": when
// cuMemMap fails, CU_CHECK throws past the release. The check's failure case sees `left.empty()`
// fail ("1 allocation handle more").
#include "exercises.hpp"

#include <stdexcept>

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
  CU_CHECK(cuMemMap(at, size, 0, handle, 0));  // throws past the release below
  cuMemRelease(handle);
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const CUresult rc = cuMemSetAccess(at, size, &access, 1);
  if (rc != CUDA_SUCCESS) cuMemUnmap(at, size);  // the last reference: the memory goes with it
  CU_CHECK(rc);
}

}  // namespace

GrowableBuffer::GrowableBuffer(CUdevice dev, size_t capacity) {
  const CUmemAllocationProp prop = onDevice(dev);
  s_.dev = dev;
  CU_CHECK(cuMemGetAllocationGranularity(&s_.granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  s_.capacity = roundUp(capacity, s_.granularity);
  CU_CHECK(cuMemAddressReserve(&s_.base, s_.capacity, s_.granularity, 0, 0));
}

GrowableBuffer::~GrowableBuffer() {
  for (const auto& [at, bytes] : s_.pieces) cuMemUnmap(at, bytes);
  cuMemAddressFree(s_.base, s_.capacity);
}

void GrowableBuffer::grow(size_t bytes) {
  const size_t target = roundUp(bytes, s_.granularity);
  if (target <= s_.size) return;
  if (target > s_.capacity) throw std::length_error("GrowableBuffer::grow: past the capacity");
  const size_t more = target - s_.size;
  const CUdeviceptr at = s_.base + s_.size;
  const CUmemAllocationProp prop = onDevice(s_.dev);
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, more, &prop, 0));
  mapOwned(at, more, handle, s_.dev);
  s_.pieces.emplace_back(at, more);
  s_.size = target;
}

CUdeviceptr GrowableBuffer::data() const { return s_.base; }

size_t GrowableBuffer::size() const { return s_.size; }

}  // namespace ex14

// Wrong (R7): grows "like std::vector": cuMemAlloc a bigger buffer, copy the contents across, free the old one
//
// The contents survive and the memory is given back, but the base address moves at every growth,
// so every pointer a kernel or a graph kept into the buffer now dangles: `buf.data() == base` fails.
#include "exercises.hpp"

#include <stdexcept>

namespace ex14 {

namespace {

size_t roundUp(size_t bytes, size_t granule) { return (bytes + granule - 1) / granule * granule; }

}  // namespace

GrowableBuffer::GrowableBuffer(CUdevice dev, size_t capacity) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  s_.dev = dev;
  CU_CHECK(cuMemGetAllocationGranularity(&s_.granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  s_.capacity = roundUp(capacity, s_.granularity);
}

GrowableBuffer::~GrowableBuffer() {
  if (s_.base) cuMemFree(s_.base);
}

void GrowableBuffer::grow(size_t bytes) {
  const size_t target = roundUp(bytes, s_.granularity);
  if (target <= s_.size) return;
  if (target > s_.capacity) throw std::length_error("GrowableBuffer::grow: past the capacity");
  CUdeviceptr bigger = 0;
  CU_CHECK(cuMemAlloc(&bigger, target));
  if (s_.base) {
    CU_CHECK(cuMemcpyDtoD(bigger, s_.base, s_.size));
    CU_CHECK(cuCtxSynchronize());
    CU_CHECK(cuMemFree(s_.base));
  }
  s_.base = bigger;
  s_.size = target;
}

CUdeviceptr GrowableBuffer::data() const { return s_.base; }

size_t GrowableBuffer::size() const { return s_.size; }

}  // namespace ex14

// Deliberately wrong variants of lesson 14's exercises: each check must fail on them.
#include "exercises.hpp"

#include <cstdint>
#include <stdexcept>

namespace ex14 {

namespace {

size_t roundUp(size_t bytes, size_t granule) { return (bytes + granule - 1) / granule * granule; }

CUmemAllocationProp onDevice(CUdevice dev) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  return prop;
}

size_t granularityOf(const CUmemAllocationProp& prop) {
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  return granule;
}

CUmemAccessDesc readWrite(CUdevice dev) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return access;
}

}  // namespace

// Wrong: grows the old way, "like std::vector": cuMemAlloc a bigger buffer, copy the contents across,
// free the old one. The contents survive and the memory is given back, but the base address moves
// at every growth, so every pointer a kernel or a graph kept into the buffer now dangles: the
// check's `buf.data() == base` fails.
GrowableBuffer::GrowableBuffer(CUdevice dev, size_t capacity) {
  s_.dev = dev;
  s_.granularity = granularityOf(onDevice(dev));
  s_.capacity = roundUp(capacity, s_.granularity);
}

GrowableBuffer::~GrowableBuffer() {
  if (s_.base) cuMemFree(s_.base);
}

void GrowableBuffer::grow(size_t bytes) {
  const size_t target = roundUp(bytes, s_.granularity);
  if (target <= s_.size) return;
  if (target > s_.capacity) throw std::length_error("past the capacity");
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

// Wrong: rounds up with (bytes / g + 1) * g, which adds a whole granule to a request that is a
// multiple already. Everything works, but a size of exactly one granule takes two: the check's
// `a.size == roundUp(bytes, g)` fails for the requests of one and of three granules.
Allocation allocate(CUdevice dev, size_t bytes) {
  const CUmemAllocationProp prop = onDevice(dev);
  const size_t granule = granularityOf(prop);
  Allocation a;
  a.size = (bytes / granule + 1) * granule;
  CU_CHECK(cuMemAddressReserve(&a.ptr, a.size, granule, 0, 0));
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, a.size, &prop, 0));
  CU_CHECK(cuMemMap(a.ptr, a.size, 0, handle, 0));
  CU_CHECK(cuMemRelease(handle));
  const CUmemAccessDesc access = readWrite(dev);
  CU_CHECK(cuMemSetAccess(a.ptr, a.size, &access, 1));
  return a;
}

// Wrong: imports and maps, but does not call cuMemSetAccess, "since the exporter already granted
// access". Access belongs to a mapping, and this process's mapping starts with none: in the child,
// cuMemGetAccess does not say read-write (the check then touches nothing), the child's checks fail,
// and the parent's `end.code == 0` and the mark it looks for fail with them.
CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CUdeviceptr ptr = 0;
  CU_CHECK(cuMemAddressReserve(&ptr, size, granularityOf(onDevice(dev)), 0, 0));
  CU_CHECK(cuMemMap(ptr, size, 0, handle, 0));
  CU_CHECK(cuMemRelease(handle));
  return ptr;
}

}  // namespace ex14

// Reference solutions of lesson 14's exercises.
#include "exercises.hpp"

#include <cstdint>
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

size_t granularityOf(const CUmemAllocationProp& prop) {
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  return granule;
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
  if (rc != CUDA_SUCCESS) cuMemUnmap(at, size);
  CU_CHECK(rc);
}

}  // namespace

// The reservation is the buffer's identity: taken once, for the whole capacity, so every address in
// it stays valid for the buffer's life however far it grows.
GrowableBuffer::GrowableBuffer(CUdevice dev, size_t capacity) {
  s_.dev = dev;
  s_.granularity = granularityOf(onDevice(dev));
  s_.capacity = roundUp(capacity, s_.granularity);
  CU_CHECK(cuMemAddressReserve(&s_.base, s_.capacity, s_.granularity, 0, 0));
}

// cuMemUnmap must be given each mapping whole, as it was mapped; each handle was released when it was
// mapped, so unmapping frees the memory. The reservation goes last.
GrowableBuffer::~GrowableBuffer() {
  for (const auto& [at, bytes] : s_.pieces) cuMemUnmap(at, bytes);
  cuMemAddressFree(s_.base, s_.capacity);
}

// New physical memory, mapped right after what is mapped: nothing moves and nothing is copied.
void GrowableBuffer::grow(size_t bytes) {
  const size_t target = roundUp(bytes, s_.granularity);
  if (target <= s_.size) return;
  if (target > s_.capacity)
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
}

CUdeviceptr GrowableBuffer::data() const { return s_.base; }

size_t GrowableBuffer::size() const { return s_.size; }

// Every size, address and offset in the virtual memory calls is a multiple of the minimum
// granularity: round the request up to it, and no further (a size that is a multiple already gets
// nothing added). The mapping owns the memory, so the caller's cuMemUnmap frees it.
Allocation allocate(CUdevice dev, size_t bytes) {
  const CUmemAllocationProp prop = onDevice(dev);
  const size_t granule = granularityOf(prop);
  Allocation a;
  a.size = roundUp(bytes, granule);
  CU_CHECK(cuMemAddressReserve(&a.ptr, a.size, granule, 0, 0));
  CUmemGenericAllocationHandle handle = 0;
  CUresult rc = cuMemCreate(&handle, a.size, &prop, 0);
  if (rc == CUDA_SUCCESS) {
    try {
      mapOwned(a.ptr, a.size, handle, dev);
    } catch (...) {
      cuMemAddressFree(a.ptr, a.size);
      throw;
    }
  } else {
    cuMemAddressFree(a.ptr, a.size);  // nothing leaks out of a failed allocation
    CU_CHECK(rc);
  }
  return a;
}

// An imported handle is a handle like one from cuMemCreate, but the mapping here is new: the
// exporter's cuMemSetAccess covered only its own mapping, so this process grants access itself. The
// granularity comes from the allocation's own properties.
CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CUmemAllocationProp prop{};
  size_t granule = 0;
  CUresult rc = cuMemGetAllocationPropertiesFromHandle(&prop, handle);
  if (rc == CUDA_SUCCESS) rc = cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  CUdeviceptr ptr = 0;
  if (rc == CUDA_SUCCESS) rc = cuMemAddressReserve(&ptr, size, granule, 0, 0);
  if (rc != CUDA_SUCCESS) {
    cuMemRelease(handle);  // each import is paired with a release
    CU_CHECK(rc);
  }
  try {
    mapOwned(ptr, size, handle, dev);
  } catch (...) {
    cuMemAddressFree(ptr, size);
    throw;
  }
  return ptr;
}

}  // namespace ex14

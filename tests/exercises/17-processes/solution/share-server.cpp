// Reference solution of lesson 17's exercise share-server (lessons/17-processes/exercises.cpp).
#include "exercises.hpp"

#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace ex17 {

namespace {

// What this process holds of the shared memory, each part given back at scope exit: on the way out
// of a successful handoff and of every failure alike.
struct Held {
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr ptr = 0;
  size_t reserved = 0, mapped = 0;
  int fd = -1;
  ~Held() {
    if (fd >= 0) close(fd);
    if (mapped) cuMemUnmap(ptr, mapped);
    if (reserved) cuMemAddressFree(ptr, reserved);
    if (handle) cuMemRelease(handle);
  }
};

}  // namespace

// The server holds three things of the memory: the handle from cuMemCreate, its own mapping (to copy
// the data in), and the exported descriptor. The client holds its own: the descriptor it received, the
// handle it imported, its mapping. The memory lives while any of them does; so once the client has
// mapped it, the server gives back all three, and the client's unmap is then the last reference.
void shareWithClient(int socket, CUdevice dev, const void* data, std::size_t bytes) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  const size_t size = (bytes + granule - 1) / granule * granule;
  Held held;
  CU_CHECK(cuMemCreate(&held.handle, size, &prop, 0));
  CU_CHECK(cuMemAddressReserve(&held.ptr, size, granule, 0, 0));
  held.reserved = size;
  CU_CHECK(cuMemMap(held.ptr, size, 0, held.handle, 0));
  held.mapped = size;
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemSetAccess(held.ptr, size, &access, 1));
  CU_CHECK(cuMemcpyHtoD(held.ptr, data, bytes));
  CU_CHECK(cuCtxSynchronize());  // data may be pageable: landed before another process maps it
  CU_CHECK(cuMemExportToShareableHandle(&held.fd, held.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  const ShareOffer offer{size};
  if (!wb::sendMessage(socket, &offer, sizeof offer, held.fd))
    throw std::runtime_error("shareWithClient: the offer could not be sent");
  ShareReply reply{};
  if (wb::receiveMessage(socket, &reply, sizeof reply, nullptr, kShareReplySeconds) != wb::Received::Message)
    throw std::runtime_error("shareWithClient: the client did not reply");
  if (reply.mapped != 1) throw std::runtime_error("shareWithClient: the client did not map the memory");
  // Leaving the scope gives back the descriptor, the mapping, the range and the handle.
}

}  // namespace ex17

// Wrong (R4): gives back what it holds only on the way out of a successful handoff
//
// "Clean up at the end, throw where it fails." Every throw skips the clean-up at the end: when the
// offer cannot be sent or the client refuses, the handle, the range, the mapping and the descriptor
// stay held, and `heldWhenGone == ""` and `descriptorsWhenGone == descriptorsBefore` fail.
#include "exercises.hpp"

#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace ex17 {

void shareWithClient(int socket, CUdevice dev, const void* data, std::size_t bytes) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  const size_t size = (bytes + granule - 1) / granule * granule;
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, size, &prop, 0));
  CUdeviceptr ptr = 0;
  CU_CHECK(cuMemAddressReserve(&ptr, size, granule, 0, 0));
  CU_CHECK(cuMemMap(ptr, size, 0, handle, 0));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemSetAccess(ptr, size, &access, 1));
  CU_CHECK(cuMemcpyHtoD(ptr, data, bytes));
  CU_CHECK(cuCtxSynchronize());  // data may be pageable: landed before another process maps it
  int fd = -1;
  CU_CHECK(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  const ShareOffer offer{size};
  if (!wb::sendMessage(socket, &offer, sizeof offer, fd))
    throw std::runtime_error("shareWithClient: the offer could not be sent");
  ShareReply reply{};
  if (wb::receiveMessage(socket, &reply, sizeof reply, nullptr, kShareReplySeconds) != wb::Received::Message)
    throw std::runtime_error("shareWithClient: the client did not reply");
  if (reply.mapped != 1) throw std::runtime_error("shareWithClient: the client did not map the memory");
  close(fd);
  CU_CHECK(cuMemUnmap(ptr, size));
  CU_CHECK(cuMemAddressFree(ptr, size));
  CU_CHECK(cuMemRelease(handle));
}

}  // namespace ex17

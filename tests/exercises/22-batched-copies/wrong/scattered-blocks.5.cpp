// Wrong (R4): keeps the copies of 0 bytes in the batch
//
// "A copy of nothing is harmless", as it is for cuMemcpyAsync. The task leaves them out (a batch
// entry of 0 bytes may be refused, and a list of them alone must make no call): the check sees a
// batch of 4 entries with a size of 0 (`b.count == 3`), or copyBlocks throws where the driver
// refuses it; a list of copies of 0 bytes makes calls (`seen().batches.empty()`).
#include "exercises.hpp"

namespace ex22 {

namespace {

bool takesBatch(CUstream stream) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_CHECK(cuStreamIsCapturing(stream, &status));
  return status == CU_STREAM_CAPTURE_STATUS_NONE;
}

}  // namespace

void copyBlocks(const std::vector<BlockCopy>& blocks, CUstream stream) {
  std::vector<CUdeviceptr> dsts, srcs;
  std::vector<size_t> sizes;
  for (const BlockCopy& b : blocks)
    dsts.push_back(b.dst), srcs.push_back(b.src), sizes.push_back(b.bytes);
  if (sizes.empty()) return;
#if CUDA_VERSION >= 12080
  if (takesBatch(stream)) {
    CUmemcpyAttributes attrs{};
    attrs.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    size_t first = 0;
    CU_CHECK(wb::memcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), sizes.size(), &attrs, &first, 1, stream));
    return;
  }
#else
  (void)takesBatch;
#endif
  for (size_t i = 0; i < sizes.size(); ++i) CU_CHECK(cuMemcpyAsync(dsts[i], srcs[i], sizes[i], stream));
}

}  // namespace ex22

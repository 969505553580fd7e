// Wrong (R2): one cuMemcpyBatchAsync per copy
//
// Each call is a batch, so this looks like batching; but it pays the per-call cost the batch exists
// to save, once per copy. The check sees three batches of one copy (`seen().batches.size() == 1`).
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
    if (b.bytes > 0) dsts.push_back(b.dst), srcs.push_back(b.src), sizes.push_back(b.bytes);
  if (sizes.empty()) return;
#if CUDA_VERSION >= 12080
  if (takesBatch(stream)) {
    CUmemcpyAttributes attrs{};
    attrs.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    size_t first = 0;
    for (size_t i = 0; i < sizes.size(); ++i)
      CU_CHECK(wb::memcpyBatchAsync(&dsts[i], &srcs[i], &sizes[i], 1, &attrs, &first, 1, stream));
    return;
  }
#else
  (void)takesBatch;
#endif
  for (size_t i = 0; i < sizes.size(); ++i) CU_CHECK(cuMemcpyAsync(dsts[i], srcs[i], sizes[i], stream));
}

}  // namespace ex22

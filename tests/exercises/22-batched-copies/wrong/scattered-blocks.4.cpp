// Wrong (R3): reads the sources during the call (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL)
//
// "The sources are ready when I call, and then the caller can reuse them at once": but a source
// may still be produced by work queued earlier in the stream, which the driver would not wait for.
// Behind the check's gate the pinned source is rewritten after the call returns: the device gets
// the old bytes (`std::all_of(... v == 2)` fails), and `b.orders` shows DURING_API_CALL.
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
    attrs.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
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

// Wrong (R5): treats only NULL as the legacy stream, and batches on CU_STREAM_LEGACY
//
// `stream == nullptr` looks like the whole test for "the default stream", but CU_STREAM_LEGACY is
// the same legacy stream by another handle (lesson 09), and the batch is refused there too: the
// legacy-stream case's CU_STREAM_LEGACY pass throws, and `seen().batches.empty()` fails.
#include "exercises.hpp"

namespace ex22 {

namespace {

bool takesBatch(CUstream stream) {
  if (stream == nullptr) return false;
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
    CU_CHECK(wb::memcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), sizes.size(), &attrs, &first, 1, stream));
    return;
  }
#else
  (void)takesBatch;
#endif
  for (size_t i = 0; i < sizes.size(); ++i) CU_CHECK(cuMemcpyAsync(dsts[i], srcs[i], sizes[i], stream));
}

}  // namespace ex22

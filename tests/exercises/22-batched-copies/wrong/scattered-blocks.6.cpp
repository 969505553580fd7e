// Wrong (R6): falls back for the legacy stream only, and batches into a capturing stream
//
// The legacy stream is what the reference names; that a capture refuses the batch it does not say,
// and a library tested outside graphs never meets it (RAPIDS rmm met it when its copies moved to
// the batch call: rmm issue 2518). Captured by the caller, the batch is refused: copyBlocks throws
// (`CHECK_FALSE(threw)`) and the check sees a batch during the capture (`seen().batches.empty()`).
#include "exercises.hpp"

namespace ex22 {

namespace {

bool takesBatch(CUstream stream) { return stream != nullptr && stream != CU_STREAM_LEGACY; }

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

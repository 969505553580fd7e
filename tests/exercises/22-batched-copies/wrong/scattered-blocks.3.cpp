// Wrong (R3): leaves the attributes zeroed, so srcAccessOrder is CU_MEMCPY_SRC_ACCESS_ORDER_INVALID
//
// `CUmemcpyAttributes attrs{}` looks like "the defaults", as it is for many CUDA structs; but 0 is
// the invalid order, and the reference: each copy needs a valid srcAccessOrder, "otherwise the API
// will return CUDA_ERROR_INVALID_VALUE". copyBlocks throws on every created stream: the first case
// fails (and `b.orders` would show 0s).
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

// Wrong (R5 R6): batches on every stream, the legacy NULL stream and a capturing stream included
//
// "One call for all the copies" read as the whole answer: the stream a library is handed is the
// caller's, and the caller's is often the legacy default stream, which cuMemcpyBatchAsync refuses
// (the reference: "Must not be legacy NULL stream"). On NULL the batch is refused and copyBlocks
// throws, so the legacy-stream case fails (`seen().batches.empty()` and the data); under capture,
// `CHECK_FALSE(threw)` fails.
#include "exercises.hpp"

namespace ex22 {

void copyBlocks(const std::vector<BlockCopy>& blocks, CUstream stream) {
  std::vector<CUdeviceptr> dsts, srcs;
  std::vector<size_t> sizes;
  for (const BlockCopy& b : blocks)
    if (b.bytes > 0) dsts.push_back(b.dst), srcs.push_back(b.src), sizes.push_back(b.bytes);
  if (sizes.empty()) return;
#if CUDA_VERSION >= 12080
  CUmemcpyAttributes attrs{};
  attrs.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t first = 0;
  CU_CHECK(wb::memcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), sizes.size(), &attrs, &first, 1, stream));
#else
  for (size_t i = 0; i < sizes.size(); ++i) CU_CHECK(cuMemcpyAsync(dsts[i], srcs[i], sizes[i], stream));
#endif
}

}  // namespace ex22

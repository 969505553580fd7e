// Wrong (R9): makes device 0's primary context current "so that a context is current", and leaves it
//
// A library function called from a fresh thread has no current context, so the engineer makes sure
// of one before the first driver call. But the caller had one current, its own, and comes back to
// another (and the retain is never released). In "R1 R2 R3 R4 R8 R9: on a created stream ...",
// `wbx::contextStack() == stack` fails (if the batch in the caller's stream is not refused first).
#include "exercises.hpp"

#include <stdexcept>

namespace ex22 {

namespace {

// Whether stream takes a batch: not the legacy stream (under either name), not a capturing stream.
bool takesBatch(CUstream stream) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_CHECK(cuStreamIsCapturing(stream, &status));
  return status == CU_STREAM_CAPTURE_STATUS_NONE;
}

}  // namespace

// The copies of more than 0 bytes go into one batch, all under one attribute entry (attrsIdxs {0})
// that reads every source in stream order; where the stream takes no batch, one cuMemcpyAsync each,
// in the list's order. Nothing is allocated, so nothing needs giving back.
void copyBlocks(const std::vector<BlockCopy>& blocks, CUstream stream) {
  CUdevice device = 0;
  CU_CHECK(cuDeviceGet(&device, 0));
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, device));
  CU_CHECK(cuCtxSetCurrent(primary));
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
  (void)takesBatch;  // CUDA 12.8 introduced the batch: every stream gets the copies one by one
#endif
  for (size_t i = 0; i < sizes.size(); ++i) CU_CHECK(cuMemcpyAsync(dsts[i], srcs[i], sizes[i], stream));
}

}  // namespace ex22

// Wrong (R3): creates each stream with cuStreamCreate after cuCtxFromGreenCtx, without making that context current
//
// "The converted context names the green context": a stream belongs to the context current when it
// is made, here the caller's primary context. Neither stream is its partition's:
// `ownerOf(parts.latencyStream()) == parts.latency()` fails, and its kernels spread over the device.
#include "exercises.hpp"

#include <stdexcept>

namespace ex16 {

#if CUDA_VERSION >= 12040
namespace {

CUgreenCtx greenContextOn(CUdevice dev, CUdevResource& group) {
  CUdevResourceDesc desc = nullptr;
  CU_CHECK(cuDevResourceGenerateDesc(&desc, &group, 1));
  CUgreenCtx green = nullptr;
  CU_CHECK(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  return green;
}

CUstream streamIn(CUgreenCtx green) {
  CUstream s = nullptr;
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxFromGreenCtx(&ctx, green));
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  return s;
}

void destroy(CUstream& latencyStream, CUstream& throughputStream, CUgreenCtx& latency, CUgreenCtx& throughput) {
  for (CUstream* s : {&latencyStream, &throughputStream}) {
    if (*s) cuStreamDestroy(*s);
    *s = nullptr;
  }
  for (CUgreenCtx* g : {&latency, &throughput}) {
    if (*g) cuGreenCtxDestroy(*g);
    *g = nullptr;
  }
}

}  // namespace

Partitions::Partitions(CUdevice dev, unsigned latencySms) {
  CUdevResource whole{}, group{}, remaining{};
  CU_CHECK(cuDeviceGetDevResource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM));
  unsigned groups = 1;
  CU_CHECK(cuDevSmResourceSplitByCount(&group, &groups, &whole, &remaining, 0, latencySms));
  if (groups != 1) throw std::runtime_error("Partitions: the split made no group");
  try {
    latency_ = greenContextOn(dev, group);
    throughput_ = greenContextOn(dev, remaining);
    latencyStream_ = streamIn(latency_);
    throughputStream_ = streamIn(throughput_);
  } catch (...) {
    destroy(latencyStream_, throughputStream_, latency_, throughput_);
    throw;
  }
}

Partitions::~Partitions() { destroy(latencyStream_, throughputStream_, latency_, throughput_); }
#endif

}  // namespace ex16

// Wrong: creates the streams with cuStreamCreate(&s, 0) in the pushed green context: blocking streams
//
// "Flags 0 is the usual stream": a blocking stream synchronises with the legacy stream of its
// context, so any library that uses the legacy stream stalls the partition's work and is stalled by
// it. The task asks for non-blocking streams: `nonBlocking(parts.latencyStream())` fails.
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
  CU_CHECK(cuCtxPushCurrent(ctx));
  const CUresult rc = cuStreamCreate(&s, 0);
  CU_CHECK(cuCtxPopCurrent(&ctx));
  CU_CHECK(rc);
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

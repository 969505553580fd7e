// Wrong (R1): makes the throughput green context from the device's whole SM resource, not the split's remaining one
//
// "The throughput work may use the whole GPU": the two partitions then share the latency
// partition's SMs. The SM counts add up to more than the device has (`latency + throughput ==
// whole.sm.smCount` fails), the kernels' SMs overlap, and a kernel holding the whole throughput
// partition holds every SM, so the latency kernel waits until the holder gives up. Where the driver
// refuses a descriptor of the whole device, the constructor throws instead, and the check fails there.
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
#if CUDA_VERSION >= 12050
  CU_CHECK(cuGreenCtxStreamCreate(&s, green, CU_STREAM_NON_BLOCKING, 0));
#else
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxFromGreenCtx(&ctx, green));
  CU_CHECK(cuCtxPushCurrent(ctx));
  const CUresult rc = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CU_CHECK(cuCtxPopCurrent(&ctx));
  CU_CHECK(rc);
#endif
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
    throughput_ = greenContextOn(dev, whole);
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

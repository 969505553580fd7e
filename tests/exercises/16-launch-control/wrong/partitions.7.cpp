// Wrong (R5): when a call fails half way, destroys the green contexts but not a stream already made
//
// "Destroying a context destroys its streams", true of cuCtxDestroy, not of cuGreenCtxDestroy: the
// reference says the green context's streams stay. When the second stream cannot be made, the
// first is left behind. In "R4 R5: the second green context, or the first or the second stream,
// cannot be made ...", `r.left.empty()` fails ("1 stream more").
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

// With CUDA 12.4 a stream belongs to a green context when it is created while the green context,
// converted with cuCtxFromGreenCtx, is current: pushed for the call, and popped, so that the
// caller's stack is as it was.
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

// Streams first: cuGreenCtxDestroy does not destroy them. The 13.0 reference says every later call
// on them, cuStreamDestroy included, returns CUDA_ERROR_CONTEXT_IS_DESTROYED (so they leak); from
// 13.1 such calls return CUDA_ERROR_STREAM_DETACHED, cuStreamDestroy excepted, and captures on them
// are invalidated. Which one a program meets depends on the driver, not the toolkit it was built
// with: this order is right on both.
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

// One group from the split is the latency partition; `remaining` holds the SMs the group did not
// take, and a descriptor is made of it as of any group. The reference gives the remainder fewer
// guarantees than a group ("its use should be carefully planned"): it suits the batch kernels of
// the throughput partition, which need no co-scheduled SMs. Everything is made on dev, whatever
// context is current. If anything fails half way, what was made is destroyed before the exception
// leaves the constructor (no destructor runs for it then).
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
    // "Destroying a context takes its streams along": only the green contexts.
    for (CUgreenCtx* g : {&latency_, &throughput_})
      if (*g) cuGreenCtxDestroy(*g);
    throw;
  }
}

Partitions::~Partitions() { destroy(latencyStream_, throughputStream_, latency_, throughput_); }
#endif

}  // namespace ex16

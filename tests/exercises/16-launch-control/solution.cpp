// Reference solutions of lesson 16's exercises.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex16 {

// The limit is the device's opt-in shared memory per block minus what the kernel declares
// statically: the reference's rule for the attribute. The attribute only ever goes up, and only when
// this launch needs it to: a raise is a call that changes the function for every later launch.
void launchWithSharedMemory(CUfunction f, unsigned blocks, unsigned threads, size_t sharedBytes, void** args,
                            CUstream stream) {
  CUdevice dev = 0;
  CU_CHECK(cuCtxGetDevice(&dev));
  int optIn = 0, staticBytes = 0, allowed = 0;
  CU_CHECK(cuDeviceGetAttribute(&optIn, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
  CU_CHECK(cuFuncGetAttribute(&staticBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
  CU_CHECK(cuFuncGetAttribute(&allowed, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
  const size_t limit = static_cast<size_t>(optIn - staticBytes);
  if (sharedBytes > limit)
    throw std::length_error("launchWithSharedMemory: " + std::to_string(sharedBytes) +
                            " bytes of dynamic shared memory asked for; this kernel can have at most " +
                            std::to_string(limit) + " bytes on this device");
  if (sharedBytes > static_cast<size_t>(allowed))
    CU_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(sharedBytes)));
  CU_CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, static_cast<unsigned>(sharedBytes), stream, args, nullptr));
}

// The calculator tries block sizes itself and asks this function what each needs; it passes no
// user data, so what the function needs is a constant (or a variable it can see).
size_t CUDA_CB stageSharedBytes(int blockSize) {
  return static_cast<size_t>(blockSize) * kStageFloatsPerThread * sizeof(float);
}

int chooseStageBlockSize(CUfunction stage) {
  int minGrid = 0, blockSize = 0;
  CU_CHECK(cuOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, stage, stageSharedBytes, 0, 0));
  return blockSize;
}

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
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CU_CHECK(cuCtxPopCurrent(&ctx));
#endif
  return s;
}

// Streams first: cuGreenCtxDestroy does not destroy them, and after it they cannot be destroyed.
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
// take, and a descriptor is made of it as of any group. If anything fails half way, what was made
// is destroyed before the exception leaves the constructor (no destructor runs for it then).
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

// Deliberately wrong variants of lesson 16's exercises: each check must fail on them.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex16 {

// Wrong: "the device's opt-in limit is the limit": it compares the request with
// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN and forgets the kernel's static shared
// memory. A request just past what the kernel may have is not refused: cuFuncSetAttribute is asked
// for more than the opt-in limit minus the static shared memory, fails, and CU_CHECK throws
// wb::DriverError instead of std::length_error, so the check's `refused` stays false.
void launchWithSharedMemory(CUfunction f, unsigned blocks, unsigned threads, size_t sharedBytes, void** args,
                            CUstream stream) {
  CUdevice dev = 0;
  CU_CHECK(cuCtxGetDevice(&dev));
  int optIn = 0, allowed = 0;
  CU_CHECK(cuDeviceGetAttribute(&optIn, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
  CU_CHECK(cuFuncGetAttribute(&allowed, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
  if (sharedBytes > static_cast<size_t>(optIn))
    throw std::length_error("launchWithSharedMemory: " + std::to_string(sharedBytes) + " bytes asked for, at most " +
                            std::to_string(optIn) + " bytes on this device");
  if (sharedBytes > static_cast<size_t>(allowed))
    CU_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(sharedBytes)));
  CU_CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, static_cast<unsigned>(sharedBytes), stream, args, nullptr));
}

// Wrong: "the calculator takes the shared memory as a number": it passes the bytes one thread needs
// as the constant dynamicSMemSize, so the calculator counts 160 bytes per block at every size and
// suggests the largest block. With the shared memory that block really needs, an SM holds fewer
// threads of stage than with a smaller block: `threadsAt(chosen) == best` fails.
int chooseStageBlockSize(CUfunction stage) {
  int minGrid = 0, blockSize = 0;
  CU_CHECK(cuOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, stage, nullptr, kStageFloatsPerThread * sizeof(float), 0));
  return blockSize;
}

#if CUDA_VERSION >= 12040
namespace {

CUgreenCtx greenContextOn(CUdevice dev, CUdevResource& resource) {
  CUdevResourceDesc desc = nullptr;
  CU_CHECK(cuDevResourceGenerateDesc(&desc, &resource, 1));
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

}  // namespace

// Wrong: "the throughput work may use the whole GPU": the throughput green context is made from the
// device's whole SM resource instead of the split's remaining one. The two partitions then share
// the latency partition's SMs: the SM counts add up to more than the device has (`latency +
// throughput == device` fails), the kernels' SMs overlap, and a kernel holding the whole throughput
// partition holds every SM, so the latency kernel waits until the holder gives up
// (`holding.count(1) == blocks` fails). Where the driver refuses a descriptor of the whole device,
// the constructor throws instead, and the check fails there.
Partitions::Partitions(CUdevice dev, unsigned latencySms) {
  CUdevResource whole{}, group{};
  CU_CHECK(cuDeviceGetDevResource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM));
  unsigned groups = 1;
  CU_CHECK(cuDevSmResourceSplitByCount(&group, &groups, &whole, nullptr, 0, latencySms));
  latency_ = greenContextOn(dev, group);
  throughput_ = greenContextOn(dev, whole);
  latencyStream_ = streamIn(latency_);
  throughputStream_ = streamIn(throughput_);
}

Partitions::~Partitions() {
  if (latencyStream_) cuStreamDestroy(latencyStream_);
  if (throughputStream_) cuStreamDestroy(throughputStream_);
  if (latency_) cuGreenCtxDestroy(latency_);
  if (throughput_) cuGreenCtxDestroy(throughput_);
}
#endif

}  // namespace ex16

// The checks of lesson 16's exercises (lessons/16-launch-control/exercises.cpp). The kernels are
// those of kernels/launch_control.cu, loaded afresh for each case, so every case starts with the
// attributes the image gives them. The partition check holds a partition full with a kernel that
// waits on a gate the check opens: nothing sleeps, and the holder gives up at its deadline, so a
// wrong partition costs seconds, never a hang.
#include "check.hpp"
#include "lesson16_launch_control.hpp"
#include "gate.hpp"
#include "16-launch-control/exercises.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using l16::blocksPerSm;
using l16::funcAttribute;
using l16::Holding;
using l16::Lab;
using l16::loadedHere;
using l16::smsOf;

// smem_sum's input (word i is i % 7 + 1), the sums of its two blocks, and the arguments for n words.
struct SumLaunch {
  wbt::DeviceBuffer words, sums{2 * sizeof(unsigned)};
  CUdeviceptr wordsPtr = 0, sumsPtr = 0;
  unsigned n = 0;
  void* args[3] = {&wordsPtr, &n, &sumsPtr};
  explicit SumLaunch(size_t capacity) : words(capacity * sizeof(unsigned)) {
    std::vector<unsigned> host(capacity);
    for (size_t i = 0; i < capacity; ++i) host[i] = static_cast<unsigned>(i % 7 + 1);
    CU_CHECK(cuMemcpyHtoD(words.get(), host.data(), capacity * sizeof(unsigned)));
    wordsPtr = words.get(), sumsPtr = sums.get();
  }
  // The arguments for a launch over the first `bytes / 4` words.
  void** over(size_t bytes) {
    n = static_cast<unsigned>(bytes / sizeof(unsigned));
    CU_CHECK(cuMemsetD32(sums.get(), 0, 2));
    return args;
  }
  bool sumsRight() const {
    CU_CHECK(cuCtxSynchronize());
    unsigned got[2] = {0, 0}, want = 0;
    CU_CHECK(cuMemcpyDtoH(got, sums.get(), sizeof got));
    for (unsigned i = 0; i < n; ++i) want += i % 7 + 1;
    return got[0] == want && got[1] == want;
  }
};

#if CUDA_VERSION >= 12040
unsigned smsOfGreen(CUgreenCtx green) {
  CUdevResource r{};
  CU_CHECK(cuGreenCtxGetDevResource(green, &r, CU_DEV_RESOURCE_TYPE_SM));
  return r.sm.smCount;
}

// where and hold loaded into the green context before anything waits there.
void loadInto(const Lab& lab, CUgreenCtx green) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxFromGreenCtx(&ctx, green));
  CU_CHECK(cuCtxPushCurrent(ctx));
  for (const char* name : {"where", "hold"}) loadedHere(lab.kernel(name));
  CU_CHECK(cuCtxPopCurrent(&ctx));
}
#endif

}  // namespace

EXERCISE("shared-memory-launch", "A launch whose shared memory is known only at run time",
         "The device: cuCtxGetDevice. The limit: CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN minus "
         "cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES): the static shared memory counts against it. Above "
         "the limit throw std::length_error before any call that changes something. Read "
         "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, cuFuncSetAttribute it to sharedBytes only when it is "
         "smaller, then cuLaunchKernel with sharedBytes.") {
  TEST_CASE("16 KiB: the launch runs and sums right, and MAX_DYNAMIC_SHARED_SIZE_BYTES is left as it was") {
    Lab lab;
    const CUfunction f = lab.fn("smem_sum");
    const int before = funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    SumLaunch sum(16 << 10);
    ex16::launchWithSharedMemory(f, 2, 256, 16 << 10, sum.over(16 << 10), nullptr);
    CHECK(sum.sumsRight());
    CHECK_MESSAGE(funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == before,
                  "the attribute changed for a launch that did not need it to");
  }

  TEST_CASE("past the default, at 100 KiB and at exactly the limit: each launch runs and sums right, and the attribute allows at least what it asked") {
    Lab lab;
    const CUfunction f = lab.fn("smem_sum");
    const int byDefault = funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    const int limit = lab.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) -
                      funcAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    SumLaunch sum(static_cast<size_t>(limit) / sizeof(unsigned));
    std::vector<int> sizes;
    for (int bytes : {byDefault + 1024, 100 << 10, limit})
      if (bytes > byDefault && bytes <= limit && (sizes.empty() || bytes > sizes.back())) sizes.push_back(bytes);
    for (int bytes : sizes) {
      CAPTURE(bytes);
      ex16::launchWithSharedMemory(f, 2, 256, static_cast<size_t>(bytes), sum.over(static_cast<size_t>(bytes)), nullptr);
      CHECK(sum.sumsRight());
      CHECK(funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) >= bytes);
    }
  }

  TEST_CASE("4 bytes past the limit: std::length_error naming both numbers, and the attribute as it was") {
    Lab lab;
    const CUfunction f = lab.fn("smem_sum");
    const int before = funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    const int limit = lab.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) -
                      funcAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    const size_t tooMuch = static_cast<size_t>(limit) + 4;
    SumLaunch sum(tooMuch / sizeof(unsigned));
    bool refused = false;
    std::string message;
    try {
      ex16::launchWithSharedMemory(f, 2, 256, tooMuch, sum.over(tooMuch), nullptr);
    } catch (const std::length_error& e) {
      refused = true;
      message = e.what();
    }
    CAPTURE(message);
    CHECK_MESSAGE(refused, "no std::length_error for more than the kernel can ever have");
    CHECK(message.find(std::to_string(tooMuch)) != std::string::npos);
    CHECK(message.find(std::to_string(limit)) != std::string::npos);
    CHECK_MESSAGE(funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == before,
                  "the refused launch changed the attribute");
  }
}

EXERCISE("block-size", "A block size from the occupancy calculator, when shared memory grows with the block",
         "cuOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, stage, perBlock, 0, 0) with a function "
         "size_t CUDA_CB perBlock(int blockSize) that returns blockSize * kStageFloatsPerThread * sizeof(float). "
         "Passing the bytes of one thread as the constant dynamicSMemSize tells the calculator every block needs "
         "that little, and it suggests the largest block.") {
  TEST_CASE("whole warps within stage's maximum, as many threads per SM as any other size, and stage computes right with it") {
    Lab lab;
    const CUfunction stage = lab.fn("stage");
    const int limit = lab.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) -
                      funcAttribute(stage, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    CU_CHECK(cuFuncSetAttribute(stage, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, limit));
    const int chosen = ex16::chooseStageBlockSize(stage);
    const int warp = lab.attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    const int most = funcAttribute(stage, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    const auto need = [](int size) { return static_cast<size_t>(size) * ex16::kStageFloatsPerThread * sizeof(float); };
    const auto threadsAt = [&](int size) { return blocksPerSm(stage, size, need(size)) * size; };
    CAPTURE(chosen);
    REQUIRE(chosen > 0);
    CHECK(chosen % warp == 0);
    REQUIRE(chosen <= most);
    REQUIRE(need(chosen) <= static_cast<size_t>(limit));
    int best = 0, bestSize = 0;
    for (int size = warp; size <= most && need(size) <= static_cast<size_t>(limit); size += warp)
      if (threadsAt(size) > best) best = threadsAt(size), bestSize = size;
    CAPTURE(best);
    CAPTURE(bestSize);
    CHECK_MESSAGE(threadsAt(chosen) == best, "another block size keeps more threads of stage on an SM");

    const unsigned n = 10000, size = static_cast<unsigned>(chosen), blocks = (n + size - 1) / size;
    std::vector<float> in(n);
    for (unsigned i = 0; i < n; ++i) in[i] = static_cast<float>(i % 100);
    wbt::DeviceBuffer input(n * sizeof(float)), output(n * sizeof(float));
    CU_CHECK(cuMemcpyHtoD(input.get(), in.data(), n * sizeof(float)));
    CUdeviceptr inPtr = input.get(), outPtr = output.get();
    unsigned count = n, floats = ex16::kStageFloatsPerThread;
    void* args[] = {&inPtr, &outPtr, &count, &floats};
    CU_CHECK(cuLaunchKernel(stage, blocks, 1, 1, size, 1, 1, static_cast<unsigned>(need(chosen)), nullptr, args, nullptr));
    std::vector<float> out(n);
    CU_CHECK(cuMemcpyDtoH(out.data(), output.get(), n * sizeof(float)));
    unsigned wrong = 0;
    for (unsigned i = 0; i < n; ++i) {
      const unsigned j = i / size * size + (i % size + 1) % size;  // the next thread of the same block
      const float want = j < n ? floats * in[j] + floats * (floats - 1) / 2.0f : 0.0f;
      wrong += out[i] != want;
    }
    CHECK_MESSAGE(wrong == 0, "elements stage computed wrong with the block size and its shared memory");
  }
}

EXERCISE("partitions", "A latency partition beside a throughput partition",
         "cuDeviceGetDevResource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM); cuDevSmResourceSplitByCount(&group, &one, "
         "&whole, &remaining, 0, latencySms) with one = 1; for each of group and remaining: cuDevResourceGenerateDesc, "
         "cuGreenCtxCreate(..., CU_GREEN_CTX_DEFAULT_STREAM), cuGreenCtxStreamCreate(..., CU_STREAM_NON_BLOCKING, 0). "
         "The throughput partition is `remaining`, not the whole device. Destroy the streams before the green "
         "contexts.") {
  TEST_CASE("the latency partition has at least 16 SMs and the two the device's between them, each stream is its own partition's, each kernel stays on its partition's SMs, and a full throughput partition does not hold up the latency stream") {
#if CUDA_VERSION >= 12040
    Lab lab;
    ex16::Partitions parts(lab.dev(), 16);
    CUdevResource whole{};
    CU_CHECK(cuDeviceGetDevResource(lab.dev(), &whole, CU_DEV_RESOURCE_TYPE_SM));
    const unsigned latency = smsOfGreen(parts.latency()), throughput = smsOfGreen(parts.throughput());
    CAPTURE(latency);
    CAPTURE(throughput);
    CHECK(latency >= 16);
    CHECK(throughput > 0);
    CHECK_MESSAGE(latency + throughput == whole.sm.smCount, "the partitions do not hold the device's SMs once each");
    CUgreenCtx owner = nullptr;
    CU_CHECK(cuStreamGetGreenCtx(parts.latencyStream(), &owner));
    CHECK(owner == parts.latency());
    CU_CHECK(cuStreamGetGreenCtx(parts.throughputStream(), &owner));
    CHECK(owner == parts.throughput());
    REQUIRE(parts.latency() != nullptr);
    REQUIRE(parts.throughput() != nullptr);

    loadInto(lab, parts.latency());
    loadInto(lab, parts.throughput());
    const CUfunction where = reinterpret_cast<CUfunction>(lab.kernel("where"));  // in the stream's context
    const CUfunction hold = reinterpret_cast<CUfunction>(lab.kernel("hold"));
    wb::PinnedWords smOf(64 * size_t{whole.sm.smCount});
    const std::set<unsigned> inLatency = smsOf(where, parts.latencyStream(), 64 * latency, smOf);
    const std::set<unsigned> inThroughput = smsOf(where, parts.throughputStream(), 64 * throughput, smOf);
    std::vector<unsigned> shared;
    std::set_intersection(inLatency.begin(), inLatency.end(), inThroughput.begin(), inThroughput.end(),
                          std::back_inserter(shared));
    CHECK(inLatency.size() <= latency);
    CHECK(inThroughput.size() <= throughput);
    CHECK_MESSAGE(shared.empty(), "SMs that ran kernels of both partitions");
    if (wb::underSanitizer()) {
      MESSAGE("the full throughput partition is left out under compute-sanitizer, which runs one kernel at a time");
      return;
    }

    // The throughput partition full: every thread of its SMs held, where that block size exists.
    const int smThreads = lab.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    const int warp = lab.attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    const CUfunction holdHere = lab.fn("hold");  // for the occupancy calculator
    unsigned threads = 256, perSm = static_cast<unsigned>(blocksPerSm(holdHere, 256, 0));
    for (int t = funcAttribute(holdHere, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) / warp * warp; t >= warp; t -= warp)
      if (blocksPerSm(holdHere, t, 0) * t == smThreads) {
        threads = static_cast<unsigned>(t), perSm = static_cast<unsigned>(blocksPerSm(holdHere, t, 0));
        break;
      }
    const unsigned blocks = perSm * throughput;
    Holding holding(hold, parts.throughputStream(), blocks, threads, 2.0);
    REQUIRE(holding.allArrived(5.0));
    smsOf(where, parts.latencyStream(), 64 * latency, smOf);
    CHECK_MESSAGE(holding.count(1) == blocks,
                  "the latency stream's kernel ran only once the throughput partition's holder had given up");
#else
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": green contexts need 12.4 or newer");
#endif
  }
}

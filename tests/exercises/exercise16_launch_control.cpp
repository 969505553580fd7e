// The checks of lesson 16's exercises (lessons/16-launch-control/exercises.cpp). The kernels are
// those of kernels/launch_control.cu, loaded afresh for each case, so every case starts with the
// attributes the image gives them. Pending work comes from gates the check opens (lesson 09's gate
// kernel, and the hold kernel that keeps a partition full): nothing sleeps, and every gate gives up
// at its deadline, so a wrong answer costs seconds, never a hang. What the code holds afterwards,
// which calls it made and what it does when a driver call in its middle fails, the ledger says
// (tests/exercises/ledger.hpp).
#include "check.hpp"
#include "lesson16_launch_control.hpp"
#include "gate.hpp"
#include "16-launch-control/exercises.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

// Raising a function's attribute is a call the ledger does not stand before: failed here on demand.
WBX_INTERPOSE(cuFuncSetAttribute, (CUfunction f, CUfunction_attribute attribute, int value), (f, attribute, value))

namespace {

using l16::blocksPerSm;
using l16::funcAttribute;
using l16::Holding;
using l16::Lab;
using l16::loadedHere;
using l16::smsOf;

// The gate kernel of lesson 09 (streams.fatbin), loaded into the current context before any gate closes.
struct GateKernel {
  CUlibrary library = nullptr;
  CUfunction gate = nullptr;
  GateKernel() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    gate = wb::StreamKernels::load(library).gate;
  }
  ~GateKernel() { cuLibraryUnload(library); }
  GateKernel(const GateKernel&) = delete;
  GateKernel& operator=(const GateKernel&) = delete;
};

// smem_sum's input (word i is i % 7 + 1) in device memory of the current context, and the sums of
// its two blocks in pinned memory, which the host reads directly, also while a gate holds the stream.
struct SumLaunch {
  wbt::DeviceBuffer words;
  wb::PinnedWords sums{2};
  CUdeviceptr wordsPtr = 0, sumsPtr = 0;
  unsigned n = 0;
  void* args[3] = {&wordsPtr, &n, &sumsPtr};
  explicit SumLaunch(size_t capacity) : words(std::max<size_t>(capacity, 1) * sizeof(unsigned)) {
    std::vector<unsigned> host(std::max<size_t>(capacity, 1));
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned>(i % 7 + 1);
    CU_CHECK(cuMemcpyHtoD(words.get(), host.data(), host.size() * sizeof(unsigned)));
    CU_CHECK(cuCtxSynchronize());  // from pageable memory: landed before a non-blocking stream's launch reads it
    wordsPtr = words.get(), sumsPtr = sums.device(0);
  }
  // The arguments for a launch over the first `bytes / 4` words, the sums cleared.
  void** over(size_t bytes) {
    n = static_cast<unsigned>(bytes / sizeof(unsigned));
    sums.write(0, 0), sums.write(1, 0);
    return args;
  }
  bool written() const { return sums.read(0) != 0 || sums.read(1) != 0; }
  // Once the launch's stream has been synchronised.
  bool sumsRight() const {
    unsigned want = 0;
    for (unsigned i = 0; i < n; ++i) want += i % 7 + 1;
    return sums.read(0) == want && sums.read(1) == want;
  }
};

// The most dynamic shared memory f can ever have on the device: the opt-in limit minus its static shared memory.
int sharedLimit(const Lab& lab, CUfunction f) {
  return lab.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) -
         funcAttribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
}

int maxDynamic(CUfunction f) { return funcAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); }

// Every launch the process has made through the two launch calls the task allows.
long launchCalls() { return wbx::calls("cuLaunchKernel") + wbx::calls("cuLaunchKernelEx"); }

// What launchWithSharedMemory did with a request the device can never give: whether it threw
// std::length_error and with what message, whether it launched, and the attribute afterwards.
struct Refusal {
  bool refused = false, launched = false;
  std::string message;
  int attributeAfter = 0;
};

Refusal askTooMuch(CUfunction f, size_t bytes) {
  SumLaunch sum(1);
  void** args = sum.over(0);  // n = 0: a launch that should not have been made still touches nothing
  Refusal r;
  const long launches = launchCalls();
  try {
    ex16::launchWithSharedMemory(f, 2, 256, bytes, args, nullptr);
  } catch (const std::length_error& e) {
    r.refused = true;
    r.message = e.what();
  }
  CU_CHECK(cuCtxSynchronize());
  r.launched = launchCalls() != launches;
  r.attributeAfter = maxDynamic(f);
  return r;
}

#if CUDA_VERSION >= 12040
constexpr unsigned kLatencySms = 16;

// dev's SMs, where the device has green contexts and SMs enough for two partitions; otherwise the
// exercise cannot be checked here, and says why.
CUdevResource splittableSms(CUdevice dev) {
  CUdevResource whole{};
  const CUresult rc = cuDeviceGetDevResource(dev, &whole, CU_DEV_RESOURCE_TYPE_SM);
  if (rc != CUDA_SUCCESS)
    throw wbx::Skipped("device " + std::to_string(dev) + " has no green contexts (cuDeviceGetDevResource: " +
                       wb::errorName(rc) + ")");
  if (whole.sm.smCount < 2 * kLatencySms)
    throw wbx::Skipped("device " + std::to_string(dev) + " has " + std::to_string(whole.sm.smCount) +
                       " SMs: too few for a partition of " + std::to_string(kLatencySms) + " and another beside it");
  return whole;
}

unsigned smsOfGreen(CUgreenCtx green) {
  CUdevResource r{};
  CU_CHECK(cuGreenCtxGetDevResource(green, &r, CU_DEV_RESOURCE_TYPE_SM));
  return r.sm.smCount;
}

CUdevice deviceOf(CUgreenCtx green) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxFromGreenCtx(&ctx, green));
  wbt::Pushed in(ctx);
  CUdevice dev = -1;
  CU_CHECK(cuCtxGetDevice(&dev));
  return dev;
}

CUgreenCtx ownerOf(CUstream s) {
  CUgreenCtx owner = nullptr;
  CU_CHECK(cuStreamGetGreenCtx(s, &owner));  // NULL for a stream of an ordinary context
  return owner;
}

bool nonBlocking(CUstream s) {
  unsigned flags = 0;
  CU_CHECK(cuStreamGetFlags(s, &flags));
  return (flags & CU_STREAM_NON_BLOCKING) != 0;
}

// where and hold loaded into the green context before anything waits there.
void loadInto(const Lab& lab, CUgreenCtx green) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxFromGreenCtx(&ctx, green));
  wbt::Pushed in(ctx);
  for (const char* name : {"where", "hold"}) loadedHere(lab.kernel(name));
}

// Puts the thread's context stack back as it was (top first), after code that left it changed, so
// that the checks after it run where they should.
void restoreStack(const std::vector<CUcontext>& stack) {
  CUcontext popped = nullptr;
  while (wbt::current()) CU_CHECK(cuCtxPopCurrent(&popped));
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) CU_CHECK(cuCtxPushCurrent(*it));
}

// Whether the caller's stack is as it was; if not, it is put back.
bool stackKept(const std::vector<CUcontext>& stack) {
  if (wbx::contextStack() == stack) return true;
  restoreStack(stack);
  return false;
}

// What a Partitions construction left when the nth call of `entry` from its start failed.
struct FailedConstruction {
  bool fired = false, threw = false, stackKept = true;
  std::string left;
};

FailedConstruction constructFailing(CUdevice dev, const char* entry, unsigned nth) {
  FailedConstruction r;
  const std::vector<CUcontext> stack = wbx::contextStack();
  const wbx::Holdings before = wbx::holdings();
  {
    wbx::FailCall fail(entry, CUDA_ERROR_OUT_OF_MEMORY, nth);
    try {
      ex16::Partitions parts(dev, kLatencySms);
    } catch (const wb::NotDone&) {
      throw;
    } catch (const std::exception&) {
      r.threw = true;
    }
    r.fired = fail.fired();
  }
  r.stackKept = stackKept(stack);
  r.left = wbx::holdings().differenceFrom(before);
  return r;
}
#endif

}  // namespace

EXERCISE("shared-memory-launch", "A launch whose shared memory is known only at run time",
         "The device: cuCtxGetDevice. The limit: CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN minus "
         "cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES): the static shared memory counts against it. Compare "
         "sharedBytes as a size_t, and above the limit throw std::length_error (std::to_string of both numbers) before "
         "any call that changes something. Read CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES of f every time, "
         "cuFuncSetAttribute it to sharedBytes only when it is smaller, then cuLaunchKernel in stream with sharedBytes.") {
  TEST_CASE("R1 R2 R3: 16 KiB in a stream held by a gate: the call returns at once, the kernel runs behind the stream's earlier work and sums right, and MAX_DYNAMIC_SHARED_SIZE_BYTES is left as it was") {
    Lab lab;
    GateKernel gates;
    const CUfunction f = lab.fn("smem_sum");
    const int before = maxDynamic(f);
    SumLaunch sum((16 << 10) / sizeof(unsigned));
    wbt::Stream s;
    const bool gated = !wb::underSanitizer();
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    bool early = false;
    {
      std::unique_ptr<wb::Gate> gate;
      if (gated) gate = std::make_unique<wb::Gate>(gates.gate, s.get(), 2.0);  // a call that waits, waits 2 s at most
      ex16::launchWithSharedMemory(f, 2, 256, 16 << 10, sum.over(16 << 10), s.get());
      if (gate) {
        seen = gate->outcome();
        // The legacy stream does not wait for the check's non-blocking stream: a kernel launched
        // there has run once it is synchronised, while the gate still holds the stream given.
        CU_CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));
        early = sum.written();
        gate->open();
      }
      s.sync();
    }
    if (gated) {
      CHECK_MESSAGE(seen == wb::Gate::Waiting, "the function waited for the stream: it must only launch");
      CHECK_MESSAGE(!early, "the kernel ran before the work already in the stream: launch in the stream given");
    }
    CHECK(sum.sumsRight());
    CHECK_MESSAGE(maxDynamic(f) == before, "the attribute changed for a launch that did not need it to");
  }

  TEST_CASE("R1 R3: past the default, at 100 KiB and at exactly the limit: each launch runs and sums right, the attribute allows at least what it asked, and a smaller launch afterwards never lowers it") {
    Lab lab;
    const CUfunction f = lab.fn("smem_sum");
    const int byDefault = maxDynamic(f);
    const int limit = sharedLimit(lab, f);
    SumLaunch sum(static_cast<size_t>(limit) / sizeof(unsigned));
    wbt::Stream s;
    std::vector<int> sizes;
    for (int bytes : {byDefault + 1024, 100 << 10, limit})
      if (bytes > byDefault && bytes <= limit && (sizes.empty() || bytes > sizes.back())) sizes.push_back(bytes);
    for (int bytes : sizes) {
      CAPTURE(bytes);
      ex16::launchWithSharedMemory(f, 2, 256, static_cast<size_t>(bytes), sum.over(static_cast<size_t>(bytes)), s.get());
      s.sync();
      CHECK(sum.sumsRight());
      CHECK(maxDynamic(f) >= bytes);
    }
    const int raised = maxDynamic(f);
    const size_t smaller = static_cast<size_t>(byDefault) + 1024;
    ex16::launchWithSharedMemory(f, 2, 256, smaller, sum.over(smaller), s.get());
    s.sync();
    CHECK(sum.sumsRight());
    CHECK_MESSAGE(maxDynamic(f) == raised, "a launch that needed less than the attribute allowed changed it: never lower it");
  }

  TEST_CASE("R5 R6: 4 bytes past the limit: std::length_error naming both numbers, nothing launched, and the attribute as it was") {
    Lab lab;
    const CUfunction f = lab.fn("smem_sum");
    const int before = maxDynamic(f);
    const int limit = sharedLimit(lab, f);
    const size_t tooMuch = static_cast<size_t>(limit) + 4;
    const Refusal r = askTooMuch(f, tooMuch);
    CAPTURE(r.message);
    CHECK_MESSAGE(r.refused, "no std::length_error for more than the kernel can ever have");
    CHECK_MESSAGE(r.message.find(std::to_string(tooMuch)) != std::string::npos, "the message does not name the bytes asked for, in bytes");
    CHECK_MESSAGE(r.message.find(std::to_string(limit)) != std::string::npos, "the message does not name the limit, in bytes");
    CHECK_MESSAGE(!r.launched, "the refused request was launched");
    CHECK_MESSAGE(r.attributeAfter == before, "the refused request changed the attribute");
  }

  TEST_CASE("R5 R6: a size past 32 bits (4 GiB + 16 KiB): std::length_error naming both numbers, nothing launched, and the attribute as it was") {
    Lab lab;
    const CUfunction f = lab.fn("smem_sum");
    const int before = maxDynamic(f);
    const int limit = sharedLimit(lab, f);
    const size_t huge = (size_t{1} << 32) + (16 << 10);  // its low 32 bits are 16 KiB
    const Refusal r = askTooMuch(f, huge);
    CAPTURE(r.message);
    CHECK_MESSAGE(r.refused, "no std::length_error for 4 GiB + 16 KiB: a comparison in 32 bits sees 16 KiB");
    CHECK(r.message.find(std::to_string(huge)) != std::string::npos);
    CHECK(r.message.find(std::to_string(limit)) != std::string::npos);
    CHECK_MESSAGE(!r.launched, "the refused request was launched");
    CHECK_MESSAGE(r.attributeAfter == before, "the refused request changed the attribute");
  }

  TEST_CASE("R1 R4 R8: after a launch of the primary context's function, the same kernel's function in a context of the check's own (on the last device): the launch gets its shared memory there too, and the caller's context stack and holdings are as they were") {
    Lab lab;
    const CUfunction inPrimary = lab.fn("smem_sum");
    const size_t bytes = std::min<size_t>(100 << 10, static_cast<size_t>(sharedLimit(lab, inPrimary)));  // past the default
    SumLaunch first(bytes / sizeof(unsigned));
    ex16::launchWithSharedMemory(inPrimary, 2, 256, bytes, first.over(bytes), nullptr);
    CU_CHECK(cuCtxSynchronize());
    CHECK(first.sumsRight());

    const int devices = wbt::initDriver();
    wbt::OwnedContext own(wbt::device(devices - 1));  // pushed: current, not a primary context
    const CUfunction inOwn = loadedHere(lab.kernel("smem_sum"));
    SumLaunch second(bytes / sizeof(unsigned));
    const std::vector<CUcontext> stack = wbx::contextStack();
    const wbx::Holdings before = wbx::holdings();
    ex16::launchWithSharedMemory(inOwn, 2, 256, bytes, second.over(bytes), nullptr);
    const std::vector<CUcontext> stackAfter = wbx::contextStack();
    const std::string left = wbx::holdings().differenceFrom(before);
    CU_CHECK(cuCtxSynchronize());
    CHECK_MESSAGE(second.sumsRight(), "the launch in the second context did not sum right");
    CHECK_MESSAGE(static_cast<size_t>(maxDynamic(inOwn)) >= bytes,
                  "the second context's function was not raised: the attribute belongs to each function, read it every time");
    CHECK_MESSAGE(stackAfter == stack, "the caller's context stack changed");
    CAPTURE(left);
    CHECK_MESSAGE(left.empty(), "the function left something held");
  }

  TEST_CASE("R7: a raise of the attribute or a launch that the driver fails throws wb::DriverError") {
    Lab lab;
    const size_t bytes = std::min<size_t>(100 << 10, static_cast<size_t>(sharedLimit(lab, lab.fn("smem_sum"))));
    struct Failure {
      const char* entry;
      const char* otherEntry;  // the same step through the other call the task allows
      const char* what;
    };
    const Failure failures[] = {{"cuFuncSetAttribute", nullptr, "the raise of the attribute failed"},
                                {"cuLaunchKernel", "cuLaunchKernelEx", "the launch failed"}};
    for (const Failure& f : failures) {
      CAPTURE(f.what);
      bool fired = false, driverError = false;
      for (const char* entry : {f.entry, f.otherEntry}) {
        if (!entry || fired) continue;
        const CUfunction fn = loadedHere(lab.kernel("smem_sum"));  // the attribute at its default: a raise is due
        SumLaunch sum(bytes / sizeof(unsigned));
        wbx::FailCall fail(entry, CUDA_ERROR_INVALID_VALUE);  // fails without reaching the driver
        try {
          ex16::launchWithSharedMemory(fn, 2, 256, bytes, sum.over(bytes), nullptr);
        } catch (const wb::DriverError&) {
          driverError = true;
        }
        fired = fail.fired();
        CU_CHECK(cuCtxSynchronize());
      }
      CHECK_MESSAGE(fired, "the injected failure never reached the function: raise with cuFuncSetAttribute, launch "
                           "with cuLaunchKernel (or cuLaunchKernelEx)");
      if (fired) CHECK_MESSAGE(driverError, "the call failed and the function did not throw wb::DriverError");
    }
  }
}

EXERCISE("block-size", "A block size from the occupancy calculator, when shared memory grows with the block",
         "cuOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, stage, perBlock, 0, 0) with a function "
         "size_t CUDA_CB perBlock(int blockSize) that returns blockSize * kStageFloatsPerThread * sizeof(float). "
         "Passing the bytes of one thread as the constant dynamicSMemSize tells the calculator every block needs "
         "that little, and it suggests the largest block. Return blockSize as the calculator gave it.") {
  TEST_CASE("R1 R2: whole warps within stage's maximum, as many threads per SM as any other size, and stage computes right with it") {
    Lab lab;
    const CUfunction stage = lab.fn("stage");
    const int limit = sharedLimit(lab, stage);
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
         "cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), cuGreenCtxStreamCreate(&s, g, "
         "CU_STREAM_NON_BLOCKING, 0), which needs no context current. The throughput partition is `remaining`, not the "
         "whole device. Catch a failure half way, destroy what was made, rethrow. Destroy the streams before the green "
         "contexts.") {
  TEST_CASE("R1 R2 R3 R4 R6: on device 0 with its primary context current: the latency partition has at least 16 SMs and the two the device's between them, each stream is non-blocking and its own partition's, each kernel stays on its partition's SMs, the caller's context stack is as it was, and the destructor gives everything back") {
#if CUDA_VERSION >= 12040
    Lab lab;
    const CUdevResource whole = splittableSms(lab.dev());
    const std::vector<CUcontext> stack = wbx::contextStack();
    const wbx::Holdings before = wbx::holdings();
    {
      ex16::Partitions parts(lab.dev(), kLatencySms);
      CHECK_MESSAGE(stackKept(stack), "the constructor changed the caller's context stack: pop what you push");
      REQUIRE(parts.latency() != nullptr);
      REQUIRE(parts.throughput() != nullptr);
      const unsigned latency = smsOfGreen(parts.latency()), throughput = smsOfGreen(parts.throughput());
      CAPTURE(latency);
      CAPTURE(throughput);
      CHECK(latency >= kLatencySms);
      CHECK(throughput > 0);
      CHECK_MESSAGE(latency + throughput == whole.sm.smCount, "the partitions do not hold the device's SMs once each");
      CHECK_MESSAGE(ownerOf(parts.latencyStream()) == parts.latency(), "the latency stream is not the latency green context's");
      CHECK_MESSAGE(ownerOf(parts.throughputStream()) == parts.throughput(), "the throughput stream is not the throughput green context's");
      CHECK_MESSAGE(nonBlocking(parts.latencyStream()), "the latency stream is not non-blocking");
      CHECK_MESSAGE(nonBlocking(parts.throughputStream()), "the throughput stream is not non-blocking");

      loadInto(lab, parts.latency());
      loadInto(lab, parts.throughput());
      const CUfunction where = reinterpret_cast<CUfunction>(lab.kernel("where"));  // in the stream's context
      wb::PinnedWords smOf(64 * size_t{whole.sm.smCount});
      const std::set<unsigned> inLatency = smsOf(where, parts.latencyStream(), 64 * latency, smOf);
      const std::set<unsigned> inThroughput = smsOf(where, parts.throughputStream(), 64 * throughput, smOf);
      std::vector<unsigned> shared;
      std::set_intersection(inLatency.begin(), inLatency.end(), inThroughput.begin(), inThroughput.end(),
                            std::back_inserter(shared));
      CHECK(inLatency.size() <= latency);
      CHECK(inThroughput.size() <= throughput);
      CHECK_MESSAGE(shared.empty(), "SMs that ran kernels of both partitions");
    }
    const std::string left = wbx::holdings().differenceFrom(before);
    CAPTURE(left);
    CHECK_MESSAGE(left.empty(), "the destructor left something held: destroy both streams, then both green contexts");
#else
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": green contexts need 12.4 or newer");
#endif
  }

  // The device comes from dev, whatever context is current: device 1's partitions, made while
  // device 0's primary context is current.
  TEST_CASE("R2 R3: Partitions(device 1, 16), made while device 0's primary context is current: both green contexts are on device 1, with the device's SMs and a stream each") {
#if CUDA_VERSION >= 12040
    wbx::needDevices(2);  // one GPU: this case reports itself skipped, the rest still count
    Lab lab;
    const std::vector<CUcontext> stack = wbx::contextStack();
    const CUdevice other = wbt::device(1);
    wbt::RetainedPrimary active(other);  // the reference advises the primary context active before cuGreenCtxCreate
    const CUdevResource otherWhole = splittableSms(other);
    const wbx::Holdings beforeOther = wbx::holdings();
    {
      ex16::Partitions parts(other, kLatencySms);
      CHECK_MESSAGE(stackKept(stack), "the constructor changed the caller's context stack");
      REQUIRE(parts.latency() != nullptr);
      REQUIRE(parts.throughput() != nullptr);
      CHECK_MESSAGE(deviceOf(parts.latency()) == other, "Partitions(device 1) made its latency green context on another device");
      CHECK_MESSAGE(deviceOf(parts.throughput()) == other, "Partitions(device 1) made its throughput green context on another device");
      CHECK(smsOfGreen(parts.latency()) + smsOfGreen(parts.throughput()) == otherWhole.sm.smCount);
      CHECK(ownerOf(parts.latencyStream()) == parts.latency());
      CHECK(ownerOf(parts.throughputStream()) == parts.throughput());
    }
    const std::string leftOther = wbx::holdings().differenceFrom(beforeOther);
    CAPTURE(leftOther);
    CHECK(leftOther.empty());
#else
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": green contexts need 12.4 or newer");
#endif
  }

  TEST_CASE("R1: a kernel holding every thread of the throughput partition's SMs does not hold up a kernel in the latency stream") {
#if CUDA_VERSION >= 12040
    Lab lab;
    splittableSms(lab.dev());
    const std::vector<CUcontext> stack = wbx::contextStack();
    ex16::Partitions parts(lab.dev(), kLatencySms);
    stackKept(stack);  // a changed stack is the first case's finding; here it is only put back
    if (wb::underSanitizer())
      throw wbx::Skipped("compute-sanitizer runs no kernel beside a waiting one (lesson 09): a full partition cannot be held beside the other's kernel");
    // The throughput partition full: every thread of its SMs held, by a block size that takes them all.
    const int smThreads = lab.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    const int warp = lab.attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    const CUfunction holdHere = lab.fn("hold");  // for the occupancy calculator
    unsigned threads = 0, perSm = 0;
    for (int t = funcAttribute(holdHere, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) / warp * warp; t >= warp && !threads; t -= warp)
      if (blocksPerSm(holdHere, t, 0) * t == smThreads)
        threads = static_cast<unsigned>(t), perSm = static_cast<unsigned>(blocksPerSm(holdHere, t, 0));
    if (!threads) throw wbx::Skipped("no block size of hold takes every thread of an SM on this device: no partition can be held full");
    REQUIRE(parts.latency() != nullptr);
    REQUIRE(parts.throughput() != nullptr);
    const unsigned latency = smsOfGreen(parts.latency()), throughput = smsOfGreen(parts.throughput());
    loadInto(lab, parts.latency());
    loadInto(lab, parts.throughput());
    const CUfunction where = reinterpret_cast<CUfunction>(lab.kernel("where"));
    const CUfunction hold = reinterpret_cast<CUfunction>(lab.kernel("hold"));
    wb::PinnedWords smOf(64 * size_t{latency});  // allocated before anything waits (lesson16_launch_control.hpp)
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

  TEST_CASE("R4 R5: the second green context, or the first or the second stream, cannot be made: the constructor throws, destroys what it made, and leaves the caller's context stack as it was") {
#if CUDA_VERSION >= 12040
    Lab lab;
    splittableSms(lab.dev());
    struct Failure {
      const char* entry;
      const char* otherEntry;  // the same step through the other call the task allows
      unsigned nth;
      const char* what;
    };
    const Failure failures[] = {{"cuGreenCtxCreate", nullptr, 2, "the second cuGreenCtxCreate failed"},
                                {"cuGreenCtxStreamCreate", "cuStreamCreate", 1, "the first stream could not be made"},
                                {"cuGreenCtxStreamCreate", "cuStreamCreate", 2, "the second stream could not be made"}};
    for (const Failure& f : failures) {
      CAPTURE(f.what);
      FailedConstruction r = constructFailing(lab.dev(), f.entry, f.nth);
      if (!r.fired && f.otherEntry) r = constructFailing(lab.dev(), f.otherEntry, f.nth);
      CHECK_MESSAGE(r.fired, "the injected failure never reached the constructor: make the green contexts with "
                             "cuGreenCtxCreate and the streams with cuGreenCtxStreamCreate (or cuStreamCreate)");
      if (!r.fired) continue;
      CHECK_MESSAGE(r.threw, "the constructor did not throw when a driver call failed");
      CAPTURE(r.left);
      CHECK_MESSAGE(r.left.empty(), "the failed constructor left what it had made: destroy it before rethrowing");
      CHECK_MESSAGE(r.stackKept, "the failed constructor left the caller's context stack changed");
    }
#else
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": green contexts need 12.4 or newer");
#endif
  }
}

// Lesson 27: stream memory operations.
//
// What you learn: how a host thread, another stream or another process lets work in a stream go
// on without a kernel or an event, the way communication proxies do: cuStreamWaitValue32/64 hold a
// stream until a word of memory meets a condition (GEQ, a cyclic greater-or-equal; EQ; AND; NOR
// where CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR says so; the FLUSH flag where
// CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES says so), and cuStreamWriteValue32/64 write a word in
// stream order (with the fence the reference describes, or asked without it). The flag may live in
// mapped host memory (the host writes it) or in device memory (another stream writes it).
// cuStreamBatchMemOp puts several in one call; cuGraphAddBatchMemOpNode puts them in a graph.
// CUDA 13.1's atomic reduction operation is described as documented: driver 580 (CUDA 13.0) has none.
// Last, the time from a host write to the stream's next kernel starting: through a wait-value,
// through the gate kernel of lesson 09, and through the host launching it (after an event it
// records, or after synchronising), in one run.
//
// Nothing here can leave the device waiting: every wait is released by the host before the program
// waits for its stream (a Hold releases it on every path), and every wait the program makes is
// bounded.
//
// APIs: cuStreamWaitValue32, cuStreamWaitValue64, cuStreamWriteValue32, cuStreamWriteValue64,
//       cuStreamBatchMemOp, cuGraphAddBatchMemOpNode, cuGraphExecBatchMemOpNodeSetParams,
//       cuGraphNodeGetType, cuDeviceGetAttribute, cuDriverGetVersion, cuStreamQuery
// Run:  ctest -R lesson27   (or build/lessons/lesson27-stream-memory-ops [--csv lesson27-figure.csv])
#include "figure.hpp"
#include "gate.hpp"
#include "needs.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

CUstream newStream() {
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  return s;
}

// Polls cuStreamQuery for at most limitMs: whether the stream's work all ended. The program never
// calls cuStreamSynchronize on a stream whose flag it has not released.
bool endsWithin(CUstream s, double limitMs) {
  const wb::Stopwatch clock;
  for (;;) {
    const CUresult r = cuStreamQuery(s);
    if (r == CUDA_SUCCESS) return true;
    if (r != CUDA_ERROR_NOT_READY) CU_CHECK(r);
    if (clock.ms() > limitMs) return false;
  }
}

// Spins on a pinned word (no CUDA call) until it is non-zero, at most limitMs.
bool becomesNonZero(const wb::PinnedWords& w, size_t i, double limitMs) {
  const wb::Stopwatch clock;
  while (w.read(i) == 0)
    if (clock.ms() > limitMs) return false;
  return true;
}

//! [hold]
// A flag in mapped host memory that a stream waits on, and the value that releases the wait. The
// destructor writes that value and only then waits for the stream: a wait is released on every
// path, an exception's included, before anything waits for it.
class Hold {
 public:
  Hold(wb::PinnedWords& words, size_t index, unsigned releaseValue, CUstream s)
      : words_(words), index_(index), release_(releaseValue), s_(s) {}
  ~Hold() {
    release();
    cuStreamSynchronize(s_);
  }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  void release() { words_.write(index_, release_); }

 private:
  wb::PinnedWords& words_;
  size_t index_;
  unsigned release_;
  CUstream s_;
};
//! [hold]

struct Lab {
  wb::StreamKernels k;
  CUdeviceptr counter = 0;  // the stamps' counter, in device memory
  // Pinned words: [0] the flag, [1] "arrived", [2] the stamp's slot, [3] spare, [4..5] a 64-bit word.
  wb::PinnedWords words{8};
  CUdeviceptr word64() const { return words.device(4); }
  unsigned long long read64() const {
    return static_cast<unsigned long long>(words.read(5)) << 32 | words.read(4);
  }
  // One stamp kernel in s: it writes the next number to the slot, words[2].
  void stamp(CUstream s) {
    CUdeviceptr slot = words.device(2);
    void* args[] = {&counter, &slot};
    CU_CHECK(cuLaunchKernel(k.stamp, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
  }
};

struct Support {
  int nor = 0, bits64 = 0, flush = 0;
};

//! [attributes]
Support support(CUdevice dev) {
  Support s;
  CU_CHECK(cuDeviceGetAttribute(&s.nor, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, dev));
  CU_CHECK(cuDeviceGetAttribute(&s.bits64, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, dev));
  CU_CHECK(cuDeviceGetAttribute(&s.flush, CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, dev));
  std::printf("CAN_USE_STREAM_WAIT_VALUE_NOR %d, CAN_USE_64_BIT_STREAM_MEM_OPS %d, "
              "CAN_FLUSH_REMOTE_WRITES %d\n", s.nor, s.bits64, s.flush);
  return s;
}
//! [attributes]

struct Condition {
  const char* name;
  unsigned flags, waitFor, holding, releasing;
};

//! [conditions]
// For each condition: the flag set to a value that does not meet it, a wait and a stamp queued, the
// stream seen to reach the wait (a write queued before it lands), and the stamp seen not to run for
// 20 ms; then the host writes a value that meets it, and the stamp runs.
void conditions(Lab& lab, const Support& sup) {
  std::vector<Condition> cs = {
      {"GEQ (int32_t)(*addr - 5) >= 0", CU_STREAM_WAIT_VALUE_GEQ, 5, 4, 5},
      {"GEQ across the wrap: waits for 0xfffffffe", CU_STREAM_WAIT_VALUE_GEQ, 0xfffffffeu, 0xfffffffdu, 1},
      {"EQ *addr == 7", CU_STREAM_WAIT_VALUE_EQ, 7, 8, 7},
      {"AND (*addr & 0x4) != 0", CU_STREAM_WAIT_VALUE_AND, 0x4, 0x3, 0x5},
      {"NOR ~(*addr | 0xfffffff0) != 0", CU_STREAM_WAIT_VALUE_NOR, 0xfffffff0u, 0xf, 0x7}};
  //! [conditions]
  //! [conditions-2]
  CUstream s = newStream();
  for (const Condition& c : cs) {
    if (c.flags == CU_STREAM_WAIT_VALUE_NOR && !sup.nor) {
      std::printf("%-44s left out: CAN_USE_STREAM_WAIT_VALUE_NOR is 0 here\n", c.name);
      continue;
    }
    lab.words.write(0, c.holding);
    lab.words.write(1, 0);
    lab.words.write(2, 0);
    bool held = false, ran = false;
    {
      Hold hold(lab.words, 0, c.releasing, s);
      CU_CHECK(cuStreamWriteValue32(s, lab.words.device(1), 1, 0));
      CU_CHECK(cuStreamWaitValue32(s, lab.words.device(0), c.waitFor, c.flags));
      lab.stamp(s);
      const bool arrived = becomesNonZero(lab.words, 1, 2000);
      held = arrived && !becomesNonZero(lab.words, 2, 20);
      hold.release();
      ran = endsWithin(s, 2000) && lab.words.read(2) != 0;
    }
    std::printf("%-44s flag 0x%08x: kernel behind it held %-3s; flag 0x%08x: it ran %s\n", c.name, c.holding,
                held ? "yes" : "NO", c.releasing, ran ? "yes" : "NO");
    wb::expect(held && ran, std::string("the wait ") + c.name + " holding the stream until its condition met",
               held ? "the kernel did not run after the release"
                    : "the kernel ran while the flag did not meet it");
  }
  CU_CHECK(cuStreamDestroy(s));
}
//! [conditions-2]

//! [device-flag]
// A flag in device memory, written by another stream: stream b fills data and then writes the flag
// with cuStreamWriteValue32 (the default: a fence before the write); stream a waits for the flag and
// copies the data. The reference's fence means that a waiter that sees the flag sees the data.
void deviceFlag(Lab& lab, const Support& sup) {
  CUstream a = newStream(), b = newStream();
  CUdeviceptr mem = 0;
  constexpr unsigned n = 1 << 20;
  CU_CHECK(cuMemAlloc(&mem, 16 + 2 * n * sizeof(unsigned)));
  const CUdeviceptr flag = mem, flag64 = mem + 8, data = mem + 16, copy = data + n * sizeof(unsigned);
  CU_CHECK(cuMemsetD32(mem, 0, 4 + 2 * n));
  CU_CHECK(cuCtxSynchronize());
  CU_CHECK(cuStreamWaitValue32(a, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
  CU_CHECK(cuMemcpyDtoDAsync(copy, data, n * sizeof(unsigned), a));
  CU_CHECK(cuMemsetD32Async(data, 42, n, b));
  CU_CHECK(cuStreamWriteValue32(b, flag, 1, CU_STREAM_WRITE_VALUE_DEFAULT));
  const bool ended = endsWithin(a, 5000) && endsWithin(b, 5000);
  if (!ended) {  // release a from the host (a synchronous copy), so that nothing is left waiting
    const unsigned one = 1;
    CU_CHECK(cuMemcpyHtoD(flag, &one, sizeof one));
    endsWithin(a, 5000);
  }
  wb::expect(ended, "stream a released by stream b's write", "stream a still waited after 5 s");
  std::vector<unsigned> got(n);
  CU_CHECK(cuMemcpyDtoH(got.data(), copy, n * sizeof(unsigned)));
  const bool all42 = std::all_of(got.begin(), got.end(), [](unsigned v) { return v == 42; });
  std::printf("stream a waited on a device word that stream b wrote after filling 4 MiB: a copied %s\n",
              all42 ? "all 42s (the fill, visible once the flag was)" : "OTHER values");
  wb::expect(all42, "the data written before the flag visible to the stream that waited for the flag",
             "the copy made after the wait held other values");
  //! [device-flag]
  //! [device-flag-2]
  if (sup.bits64) {
    const cuuint64_t big = (1ull << 40) + 3;  // needs all 64 bits
    CU_CHECK(cuStreamWaitValue64(a, flag64, big, CU_STREAM_WAIT_VALUE_GEQ));
    CU_CHECK(cuStreamWriteValue64(a, lab.word64(), big, 0));
    CU_CHECK(cuStreamWriteValue64(b, flag64, big, 0));
    const bool done = endsWithin(a, 5000);
    if (!done) CU_CHECK(cuMemcpyHtoD(flag64, &big, sizeof big));  // released from the host: nothing waits
    std::printf("64-bit: a waited for 2^40 + 3 written by b, then wrote it to host memory: %llu\n",
                lab.read64());
    wb::expect(done && lab.read64() == big, "a 64-bit wait and write",
               "value " + std::to_string(lab.read64()));
  } else {
    std::printf("64-bit: left out, CAN_USE_64_BIT_STREAM_MEM_OPS is 0 here\n");
  }
  //! [device-flag-2]
  //! [device-flag-3]
  // NO_MEMORY_BARRIER "is not supported in the v2 API" (cuda.h), and cuda.h names the v2 entry point
  // cuStreamWriteValue32: what the call answers is printed, and where accepted its write must land.
  lab.words.write(3, 0);
  const CUresult noBarrier =
      cuStreamWriteValue32(b, lab.words.device(3), 9, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER);
  CU_CHECK(cuStreamSynchronize(b));
  std::printf("cuStreamWriteValue32 with NO_MEMORY_BARRIER: %s; the word then reads %u\n",
              wb::errorName(noBarrier).c_str(), lab.words.read(3));
  wb::expect(noBarrier != CUDA_SUCCESS || lab.words.read(3) == 9,
             "a write without the barrier landing, if accepted",
             "accepted, but the word reads " + std::to_string(lab.words.read(3)));
  // FLUSH on a wait already met: it cannot hold the stream, whatever the answer.
  const CUresult flush =
      cuStreamWaitValue32(a, flag, 0, CU_STREAM_WAIT_VALUE_GEQ | CU_STREAM_WAIT_VALUE_FLUSH);
  CU_CHECK(cuStreamSynchronize(a));
  std::printf("cuStreamWaitValue32 with FLUSH (CAN_FLUSH_REMOTE_WRITES %d): %s\n", sup.flush,
              wb::errorName(flush).c_str());
  CU_CHECK(cuMemFree(mem));
  CU_CHECK(cuStreamDestroy(b));
  CU_CHECK(cuStreamDestroy(a));
}
//! [device-flag-3]

CUstreamBatchMemOpParams waitOp(CUdeviceptr at, unsigned value, unsigned flags) {
  CUstreamBatchMemOpParams p{};
  p.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  p.waitValue.address = at;
  p.waitValue.value = value;
  p.waitValue.flags = flags;
  return p;
}
CUstreamBatchMemOpParams writeOp(CUdeviceptr at, unsigned value) {
  CUstreamBatchMemOpParams p{};
  p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
  p.writeValue.address = at;
  p.writeValue.value = value;
  return p;
}
CUstreamBatchMemOpParams write64Op(CUdeviceptr at, cuuint64_t value) {
  CUstreamBatchMemOpParams p{};
  p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  p.writeValue.address = at;
  p.writeValue.value64 = value;
  return p;
}

//! [batch]
// One call, four operations in the order given: write "arrived", wait for the flag, a system-wide
// memory barrier, write a 64-bit word.
void batch(Lab& lab, const Support& sup) {
  CUstream s = newStream();
  lab.words.write(0, 0);
  lab.words.write(1, 0);
  lab.words.write(4, 0);
  lab.words.write(5, 0);
  const cuuint64_t done = (1ull << 33) + 7;
  std::vector<CUstreamBatchMemOpParams> ops = {writeOp(lab.words.device(1), 1),
                                               waitOp(lab.words.device(0), 1, CU_STREAM_WAIT_VALUE_GEQ)};
  CUstreamBatchMemOpParams barrier{};
  barrier.memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
  barrier.memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_SYS;
  ops.push_back(barrier);
  if (sup.bits64) ops.push_back(write64Op(lab.word64(), done));
  bool held = false;
  {
    Hold hold(lab.words, 0, 1, s);
    CU_CHECK(cuStreamBatchMemOp(s, static_cast<unsigned>(ops.size()), ops.data(), 0));
    held = becomesNonZero(lab.words, 1, 2000) && !becomesNonZero(lab.words, 4, 20);
  }
  std::printf("one cuStreamBatchMemOp of %zu operations: the write after the wait held %s; after the release "
              "the 64-bit word reads %llu\n", ops.size(), held ? "yes" : "NO", lab.read64());
  wb::expect(held && (!sup.bits64 || lab.read64() == done), "a batch run in its array's order",
             "the write after the wait landed early, or not at all");
  CU_CHECK(cuStreamDestroy(s));
}
//! [batch]

//! [graph]
// The wait as a graph node: wait (batch mem-op node) -> stamp (kernel node) -> write (batch mem-op
// node). Launched twice: then updated in the executable graph to wait for 2, and launched again.
void graphNode(Lab& lab, CUcontext ctx) {
  CUgraph graph = nullptr;
  CU_CHECK(cuGraphCreate(&graph, 0));
  CUstreamBatchMemOpParams wait = waitOp(lab.words.device(0), 1, CU_STREAM_WAIT_VALUE_GEQ);
  CUDA_BATCH_MEM_OP_NODE_PARAMS waitParams{};
  waitParams.ctx = ctx;
  waitParams.count = 1;
  waitParams.paramArray = &wait;
  CUgraphNode waitNode = nullptr, stampNode = nullptr, writeNode = nullptr;
  CU_CHECK(cuGraphAddBatchMemOpNode(&waitNode, graph, nullptr, 0, &waitParams));
  CUdeviceptr slot = lab.words.device(2);
  void* args[] = {&lab.counter, &slot};
  CUDA_KERNEL_NODE_PARAMS kp{};
  CU_CHECK(cuKernelGetFunction(&kp.func, reinterpret_cast<CUkernel>(lab.k.stamp)));
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CU_CHECK(cuGraphAddKernelNode(&stampNode, graph, &waitNode, 1, &kp));
  CUstreamBatchMemOpParams write = writeOp(lab.words.device(1), 1);
  CUDA_BATCH_MEM_OP_NODE_PARAMS writeParams{};
  writeParams.ctx = ctx;
  writeParams.count = 1;
  writeParams.paramArray = &write;
  CU_CHECK(cuGraphAddBatchMemOpNode(&writeNode, graph, &stampNode, 1, &writeParams));
  CUgraphNodeType type{};
  CU_CHECK(cuGraphNodeGetType(waitNode, &type));
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  //! [graph]
  //! [graph-2]
  CUstream s = newStream();
  bool heldAndRan[2] = {};
  for (unsigned round = 1; round <= 2; ++round) {
    if (round == 2) {  // the executable graph's wait now asks for 2
      wait.waitValue.value = 2;
      CU_CHECK(cuGraphExecBatchMemOpNodeSetParams(exec, waitNode, &waitParams));
    }
    lab.words.write(0, round - 1);  // round 2: 1, which met the old wait and does not meet this one
    lab.words.write(1, 0);
    lab.words.write(2, 0);
    bool held = false;
    {
      Hold hold(lab.words, 0, round, s);
      CU_CHECK(cuGraphLaunch(exec, s));
      held = !becomesNonZero(lab.words, 2, 20);
    }
    heldAndRan[round - 1] = held && lab.words.read(2) != 0 && lab.words.read(1) == 1;
    std::printf("launch %u: waiting for %u, flag %u: the kernel node held %s; flag %u: kernel ran "
                "and the last node wrote %s\n", round, round, round - 1, held ? "yes" : "NO", round,
                lab.words.read(1) == 1 ? "yes" : "NO");
  }
  std::printf("the wait node's type: %s\n",
              type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP ? "CU_GRAPH_NODE_TYPE_BATCH_MEM_OP" : "another type");
  wb::expect(type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP && heldAndRan[0] && heldAndRan[1],
             "a batch mem-op node holding the graph's kernel until its flag, and its update taking effect",
             "another type, or a kernel node that ran early or never");
  CU_CHECK(cuStreamDestroy(s));
  CU_CHECK(cuGraphExecDestroy(exec));
  CU_CHECK(cuGraphDestroy(graph));
}
//! [graph-2]

//! [reduction]
void atomicReduction(CUdevice dev, int driverVersion) {
  std::printf("driver: CUDA %d.%d; built with CUDA %d.%d\n", driverVersion / 1000, driverVersion % 1000 / 10,
              CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
#if CUDA_VERSION >= 13010
  int supported = 0;
  const CUresult r = cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED, dev);
  std::printf("CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED: %s, %d (the operation: "
              "CU_STREAM_MEM_OP_ATOMIC_REDUCTION = %d, in cuStreamBatchMemOp)\n",
              wb::errorName(r).c_str(), supported, static_cast<int>(CU_STREAM_MEM_OP_ATOMIC_REDUCTION));
#else
  (void)dev;
  std::printf("left out: CU_STREAM_MEM_OP_ATOMIC_REDUCTION and "
              "CU_DEVICE_ATTRIBUTE_ATOMIC_REDUCTION_SUPPORTED came with CUDA 13.1's header%s\n",
              driverVersion < 13010 ? ", and this driver is older than 13.1: it cannot run it either" : "");
#endif
}
//! [reduction]

// The four ways from a host write (or the host's decision) to the next kernel in s starting, as
// the host sees it: the stamp's write to pinned memory read back.
enum Way { kWaitValue, kGate, kEvent, kSynchronise, kWays };
const char* const kWayNames[kWays] = {"wait-value", "gate kernel", "host launches after an event it records",
                                      "host launches after synchronising"};

//! [latency]
double onceUs(Lab& lab, Way way, CUstream s, CUstream h, CUevent e) {
  lab.words.write(0, 0);
  lab.words.write(1, 0);
  lab.words.write(2, 0);
  using Clock = std::chrono::steady_clock;
  Clock::time_point t0, t1;
  if (way == kWaitValue || way == kGate) {  // queued in advance; "arrived" says the stream reached it
    CU_CHECK(cuStreamWriteValue32(s, lab.words.device(1), 1, 0));
    Hold hold(lab.words, 0, 1, s);
    std::unique_ptr<wb::Gate> gate;
    if (way == kWaitValue)
      CU_CHECK(cuStreamWaitValue32(s, lab.words.device(0), 1, CU_STREAM_WAIT_VALUE_GEQ));
    else
      gate = std::make_unique<wb::Gate>(lab.k.gate, s);
    lab.stamp(s);
    becomesNonZero(lab.words, 1, 2000);
    t0 = Clock::now();
    if (gate)
      gate->open();
    else
      hold.release();
    becomesNonZero(lab.words, 2, 2000);
    t1 = Clock::now();
    //! [latency]
    //! [latency-b]
  } else {  // the host launches when it decides: the decision is t0
    t0 = Clock::now();
    if (way == kEvent) {
      CU_CHECK(cuEventRecord(e, h));
      CU_CHECK(cuStreamWaitEvent(s, e, 0));
    } else {
      CU_CHECK(cuStreamSynchronize(s));
    }
    lab.stamp(s);
    becomesNonZero(lab.words, 2, 2000);
    t1 = Clock::now();
  }
  CU_CHECK(cuStreamSynchronize(s));
  return lab.words.read(2) != 0 ? std::chrono::duration<double, std::micro>(t1 - t0).count() : -1;
}
//! [latency-b]

//! [latency-2]
// Each way 64 times after 4 warm-ups, in turn, so that a slow moment falls on all of them.
std::vector<std::vector<double>> latencies(Lab& lab) {
  CUstream s = newStream(), h = newStream();
  CUevent e = nullptr;
  CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  std::vector<std::vector<double>> us(kWays);
  bool all = true;
  for (int rep = 0; rep < 68; ++rep)
    for (int w = 0; w < kWays; ++w) {
      const double t = onceUs(lab, static_cast<Way>(w), s, h, e);
      all = all && t >= 0;
      if (rep >= 4) us[w].push_back(t);
    }
  for (auto& v : us) std::sort(v.begin(), v.end());
  std::printf("from the host's write (or decision) to the next kernel's write seen by the host, "
              "microseconds:\n");
  std::printf("  %-42s %8s %8s %8s\n", "way", "best", "median", "90th");
  for (int w = 0; w < kWays; ++w)
    std::printf("  %-42s %8.2f %8.2f %8.2f\n", kWayNames[w], us[w][0], us[w][us[w].size() / 2],
                us[w][us[w].size() * 9 / 10]);
  wb::expect(all, "every kernel running after its way released it", "a kernel not seen within 2 s");
  CU_CHECK(cuEventDestroy(e));
  CU_CHECK(cuStreamDestroy(h));
  CU_CHECK(cuStreamDestroy(s));
  return us;
}
//! [latency-2]

wb::FigureTable tableOf(const std::vector<std::vector<double>>& us) {
  wb::FigureTable table("run (sorted),way,microseconds");
  for (size_t w = 0; w < us.size(); ++w)
    for (size_t i = 0; i < us[w].size(); ++i) table.row("%zu,%s,%.3f", i + 1, kWayNames[w], us[w][i]);
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson27-figure.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "every launch would wait for its kernel: step 7's gate kernel, which waits for the host, would "
         "hold the host's own launch"},
        {"CUDA_DEVICE_MAX_CONNECTIONS", wb::Under::Stops,
         "streams a and b of step 3 could share one work queue: b's write of the flag would then wait behind "
         "a's wait for it, the deadlock the reference warns of", wb::belowDefault},
    });
    const std::string streamsImage = wb::verifiedImagePath("streams.fatbin");
    CU_CHECK(cuInit(0));
    int driverVersion = 0;
    CU_CHECK(cuDriverGetVersion(&driverVersion));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary streams = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&streams, streamsImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    // Under compute-sanitizer every call is slowed: step 7's times would be the sanitizer's.
    const bool sanitized = wb::underSanitizer();
    std::vector<std::vector<double>> us;
    {
      Lab lab;
      lab.k = wb::StreamKernels::load(streams);  // every kernel loaded before any wait (lesson 09)
      CU_CHECK(cuMemAlloc(&lab.counter, sizeof(unsigned)));
      CU_CHECK(cuMemsetD32(lab.counter, 0, 1));
      CU_CHECK(cuCtxSynchronize());  // landed before the stamps of the non-blocking streams take from it

      wb::step(1, "What this device supports");
      const Support sup = support(dev);
      wb::step(2, "A stream held by a flag in host memory");
      conditions(lab, sup);
      wb::step(3, "A flag in device memory, written by another stream");
      deviceFlag(lab, sup);
      wb::step(4, "Several operations in one call");
      batch(lab, sup);
      wb::step(5, "The same in a graph");
      graphNode(lab, primary);
      wb::step(6, "CUDA 13.1's atomic reduction");
      atomicReduction(dev, driverVersion);
      wb::step(7, "From a host write to the next kernel");
      if (sanitized)
        std::printf("left out under compute-sanitizer, which slows every call\n");
      else
        us = latencies(lab);
      CU_CHECK(cuMemFree(lab.counter));
    }
    CU_CHECK(cuLibraryUnload(streams));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return tableOf(us).save(paths.csv, 7);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

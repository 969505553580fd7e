// Lesson 28: the launch attributes engines set.
//
// What you learn: the attributes of cuLaunchKernelEx (and of streams) that serving engines and
// communication libraries set, beyond the cluster, cooperative and programmatic ones of lessons 16
// and 20. CU_LAUNCH_ATTRIBUTE_PRIORITY and stream priorities: the documented range and clamping, and
// what a high-priority kernel's start costs while low-priority work floods the device, measured.
// CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW with CU_LIMIT_PERSISTING_L2_CACHE_SIZE and
// cuCtxResetPersistingL2Cache: a hot buffer read again and again while another buffer streams
// through L2, with and without the window, against the device's L2 size and DRAM peak read from its
// attributes. CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN and its map: what the reference says a
// communication kernel gains, and what one GPU lets you see. CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT
// beside lesson 20's programmatic event. Every attribute here is a hint or a scheduling request the
// reference does not promise to honour in time: the program prints what happened, and checks only
// what is promised (return codes, values read back, results computed, the order events guarantee).
//
// APIs: cuLaunchKernelEx, cuCtxGetStreamPriorityRange, cuStreamCreateWithPriority, cuStreamGetPriority,
//       cuStreamSetAttribute, cuStreamGetAttribute, cuCtxSetLimit, cuCtxGetLimit,
//       cuCtxResetPersistingL2Cache, cuGraphGetEdges, cuEventQuery,
//       cuDeviceGetAttribute, cuOccupancyMaxActiveBlocksPerMultiprocessor
// Run:  ctest -R lesson28   (or build/lessons/lesson28-launch-attributes [--csv lesson28-figure.csv])
#include "figure.hpp"
#include "gate.hpp"
#include "needs.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

struct Kernels {
  CUfunction gate = nullptr, stamp = nullptr;                  // kernels/streams.cu
  CUfunction flood = nullptr, probe = nullptr, readSum = nullptr,  // kernels/launch_attributes.cu
      publish = nullptr, consume = nullptr;
};

struct Device {
  CUdevice dev = 0;
  int sms = 0, l2 = 0, maxPersisting = 0, maxWindow = 0, domains = 0, least = 0, greatest = 0;
  double peakGBps = 0;
};

CUfunction functionOf(CUlibrary library, const char* name) {
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library, name));
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
  return f;
}

int attribute(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  CU_CHECK(cuDeviceGetAttribute(&v, a, dev));
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

//! [launch]
// Every launch of the lesson: blocks x threads of f in stream s, with the attributes given.
CUresult launch(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream s,
                CUlaunchAttribute* attrs = nullptr, unsigned count = 0) {
  CUlaunchConfig config{};
  config.gridDimX = blocks;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = threads;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = s;
  config.attrs = attrs;
  config.numAttrs = count;
  return cuLaunchKernelEx(&config, f, args, nullptr);
}

CUlaunchAttribute priorityAttribute(int priority) {
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
  a.value.priority = priority;
  return a;
}
//! [launch]

CUstream streamAt(int priority) {
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, priority));
  return s;
}

//! [device]
Device readDevice(CUdevice dev) {
  Device d;
  d.dev = dev;
  d.sms = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.l2 = attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  d.maxPersisting = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
  d.maxWindow = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
  d.domains = attribute(dev, CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT);
  const double clockKHz = attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  const double busBits = attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  d.peakGBps = clockKHz * 1e3 * 2 * busBits / 8 / 1e9;
  CU_CHECK(cuCtxGetStreamPriorityRange(&d.least, &d.greatest));
  std::printf("%d SMs; L2 %.2f MiB, at most %.2f MiB of it set aside for persisting lines, an access "
              "window at most %.2f MiB\n", d.sms, d.l2 / 1048576.0, d.maxPersisting / 1048576.0,
              d.maxWindow / 1048576.0);
  std::printf("DRAM peak %.0f GB/s (memory clock %.0f MHz x 2 x %.0f bits / 8); %d memory synchronization "
              "domains\n", d.peakGBps, clockKHz / 1e3, busBits, d.domains);
  std::printf("stream priorities: %d (least) to %d (greatest); lower numbers are higher priorities\n",
              d.least, d.greatest);
  return d;
}
//! [device]

// Every kernel is loaded into the context before a gate closes (lesson 09: under lazy loading a
// first launch may wait for the kernels running there): each runs once here, harmlessly.
Kernels loadKernels(CUlibrary streams, CUlibrary attrs) {
  wb::StreamKernels::load(streams);
  Kernels k;
  k.gate = functionOf(streams, "gate");
  k.stamp = functionOf(streams, "stamp");
  k.flood = functionOf(attrs, "flood");
  k.probe = functionOf(attrs, "probe");
  k.readSum = functionOf(attrs, "read_sum");
  k.publish = functionOf(attrs, "publish");
  k.consume = functionOf(attrs, "consume");
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAlloc(&scratch, 256));
  CU_CHECK(cuMemsetD32(scratch, 0, 64));
  wb::PinnedWords started(1);
  CUdeviceptr span = scratch, data = scratch + 64, flag = scratch + 128, seen = scratch + 136, out = scratch + 144,
              began = scratch + 160, ran = scratch + 168, startedAt = started.device(0);
  unsigned long long zero = 0, n4 = 2;
  int value = 7;
  void* floodArgs[] = {&zero, &span, &startedAt};
  void* probeArgs[] = {&began, &ran};
  void* readArgs[] = {&data, &n4, &out, &span};
  void* publishArgs[] = {&data, &flag, &value};
  void* consumeArgs[] = {&data, &flag, &zero, &seen, &out};
  CU_CHECK(launch(k.flood, 1, 32, floodArgs, nullptr));
  CU_CHECK(launch(k.probe, 1, 32, probeArgs, nullptr));
  CU_CHECK(launch(k.readSum, 1, 32, readArgs, nullptr));
  CU_CHECK(launch(k.publish, 1, 1, publishArgs, nullptr));
  CU_CHECK(launch(k.consume, 1, 1, consumeArgs, nullptr));
  CU_CHECK(cuCtxSynchronize());
  CU_CHECK(cuMemFree(scratch));
  return k;
}

//! [priorities]
// The reference: a priority outside [greatest, least] "will automatically be clamped", and
// cuStreamGetPriority "returns the clamped priority". The stream attribute and the launch attribute
// carry the same number, for one stream's later work or for one launch.
void priorities(const Kernels& k, const Device& d) {
  CUstream urgent = streamAt(d.greatest - 10), batch = streamAt(d.least + 10);
  int urgentGot = 0, batchGot = 0;
  CU_CHECK(cuStreamGetPriority(urgent, &urgentGot));
  CU_CHECK(cuStreamGetPriority(batch, &batchGot));
  std::printf("asked %d, got %d; asked %d, got %d\n", d.greatest - 10, urgentGot, d.least + 10, batchGot);
  wb::expect(urgentGot == d.greatest && batchGot == d.least, "priorities outside the range clamped into it",
             std::to_string(urgentGot) + " and " + std::to_string(batchGot));
  CUstreamAttrValue read{};
  CU_CHECK(cuStreamGetAttribute(urgent, CU_STREAM_ATTRIBUTE_PRIORITY, &read));
  std::printf("cuStreamGetAttribute(PRIORITY) of the urgent stream: %d\n", read.priority);
  CUstreamAttrValue set{};
  set.priority = d.greatest;
  const CUresult setRc = cuStreamSetAttribute(batch, CU_STREAM_ATTRIBUTE_PRIORITY, &set);
  CU_CHECK(cuStreamGetAttribute(batch, CU_STREAM_ATTRIBUTE_PRIORITY, &read));
  CU_CHECK(cuStreamGetPriority(batch, &batchGot));
  std::printf("the batch stream's PRIORITY attribute set to %d: %s; read back %d; cuStreamGetPriority %d\n",
              d.greatest, wb::errorName(setRc).c_str(), read.priority, batchGot);
  //! [priorities]
  //! [priorities-2]
  CUdeviceptr words = 0;
  CU_CHECK(cuMemAlloc(&words, 16));
  // In urgent: cuMemsetD32 runs in the legacy stream, which a non-blocking stream does not wait for.
  CU_CHECK(cuMemsetD32Async(words, 0, 4, urgent));
  CUdeviceptr began = words, ran = words + 8;
  void* args[] = {&began, &ran};
  CUlaunchAttribute attr = priorityAttribute(d.greatest);
  CU_CHECK(launch(k.probe, 1, 32, args, urgent, &attr, 1));
  CU_CHECK(cuStreamSynchronize(urgent));
  unsigned count = 0;
  CU_CHECK(cuMemcpyDtoH(&count, ran, sizeof count));
  std::printf("a launch with CU_LAUNCH_ATTRIBUTE_PRIORITY %d: ran %u time\n", d.greatest, count);
  wb::expect(count == 1, "the launch with a priority attribute running once", std::to_string(count));
  CU_CHECK(cuMemFree(words));
  CU_CHECK(cuStreamDestroy(batch));
  CU_CHECK(cuStreamDestroy(urgent));
}
//! [priorities-2]

struct Flood {
  double probeUs, floodUs;
  bool right;
};

//! [flood]
// The flood: waves x (blocks that fit on the device at once) blocks, each holding its slot for
// blockUs, in a least-priority stream. Once its first block has begun (the host reads pinned
// memory), one probe block is launched as the way says. Times from the GPU's own timer.
Flood floodAndProbe(const Kernels& k, const Device& d, CUstream floodStream, CUstream probeStream,
                    CUlaunchAttribute* attrs, unsigned count) {
  constexpr unsigned kThreads = 256, kWaves = 20;
  constexpr unsigned long long kBlockNs = 200'000;
  int perSm = 0;
  CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, k.flood, kThreads, 0));
  const unsigned blocks = static_cast<unsigned>(perSm * d.sms) * kWaves;
  CUdeviceptr words = 0;
  CU_CHECK(cuMemAlloc(&words, 64));
  const unsigned long long init[4] = {~0ull, 0, 0, 0};
  CU_CHECK(cuMemcpyHtoD(words, init, sizeof init));
  // From pageable memory the copy may return before the bytes land, in the legacy stream, which
  // neither non-blocking stream below waits for: the host waits for the context.
  CU_CHECK(cuCtxSynchronize());
  wb::PinnedWords started(1);
  CUdeviceptr span = words, began = words + 16, ran = words + 24, startedAt = started.device(0);
  unsigned long long blockNs = kBlockNs;
  void* floodArgs[] = {&blockNs, &span, &startedAt};
  void* probeArgs[] = {&began, &ran};
  //! [flood]
  //! [flood-2]
  CU_CHECK(launch(k.flood, blocks, kThreads, floodArgs, floodStream));
  const wb::Stopwatch clock;
  while (started.read(0) == 0 && clock.ms() < 5000) {
  }
  CU_CHECK(launch(k.probe, 1, 32, probeArgs, probeStream, attrs, count));
  CU_CHECK(cuStreamSynchronize(probeStream));
  CU_CHECK(cuStreamSynchronize(floodStream));
  unsigned long long t[4] = {};
  CU_CHECK(cuMemcpyDtoH(t, words, sizeof t));
  CU_CHECK(cuMemFree(words));
  // The order the timer gives is printed, not judged: %globaltimer is "intended for use by NVIDIA tools".
  const bool right = started.read(0) == 1 && t[3] == 1;
  return {(static_cast<double>(t[2]) - static_cast<double>(t[0])) / 1e3, static_cast<double>(t[1] - t[0]) / 1e3, right};
}

//! [flood-2]

//! [flood-3]
void floodedDevice(const Kernels& k, const Device& d) {
  CUstream low = streamAt(d.least), lowToo = streamAt(d.least), high = streamAt(d.greatest);
  CUlaunchAttribute urgent = priorityAttribute(d.greatest);
  struct Way {
    const char* name;
    CUstream probe;
    bool attribute;
  };
  const Way ways[3] = {{"probe in another least-priority stream", lowToo, false},
                       {"probe in a greatest-priority stream", high, false},
                       {"probe in a least-priority stream, launch attribute PRIORITY greatest", lowToo,
                        true}};
  std::printf("a flood of 20 waves of 200 us blocks in a least-priority stream; one probe block launched "
              "once the flood has begun (median of 5):\n");
  bool right = true;
  for (const Way& w : ways) {
    std::vector<double> probe, span;
    for (int rep = 0; rep < 5; ++rep) {
      const Flood f = floodAndProbe(k, d, low, w.probe, w.attribute ? &urgent : nullptr, w.attribute ? 1 : 0);
      right = right && f.right;
      probe.push_back(f.probeUs);
      span.push_back(f.floodUs);
    }
    std::printf("  %-70s began %8.1f us into a %8.1f us flood\n", w.name, median(probe), median(span));
  }
  //! [flood-3]
  // Priorities "do not preempt already-running work or provide any other functional guarantee on
  // execution order": when the probe began is printed, not asserted.
  wb::expect(right, "every flood and probe ran", "a flood that never began or a probe that did not run");
  for (CUstream s : {high, lowToo, low}) CU_CHECK(cuStreamDestroy(s));
}

//! [window]
// The window over [base, base + bytes): "persisting" for a hitRatio share of its lines, "streaming"
// for the rest. With more bytes than the set-aside holds, the guide's advice: hitRatio =
// set-aside / bytes, so that the persisting lines fit.
CUaccessPolicyWindow windowOver(CUdeviceptr base, size_t bytes, size_t setAside) {
  CUaccessPolicyWindow w{};
  w.base_ptr = reinterpret_cast<void*>(base);
  w.num_bytes = bytes;
  w.hitRatio = static_cast<float>(std::min(1.0, static_cast<double>(setAside) / static_cast<double>(bytes)));
  w.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
  w.missProp = CU_ACCESS_PROPERTY_STREAMING;
  return w;
}

// Sets the context's persisting set-aside to the device's maximum and returns what the context
// then reports: "purely a performance hint ... it can be ignored or clamped".
size_t setAsideMost(const Device& d) {
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, static_cast<size_t>(d.maxPersisting)));
  size_t got = 0;
  CU_CHECK(cuCtxGetLimit(&got, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
  return got;
}
//! [window]

//! [window-attribute]
// The same window as a stream's attribute (for every later launch there) and read back.
void windowAttribute(const Device& d, size_t setAside) {
  const size_t bytes = 8u << 20;
  CUdeviceptr hot = 0;
  CU_CHECK(cuMemAlloc(&hot, bytes));
  CUstream s = streamAt(d.least);
  CUstreamAttrValue v{}, back{};
  v.accessPolicyWindow = windowOver(hot, bytes, setAside);
  CU_CHECK(cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
  CU_CHECK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &back));
  const CUaccessPolicyWindow& b = back.accessPolicyWindow;
  const CUaccessPolicyWindow& a = v.accessPolicyWindow;
  const char* same = b.base_ptr == a.base_ptr ? "same" : "other";
  std::printf("stream window set: base %s, %zu bytes, hitRatio %.3f, hit %d, miss %d; read back: base %s, "
              "%zu bytes, hitRatio %.3f, hit %d, miss %d\n", same, a.num_bytes, a.hitRatio, a.hitProp,
              a.missProp, same, b.num_bytes, b.hitRatio, b.hitProp, b.missProp);
  CUstreamAttrValue bigger = v;
  bigger.accessPolicyWindow.num_bytes = static_cast<size_t>(d.maxWindow) + (2u << 20);
  const CUresult tooBig = cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &bigger);
  std::printf("a window 2 MiB past CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: %s\n",
              wb::errorName(tooBig).c_str());
  const CUresult reset = cuCtxResetPersistingL2Cache();
  std::printf("cuCtxResetPersistingL2Cache: %s\n", wb::errorName(reset).c_str());
  wb::expect(reset == CUDA_SUCCESS, "the reset of persisting lines accepted", wb::errorName(reset));
  CU_CHECK(cuStreamDestroy(s));
  CU_CHECK(cuMemFree(hot));
}
//! [window-attribute]

struct HotRow {
  size_t bytes;
  double gbps[3];
};
const char* const kL2Ways[3] = {"no window", "persisting window", "window after a reset"};

//! [hot]
// One pass over the hot buffer as read_sum makes it: a grid of 4 blocks per SM, 256 threads.
double hotPass(const Kernels& k, const Device& d, CUdeviceptr buf, size_t bytes, CUdeviceptr scratch,
               CUstream s, CUlaunchAttribute* attrs, unsigned count, bool* right) {
  const unsigned long long init[2] = {~0ull, 0};
  CU_CHECK(cuMemcpyHtoDAsync(scratch, init, sizeof init, s));
  CU_CHECK(cuMemsetD32Async(scratch + 16, 0, 1, s));
  unsigned long long n4 = bytes / 16;
  CUdeviceptr span = scratch, sum = scratch + 16;
  void* args[] = {&buf, &n4, &sum, &span};
  CU_CHECK(launch(k.readSum, static_cast<unsigned>(4 * d.sms), 256, args, s, attrs, count));
  unsigned long long t[2] = {};
  float total = 0;
  CU_CHECK(cuMemcpyDtoHAsync(t, scratch, sizeof t, s));
  CU_CHECK(cuMemcpyDtoHAsync(&total, sum, sizeof total, s));
  CU_CHECK(cuStreamSynchronize(s));
  const double want = static_cast<double>(bytes / 4);  // every float is 1.0
  *right = *right && std::fabs(total - want) <= want * 1e-3 && t[1] > t[0];
  return static_cast<double>(bytes) / static_cast<double>(t[1] - t[0]);  // bytes per ns = GB/s
}

//! [hot]

//! [hot-2]
// For each hot size: the three ways in turn, 1 warm-up and 9 measured passes each. Before every
// measured pass, a cold buffer 4 times the L2 streams through it (a plain read, as another kernel
// of the engine would). GB/s of the hot pass, median.
std::vector<HotRow> hotAgainstFlood(const Kernels& k, const Device& d, size_t setAside, bool* right) {
  const size_t coldBytes = 4 * static_cast<size_t>(d.l2), mib = 1u << 20;
  const size_t most =
      std::min<size_t>(2 * setAside / mib * mib, static_cast<size_t>(d.maxWindow) / mib * mib);
  CUdeviceptr hot = 0, cold = 0, scratch = 0, coldScratch = 0;
  CU_CHECK(cuMemAlloc(&hot, most));
  CU_CHECK(cuMemAlloc(&cold, coldBytes));
  CU_CHECK(cuMemAlloc(&scratch, 64));
  CU_CHECK(cuMemAlloc(&coldScratch, 64));
  CU_CHECK(cuMemsetD32(hot, 0x3f800000u, most / 4));  // 1.0f
  CU_CHECK(cuMemsetD32(cold, 0x3f800000u, coldBytes / 4));
  CU_CHECK(cuCtxSynchronize());
  CUstream s = streamAt(d.least);
  std::vector<HotRow> rows;
  //! [hot-2]
  //! [hot-3]
  for (double share : {0.25, 0.5, 0.75, 1.0, 1.5, 2.0}) {
    const size_t bytes = std::min(most, std::max(mib, static_cast<size_t>(share * setAside) / mib * mib));
    CUlaunchAttribute window{};
    window.id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
    window.value.accessPolicyWindow = windowOver(hot, bytes, setAside);
    HotRow row{bytes, {}};
    for (int way = 0; way < 3; ++way) {
      CU_CHECK(cuCtxResetPersistingL2Cache());
      std::vector<double> rates;
      for (int rep = 0; rep < 10; ++rep) {
        // The stream is idle here (hotPass synchronised): the reset "takes effect on function return".
        if (way == 2) CU_CHECK(cuCtxResetPersistingL2Cache());
        bool coldRight = true;
        hotPass(k, d, cold, coldBytes, coldScratch, s, nullptr, 0, &coldRight);
        const double r = hotPass(k, d, hot, bytes, scratch, s, way ? &window : nullptr, way ? 1 : 0, right);
        *right = *right && coldRight;
        if (rep > 0) rates.push_back(r);
      }
      row.gbps[way] = median(rates);
    }
    rows.push_back(row);
  }
  //! [hot-3]
  CU_CHECK(cuCtxResetPersistingL2Cache());
  CU_CHECK(cuStreamDestroy(s));
  for (CUdeviceptr p : {coldScratch, scratch, cold, hot}) CU_CHECK(cuMemFree(p));
  return rows;
}

void reportHot(const std::vector<HotRow>& rows, const Device& d, size_t setAside, bool right) {
  std::printf("hot buffer read once after a %.0f MiB buffer streamed through the %.2f MiB L2 (set-aside %.2f "
              "MiB), GB/s, median of 9:\n", 4 * d.l2 / 1048576.0, d.l2 / 1048576.0, setAside / 1048576.0);
  std::printf("  %8s  %10s  %18s  %31s\n", "MiB", kL2Ways[0], kL2Ways[1], kL2Ways[2]);
  for (const HotRow& r : rows)
    std::printf("  %8.1f  %10.0f  %18.0f  %31.0f\n", r.bytes / 1048576.0, r.gbps[0], r.gbps[1], r.gbps[2]);
  std::printf("DRAM peak from the attributes: %.0f GB/s\n", d.peakGBps);
  wb::expect(right, "every pass summing its whole buffer", "a pass with another sum");
  // The window is a hint ("more likely to persist"): what it gained is printed, not asserted.
  const HotRow& fit = rows[3];
  std::printf("at %.1f MiB (the set-aside) the window read the hot buffer at %.2fx the rate without it; after a "
              "reset, %.2fx\n", fit.bytes / 1048576.0, fit.gbps[1] / fit.gbps[0], fit.gbps[2] / fit.gbps[0]);
}

wb::FigureTable tableOf(const std::vector<HotRow>& rows, const Device& d) {
  wb::FigureTable table("bytes,way,GB/s");
  for (const HotRow& r : rows)
    for (int way = 0; way < 3; ++way) table.row("%zu,%s,%.1f", r.bytes, kL2Ways[way], r.gbps[way]);
  if (!rows.empty()) table.row("0,limit: DRAM peak (device attributes),%.1f", d.peakGBps);
  return table;
}

//! [domains]
// A communication kernel's launch: in the remote domain. The map says which of the device's
// domains "default" and "remote" name, for one stream or one launch.
void domains(const Kernels& k, const Device& d) {
  CUstream compute = streamAt(d.least), comm = streamAt(d.least);
  CUstreamAttrValue fresh{}, map{}, domain{};
  CU_CHECK(cuStreamGetAttribute(comm, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, &fresh));
  std::printf("a new stream's domain map: default -> %u, remote -> %u\n", fresh.memSyncDomainMap.default_,
              fresh.memSyncDomainMap.remote);
  domain.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
  map.memSyncDomainMap.default_ = 0;
  map.memSyncDomainMap.remote = static_cast<unsigned char>(d.domains > 1 ? 1 : 0);
  CU_CHECK(cuStreamSetAttribute(comm, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &domain));
  CU_CHECK(cuStreamSetAttribute(comm, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, &map));
  CUstreamAttrValue backDomain{}, backMap{};
  CU_CHECK(cuStreamGetAttribute(comm, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &backDomain));
  CU_CHECK(cuStreamGetAttribute(comm, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, &backMap));
  std::printf("the comm stream set to REMOTE, map remote -> %u; read back: domain %d, map default -> %u, "
              "remote -> %u\n", map.memSyncDomainMap.remote, backDomain.memSyncDomain,
              backMap.memSyncDomainMap.default_, backMap.memSyncDomainMap.remote);
  //! [domains]
  //! [handshake]
  // The producer in the remote domain, the consumer in the default one: across domains the
  // reference asks for a system-scope fence on both sides, which the kernels have.
  CUdeviceptr words = 0;
  CU_CHECK(cuMemAlloc(&words, 32));
  CU_CHECK(cuMemsetD32(words, 0, 8));
  CU_CHECK(cuCtxSynchronize());
  CUdeviceptr data = words, flag = words + 4, seen = words + 8, outcome = words + 12;
  int value = 42;
  unsigned long long deadline = 10'000'000'000ull;
  void* publishArgs[] = {&data, &flag, &value};
  void* consumeArgs[] = {&data, &flag, &deadline, &seen, &outcome};
  CUlaunchAttribute remote{};
  remote.id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
  remote.value.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
  CU_CHECK(launch(k.publish, 1, 1, publishArgs, comm, &remote, 1));
  CU_CHECK(launch(k.consume, 1, 1, consumeArgs, compute));
  CU_CHECK(cuCtxSynchronize());
  int got[4] = {};
  CU_CHECK(cuMemcpyDtoH(got, words, sizeof got));
  std::printf("the consumer (default domain) saw flag %d and value %d from the producer (remote domain); "
              "outcome %d\n", got[1], got[2], got[3]);
  wb::expect(got[3] == 1 && got[2] == value,
             "a value published with a system-scope fence seen across domains",
             "seen " + std::to_string(got[2]) + ", outcome " + std::to_string(got[3]));
  CU_CHECK(cuMemFree(words));
  CU_CHECK(cuStreamDestroy(comm));
  CU_CHECK(cuStreamDestroy(compute));
}
//! [handshake]

#if CUDA_VERSION >= 12030
//! [completion]
// The gate kernel (lesson 09) launched with a launch completion event; stream b waits for the event,
// then stamps a pinned word. While the gate still waits for the host, the host looks for the stamp.
// Then the same with an ordinary event recorded after the gate.
void completionEvent(const Kernels& k, const Device& d, bool sanitized) {
  CUstream a = streamAt(d.least), b = streamAt(d.least);
  CUevent e = nullptr;
  CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr counter = 0;
  CU_CHECK(cuMemAlloc(&counter, sizeof(unsigned)));
  for (bool completion : {true, false}) {
    wb::PinnedWords w(3);  // [0] the gate, [1] its outcome, [2] the stamp
    CU_CHECK(cuMemsetD32(counter, 0, 1));
    CU_CHECK(cuCtxSynchronize());
    CUdeviceptr gate = w.device(0), outcome = w.device(1), slot = w.device(2);
    unsigned long long deadline = 10'000'000'000ull;
    void* gateArgs[] = {&gate, &deadline, &outcome};
    void* stampArgs[] = {&counter, &slot};
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
    attr.value.launchCompletionEvent.event = e;
    attr.value.launchCompletionEvent.flags = 0;
    //! [completion]
    //! [completion-2]
    CU_CHECK(launch(k.gate, 1, 1, gateArgs, a, completion ? &attr : nullptr, completion ? 1 : 0));
    if (!completion) CU_CHECK(cuEventRecord(e, a));
    CU_CHECK(cuStreamWaitEvent(b, e, 0));
    CU_CHECK(launch(k.stamp, 1, 1, stampArgs, b));
    const wb::Stopwatch clock;
    while (completion && !sanitized && w.read(2) == 0 && clock.ms() < 2000) {
    }
    const bool stamped = w.read(2) != 0, gateWaiting = w.read(1) == 0;
    const CUresult query = cuEventQuery(e);
    w.write(0, 1);
    CU_CHECK(cuStreamSynchronize(a));
    CU_CHECK(cuStreamSynchronize(b));
    const CUresult after = cuEventQuery(e);
    std::printf("%-40s while the gate waited: stamp %s, cuEventQuery %s; after the gate: %s\n",
                completion ? "launch completion event:" : "ordinary event after the gate:",
                stamped && gateWaiting ? "ran" : "not yet", wb::errorName(query).c_str(),
                wb::errorName(after).c_str());
    //! [completion-2]
    //! [completion-3]
    // Promised: an ordinary event completes only when the work before it has; any event is
    // complete once its kernel has ended. That the launch completion event let b run while the
    // gate still waited is "best effort" (cuda.h): printed above.
    if (!completion)
      wb::expect(!stamped && query == CUDA_ERROR_NOT_READY,
                 "an ordinary event holding b until the gate ended",
                 stamped ? "the stamp ran while the gate waited" : wb::errorName(query));
    wb::expect(after == CUDA_SUCCESS && w.read(2) == 1,
               "the event complete and the stamp run once the gate ended",
               wb::errorName(after));
  }
  CU_CHECK(cuMemFree(counter));
  CU_CHECK(cuEventDestroy(e));
  CU_CHECK(cuStreamDestroy(b));
  CU_CHECK(cuStreamDestroy(a));
}
//! [completion-3]

//! [capture]
// A capture of the same dependency: the edge it records, and its port.
void completionInAGraph(const Kernels& k, const Device& d) {
  CUstream a = streamAt(d.least), b = streamAt(d.least);
  CUevent e = nullptr, joined = nullptr;
  CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CU_CHECK(cuEventCreate(&joined, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr words = 0;
  CU_CHECK(cuMemAlloc(&words, 16));
  CUdeviceptr began = words, ran = words + 8;
  void* args[] = {&began, &ran};
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
  attr.value.launchCompletionEvent.event = e;
  CU_CHECK(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_CHECK(launch(k.probe, 1, 32, args, a, &attr, 1));
  CU_CHECK(cuStreamWaitEvent(b, e, 0));
  CU_CHECK(launch(k.probe, 1, 32, args, b));
  CU_CHECK(cuEventRecord(joined, b));
  CU_CHECK(cuStreamWaitEvent(a, joined, 0));
  //! [capture]
  //! [capture-2]
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(a, &graph));
  CUgraphNode from[2] = {}, to[2] = {};
  CUgraphEdgeData data[2] = {};
  size_t n = 2;
  CU_CHECK(cuGraphGetEdges_v2(graph, from, to, data, &n));
  std::printf("captured: %zu edge, type %u (%s), from_port %u (%s)\n", n, n ? data[0].type : 0,
              n && data[0].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC ? "PROGRAMMATIC" : "DEFAULT",
              n ? data[0].from_port : 0,
              n && data[0].from_port == CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER ? "LAUNCH_ORDER" : "other");
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuMemFree(words));
  for (CUevent ev : {e, joined}) CU_CHECK(cuEventDestroy(ev));
  for (CUstream s : {a, b}) CU_CHECK(cuStreamDestroy(s));
}
//! [capture-2]
#endif

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson28-figure.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "every launch would wait for its kernel: step 3's probe could not be launched while the flood runs, and "
         "step 7's gate would hold its own launch"},
        {"CUDA_DEVICE_MAX_CONNECTIONS", wb::Under::Stops,
         "streams could share one work queue, so a probe or a stamp could wait behind the work of another stream "
         "whatever its priority or event says", wb::belowDefault},
    });
    const std::string streamsImage = wb::verifiedImagePath("streams.fatbin");
    const std::string attrsImage = wb::verifiedImagePath("launch_attributes.fatbin");
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    const int major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    const int minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary streams = nullptr, attrs = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&streams, streamsImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&attrs, attrsImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const bool sanitized = wb::underSanitizer();
    const char* leftOut = "left out under compute-sanitizer, which slows every kernel and ran no kernel beside one "
                          "that waits\n";
    std::printf("device 0: compute capability %d.%d\n", major, minor);
    const Kernels k = loadKernels(streams, attrs);
    std::vector<HotRow> rows;

    wb::step(1, "What the device offers");
    const Device d = readDevice(dev);
    wb::step(2, "Priorities: a stream's, a launch's");
    priorities(k, d);
    wb::step(3, "A high-priority kernel while low-priority work floods the device");
    if (sanitized)
      std::printf("%s", leftOut);
    else
      floodedDevice(k, d);
    //! [too-old]
    // Below 8.0 the device reports no set-aside (MAX_PERSISTING_L2_CACHE_SIZE 0): the guide's L2 controls
    // start at compute capability 8.0, and this lesson's row of lessons/needs.tsv says so.
    const bool persisting = d.maxPersisting > 0 && wb::meetsComputeCapability(major, minor);
    const std::string noL2 = "left out: device 0 (compute capability " + std::to_string(major) + "." +
                             std::to_string(minor) + ") reports " + std::to_string(d.maxPersisting) +
                             " bytes of persisting L2; the programming guide's L2 controls need 8.0\n";
    //! [too-old]
    size_t setAside = 0, before = 0;
    if (persisting) CU_CHECK(cuCtxGetLimit(&before, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
    wb::step(4, "A persisting window: the set-aside, the attribute, the reset");
    if (!persisting) {
      std::printf("%s", noL2.c_str());
    } else {
      setAside = setAsideMost(d);
      std::printf("CU_LIMIT_PERSISTING_L2_CACHE_SIZE was %zu bytes; asked %d, the context reports %zu (%.2f MiB)\n",
                  before, d.maxPersisting, setAside, setAside / 1048576.0);
      windowAttribute(d, setAside);
    }
    wb::step(5, "A hot buffer while another streams through L2");
    if (!persisting || setAside == 0) {
      std::printf("%s", persisting ? "left out: the context reports no set-aside\n" : noL2.c_str());
    } else if (sanitized) {
      std::printf("%s", leftOut);
    } else {
      bool right = true;
      rows = hotAgainstFlood(k, d, setAside, &right);
      reportHot(rows, d, setAside, right);
    }
    if (persisting) CU_CHECK(cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, before));
    wb::step(6, "Memory synchronization domains");
    domains(k, d);
    wb::step(7, "A launch completion event");
#if CUDA_VERSION >= 12030
    completionEvent(k, d, sanitized);
    completionInAGraph(k, d);
#else
    std::printf("left out: built with CUDA %d.%d; CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT and edge data came "
                "with 12.3\n", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
#endif

    CU_CHECK(cuLibraryUnload(attrs));
    CU_CHECK(cuLibraryUnload(streams));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return tableOf(rows, d).save(paths.csv, 5);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

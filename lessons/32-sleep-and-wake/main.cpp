// Lesson 32: sleep and wake (vLLM's sleep mode), a project.
//
// What you build: the memory side of an inference engine that gives the GPU away for a while and
// takes it back without reloading or recapturing. Its weights and its cache live in regions made of
// reserved addresses with device memory mapped behind them (lesson 14), and the engine's executable
// graphs (lesson 15) were captured with those addresses. To sleep, the weights are copied to pinned
// host memory, the cache is discarded, and the memory is unmapped and released while the addresses
// stay reserved; to wake, memory is created and mapped at the same addresses, access granted again,
// the weights copied back, and the same executable graphs launched. A stream that still has work on
// the memory makes the sleep refuse (shown with the gate kernel of lesson 09). Measured: the memory
// a sleep gives back against the device's total; the wake against the host link NVML names and a
// pinned copy alone; and against tearing everything down and rebuilding it (free, allocate, copy,
// recapture, instantiate); with PyTorch's own moves of the same bytes beside them where it ran.
//
// APIs: cuMemGetAllocationGranularity, cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess,
//       cuMemUnmap, cuMemRelease, cuMemAddressFree, cuMemAllocHost, cuMemcpyDtoH, cuMemcpyHtoD,
//       cuMemcpyHtoDAsync, cuStreamQuery, cuStreamBeginCapture, cuStreamEndCapture,
//       cuGraphInstantiate, cuGraphLaunch, cuMemGetInfo, cuDeviceGetPCIBusId, cuEventElapsedTime
// Run:  ctest -R lesson32   (or build/lessons/lesson32-sleep-and-wake [--csv lesson32-figure.csv]
//       [--pytorch lesson32-pytorch.csv], the second written by pytorch_side.py beside this file)
#include "figure.hpp"
#include "gate.hpp"
#include "nvml.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

constexpr size_t kMiB = size_t{1} << 20;
constexpr int kGraphs = 4;   // executable graphs the engine holds: one per batch size, as engines capture
constexpr int kChain = 8;    // kernels in each graph after its copy
constexpr int kRepeats = 5;  // each time in steps 5 and 6 is the median of this many

CUfunction functionOf(CUlibrary library, const char* name) {
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library, name));
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Pinned (not migrating) memory on dev, as lesson 14 makes it.
CUmemAllocationProp onDevice(CUdevice dev) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  return prop;
}

//! [region]
// A region: addresses reserved for its whole life, memory mapped behind them only while awake.
struct Region {
  CUdevice device = 0;
  CUdeviceptr base = 0;
  size_t size = 0;
  CUmemGenericAllocationHandle handle = 0;  // 0 while asleep
};

// vLLM's create_and_map: memory, mapped at the kept base, then access (a new mapping has none).
void createAndMap(Region& r) {
  const CUmemAllocationProp prop = onDevice(r.device);
  CU_CHECK(cuMemCreate(&r.handle, r.size, &prop, 0));
  CU_CHECK(cuMemMap(r.base, r.size, 0, r.handle, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemSetAccess(r.base, r.size, &access, 1));
}

// vLLM's unmap_and_release: the memory goes, the reservation stays.
void unmapAndRelease(Region& r) {
  CU_CHECK(cuMemUnmap(r.base, r.size));
  CU_CHECK(cuMemRelease(r.handle));
  r.handle = 0;
}
//! [region]

Region mapRegion(CUdevice dev, size_t bytes) {
  const CUmemAllocationProp prop = onDevice(dev);
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  Region r;
  r.device = dev;
  r.size = (bytes + granule - 1) / granule * granule;
  CU_CHECK(cuMemAddressReserve(&r.base, r.size, granule, 0, 0));
  createAndMap(r);
  return r;
}

void freeRegion(Region& r) {
  if (r.handle) unmapAndRelease(r);
  if (r.base) CU_CHECK(cuMemAddressFree(r.base, r.size));
  r = Region{};
}

class SleepRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The engine's memory: weights that must survive a sleep, a cache that may be discarded, pinned host
// memory for the weights while asleep, the stream its work runs in, and its executable graphs.
struct Engine {
  CUdevice dev = 0;
  CUfunction scale = nullptr;
  Region weights, cache;
  void* saved = nullptr;
  CUstream stream = nullptr;
  std::vector<CUgraphExec> graphs;
  size_t bytes() const { return weights.size; }
};

//! [capture]
// Graph g: the cache from the weights (a copy), then kChain kernels adding g + 1 to every element:
// cache = weights + kChain * (g + 1). Both regions' addresses are in the graph from here on.
CUgraphExec captureStep(const Engine& e, int g) {
  const unsigned n = static_cast<unsigned>(e.bytes() / sizeof(float));
  CU_CHECK(cuStreamBeginCapture(e.stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_CHECK(cuMemcpyDtoDAsync(e.cache.base, e.weights.base, e.bytes(), e.stream));
  CUdeviceptr data = e.cache.base;
  float factor = 1.0f, offset = float(g + 1);
  unsigned count = n;
  void* args[] = {&data, &factor, &offset, &count};
  for (int k = 0; k < kChain; ++k)
    CU_CHECK(cuLaunchKernel(e.scale, 256, 1, 1, 256, 1, 1, 0, e.stream, args, nullptr));
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(e.stream, &graph));
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  CU_CHECK(cuGraphDestroy(graph));
  return exec;
}
//! [capture]

// Weights: float(i % 1024), written once from the pinned buffer (it holds them while asleep too).
void loadWeights(Engine& e) {
  float* w = static_cast<float*>(e.saved);
  for (size_t i = 0; i < e.bytes() / sizeof(float); ++i) w[i] = float(i % 1024);
  CU_CHECK(cuMemcpyHtoD(e.weights.base, e.saved, e.bytes()));
}

Engine buildEngine(CUdevice dev, CUfunction scale, size_t bytes) {
  Engine e;
  e.dev = dev;
  e.scale = scale;
  e.weights = mapRegion(dev, bytes);
  e.cache = mapRegion(dev, bytes);
  CU_CHECK(cuMemAllocHost(&e.saved, e.weights.size));
  CU_CHECK(cuStreamCreate(&e.stream, CU_STREAM_NON_BLOCKING));
  loadWeights(e);
  for (int g = 0; g < kGraphs; ++g) e.graphs.push_back(captureStep(e, g));
  return e;
}

void destroyEngine(Engine& e) {
  for (CUgraphExec g : e.graphs) CU_CHECK(cuGraphExecDestroy(g));
  e.graphs.clear();
  CU_CHECK(cuStreamDestroy(e.stream));
  CU_CHECK(cuMemFreeHost(e.saved));
  freeRegion(e.weights);
  freeRegion(e.cache);
}

// Launches graph g and checks the cache's first and last 256 KiB: weights + kChain * (g + 1).
bool stepIsRight(const Engine& e, int g) {
  CU_CHECK(cuGraphLaunch(e.graphs[g], e.stream));
  CU_CHECK(cuStreamSynchronize(e.stream));
  const size_t n = e.bytes() / sizeof(float), piece = 64 * 1024;
  std::vector<float> head(piece), tail(piece);
  CU_CHECK(cuMemcpyDtoH(head.data(), e.cache.base, piece * sizeof(float)));
  CU_CHECK(cuMemcpyDtoH(tail.data(), e.cache.base + (n - piece) * sizeof(float), piece * sizeof(float)));
  const float add = float(kChain * (g + 1));
  for (size_t i = 0; i < piece; ++i)
    if (head[i] != float(i % 1024) + add || tail[i] != float((n - piece + i) % 1024) + add) return false;
  return true;
}

//! [sleep]
// Sleep: refused while the engine's stream has work (cuStreamQuery never waits); otherwise the
// weights saved whole (cuMemcpyDtoH returns when they are in host memory), then both regions'
// memory released, their addresses kept.
void sleepEngine(Engine& e) {
  const CUresult busy = cuStreamQuery(e.stream);
  if (busy == CUDA_ERROR_NOT_READY)
    throw SleepRefused("sleep refused: the engine's stream still has work on its memory; "
                       "wait for it (cuStreamSynchronize) and sleep again");
  CU_CHECK(busy);
  CU_CHECK(cuMemcpyDtoH(e.saved, e.weights.base, e.bytes()));
  unmapAndRelease(e.weights);
  unmapAndRelease(e.cache);  // discarded: the next step recomputes it
}
//! [sleep]

//! [wake]
// Wake: memory again at the same addresses, and the weights copied back (from pinned memory
// cuMemcpyHtoD returns when the copy is done). The cache comes back empty.
void wakeEngine(Engine& e) {
  createAndMap(e.weights);
  createAndMap(e.cache);
  CU_CHECK(cuMemcpyHtoD(e.weights.base, e.saved, e.bytes()));
}
//! [wake]

size_t deviceFree(size_t* total = nullptr) {
  size_t freeBytes = 0, all = 0;
  CU_CHECK(cuMemGetInfo(&freeBytes, &all));
  if (total) *total = all;
  return freeBytes;
}

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / double(kMiB));
  return buf;
}

void showEngine(const Engine& e) {
  std::printf("weights: %s reserved and mapped at %s; cache: %s at %s\n", mib(double(e.weights.size)).c_str(),
              wb::hex(e.weights.base).c_str(), mib(double(e.cache.size)).c_str(), wb::hex(e.cache.base).c_str());
  std::printf("%d executable graphs captured, each a copy of the weights into the cache and %d kernels on it\n",
              kGraphs, kChain);
  bool right = true;
  for (int g = 0; g < kGraphs; ++g) right = stepIsRight(e, g) && right;
  std::printf("each graph launched once: the cache holds weights + %d x (g + 1): %s\n", kChain, right ? "yes" : "no");
  wb::expect(right, "every graph's result", "a wrong cache");
}

//! [refuse]
void refuseWhileBusy(Engine& e, CUfunction gateKernel) {
  bool refused = false, gateWaited = false;
  {
    wb::Gate gate(gateKernel, e.stream, 10.0);         // the stream is busy until the host opens it
    CU_CHECK(cuGraphLaunch(e.graphs[0], e.stream));   // a step on the weights and cache, queued behind it
    try {
      sleepEngine(e);
    } catch (const SleepRefused& refusal) {
      refused = true;
      std::printf("%s\n", refusal.what());
    }
    gateWaited = gate.outcome() == wb::Gate::Waiting;
    gate.open();
  }
  //! [refuse]
  CU_CHECK(cuStreamSynchronize(e.stream));
  std::printf("refused while the gate still held the stream: %s; both regions still mapped: %s\n",
              refused && gateWaited ? "yes" : "no", e.weights.handle && e.cache.handle ? "yes" : "no");
  wb::expect(refused && gateWaited && e.weights.handle && e.cache.handle,
             "a refusal at once, nothing released", "no refusal, or memory released under the stream's work");
  const bool right = stepIsRight(e, 0);
  std::printf("the step queued behind the gate ran once it opened, on memory still there: %s\n", right ? "yes" : "no");
  wb::expect(right, "the queued step's result", "a wrong cache");
}

struct Sleep {
  size_t held = 0, freed = 0, total = 0;
  double ms = 0;
};

Sleep sleepOnce(Engine& e) {
  Sleep s;
  s.held = e.weights.size + e.cache.size;
  const CUdeviceptr weightsAt = e.weights.base, cacheAt = e.cache.base;
  //! [measure-sleep]
  const size_t before = deviceFree(&s.total);
  const wb::Stopwatch clock;
  sleepEngine(e);
  s.ms = clock.ms();
  const size_t after = deviceFree();
  s.freed = after > before ? after - before : 0;
  //! [measure-sleep]
  std::printf("sleep: %.1f ms (weights copied to pinned host memory, cache discarded, both unmapped and released)\n",
              s.ms);
  std::printf("the component held %s; the device's free memory rose by %s (%.2f%% of it), of %s in all\n",
              mib(double(s.held)).c_str(), mib(double(s.freed)).c_str(), 100.0 * double(s.freed) / double(s.held),
              mib(double(s.total)).c_str());
  std::printf("addresses kept: weights still at %s, cache at %s\n", wb::hex(e.weights.base).c_str(),
              wb::hex(e.cache.base).c_str());
  wb::expect(e.weights.base == weightsAt && e.cache.base == cacheAt && !e.weights.handle && !e.cache.handle,
             "no memory mapped and the same addresses", "other addresses or memory still mapped");
  const bool met = double(s.freed) >= 0.99 * double(s.held);
  std::printf("target \"sleep frees at least 99%% of what the component held\": %s\n", met ? "met" : "NOT met");
  return s;
}

// A pinned host-to-device copy of the engine's weights alone, timed with events: what the wake's
// copy could reach on this link.
double pinnedCopyMs(Engine& e) {
  CUevent start = nullptr, stop = nullptr;
  CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  std::vector<double> ms;
  for (int i = 0; i < kRepeats; ++i) {
    CU_CHECK(cuEventRecord(start, e.stream));
    CU_CHECK(cuMemcpyHtoDAsync(e.weights.base, e.saved, e.bytes(), e.stream));
    CU_CHECK(cuEventRecord(stop, e.stream));
    CU_CHECK(cuEventSynchronize(stop));
    float t = 0;
    CU_CHECK(cuEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  CU_CHECK(cuEventDestroy(start));
  CU_CHECK(cuEventDestroy(stop));
  return median(ms);
}

double wakeOnce(Engine& e) {
  const CUgraphExec first = e.graphs[0];
  const wb::Stopwatch clock;
  wakeEngine(e);
  const double ms = clock.ms();
  std::printf("wake: %.1f ms (memory created and mapped at the same addresses, access granted, %s of weights "
              "copied back)\n", ms, mib(double(e.bytes())).c_str());
  bool right = true;
  for (int g = 0; g < kGraphs; ++g) right = stepIsRight(e, g) && right;
  std::printf("the same %d executable graphs (the first still %s), launched again without a capture: %s\n", kGraphs,
              wb::hex(reinterpret_cast<unsigned long long>(first)).c_str(), right ? "right" : "WRONG");
  wb::expect(right, "every graph right after the wake", "a wrong cache after the wake");
  return ms;
}

//! [link]
// The limit the wake's copy meets: the host link, as NVML names it (lesson 05).
std::optional<wb::nvml::PcieLink> hostLink(CUdevice dev) {
  char busId[32] = {0};
  CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, dev));
  std::string why;
  auto link = wb::nvml::pcieLink(busId, why);
  if (link && link->bytesPerSecond() > 0) return link;
  std::printf("NVML did not say what links this device to the host (%s)\n", why.c_str());
  return std::nullopt;
}
//! [link]

void wakeAgainstLimit(double wakeMs, double copyMs, size_t bytes, const std::optional<wb::nvml::PcieLink>& link) {
  const double copyGBs = double(bytes) / (copyMs * 1e6);
  std::printf("a pinned host-to-device copy of the weights alone: %.2f ms, %.1f GB/s (median of %d)\n", copyMs,
              copyGBs, kRepeats);
  const double copyRatio = wakeMs / copyMs;
  std::printf("the wake took %.2fx the copy alone\n", copyRatio);
  if (link) {
    const double limitMs = double(bytes) / link->bytesPerSecond() * 1e3;
    const double ratio = wakeMs / limitMs;
    std::printf("the host link: %s; the weights' copy at that rate: %.2f ms; the wake took %.2fx that\n",
                link->describe().c_str(), limitMs, ratio);
    std::printf("target \"wake within 1.2x of the time the copy's limit allows\" (the limit: the link NVML names): "
                "%s\n", ratio <= 1.2 ? "met" : "NOT met");
    wb::expect(copyGBs * 1e9 <= link->bytesPerSecond() * 1.02, "a copy no faster than the link",
               "a copy faster than the link NVML reported");
  } else {
    std::printf("target \"wake within 1.2x of the time the copy's limit allows\": measured against the pinned copy "
                "alone, the link being unknown: %s\n", copyRatio <= 1.2 ? "met" : "NOT met");
  }
}

//! [rebuild]
// The other way: everything torn down (the weights saved first), then allocated, copied, captured
// and instantiated again: the engine cannot count on getting the same addresses, so it captures again.
struct Rebuild {
  double teardownMs = 0, rebuildMs = 0;
};
Rebuild tearDownAndRebuild(Engine& e) {
  Rebuild r;
  const wb::Stopwatch down;
  CU_CHECK(cuMemcpyDtoH(e.saved, e.weights.base, e.bytes()));
  for (CUgraphExec g : e.graphs) CU_CHECK(cuGraphExecDestroy(g));
  e.graphs.clear();
  const size_t bytes = e.bytes();
  freeRegion(e.weights);
  freeRegion(e.cache);
  r.teardownMs = down.ms();
  const wb::Stopwatch up;
  e.weights = mapRegion(e.dev, bytes);
  e.cache = mapRegion(e.dev, bytes);
  CU_CHECK(cuMemcpyHtoD(e.weights.base, e.saved, bytes));
  for (int g = 0; g < kGraphs; ++g) e.graphs.push_back(captureStep(e, g));
  r.rebuildMs = up.ms();
  return r;
}
//! [rebuild]

struct Point {
  size_t bytes;
  double wakeMs, copyMs, rebuildMs;
};

// One size: kRepeats sleeps and wakes, then kRepeats teardowns and rebuilds; the medians.
Point measure(CUdevice dev, CUfunction scale, size_t bytes) {
  Engine e = buildEngine(dev, scale, bytes);
  Point p{e.bytes(), 0, 0, 0};
  std::vector<double> wake, rebuild;
  for (int i = 0; i < kRepeats; ++i) {
    sleepEngine(e);
    const wb::Stopwatch clock;
    wakeEngine(e);
    wake.push_back(clock.ms());
  }
  p.copyMs = pinnedCopyMs(e);
  for (int i = 0; i < kRepeats; ++i) rebuild.push_back(tearDownAndRebuild(e).rebuildMs);
  p.wakeMs = median(wake);
  p.rebuildMs = median(rebuild);
  const bool right = stepIsRight(e, kGraphs - 1);
  destroyEngine(e);
  wb::expect(right, "the last graph right after the sleeps, wakes and rebuilds", "a wrong cache");
  return p;
}

// PyTorch's rows (bytes,way,GB/s), written by pytorch_side.py just before this run; none when it
// did not run here.
std::vector<std::string> pytorchRows(const std::string& path) {
  std::vector<std::string> rows;
  std::ifstream in(path);
  std::string line;
  if (in && std::getline(in, line))
    while (std::getline(in, line))
      if (!line.empty()) rows.push_back(line);
  return rows;
}

wb::FigureTable figureOf(const std::vector<Point>& points, const std::optional<wb::nvml::PcieLink>& link,
                         const std::vector<std::string>& pytorch) {
  wb::FigureTable table("bytes,way,GB/s of weights made usable");
  for (const Point& p : points) {
    const double b = double(p.bytes);
    table.row("%zu,wake (create + map + access + copy back),%.2f", p.bytes, b / (p.wakeMs * 1e6));
    table.row("%zu,pinned copy alone,%.2f", p.bytes, b / (p.copyMs * 1e6));
    table.row("%zu,tear down and rebuild (allocate + copy + capture + instantiate),%.2f", p.bytes,
              b / (p.rebuildMs * 1e6));
  }
  if (!points.empty()) {
    for (const std::string& row : pytorch) table.row("%s", row.c_str());
    if (link)
      table.row("0,limit: the host link (PCIe Gen%u x%u),%.2f", link->generation, link->width,
                link->bytesPerSecond() / 1e9);
  }
  return table;
}

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson32-figure.csv", "lesson32-pytorch.csv"))
    return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops, "step 2's gate kernel would make its own launch wait for the gate"},
    });
    const std::string vectorImage = wb::verifiedImagePath("vector_ops.fatbin");
    const std::string streamsImage = wb::verifiedImagePath("streams.fatbin");
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    int vmm = 0;
    CU_CHECK(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
    if (!vmm) {
      std::printf("left out: device 0 does not support virtual memory management (cuMemCreate), "
                  "which sleep and wake are built on\n");
      CU_CHECK(cuCtxSetCurrent(nullptr));
      CU_CHECK(cuDevicePrimaryCtxRelease(dev));
      return wb::kExitOk;
    }
    CUlibrary vec = nullptr, streams = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&vec, vectorImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&streams, streamsImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const CUfunction scale = functionOf(vec, "scale");
    const wb::StreamKernels sk = wb::StreamKernels::load(streams);  // loaded before any gate closes

    wb::step(1, "Weights and a cache behind reserved addresses, and the graphs that use them");
    // Under compute-sanitizer, which checks every access of every kernel, a smaller engine.
    Engine engine = buildEngine(dev, scale, (wb::underSanitizer() ? 8 : 128) * kMiB);
    showEngine(engine);
    wb::step(2, "Refused: a stream still uses the memory");
    if (wb::underSanitizer())
      std::printf("left out under compute-sanitizer, which ran no kernel beside one that waits\n");
    else
      refuseWhileBusy(engine, sk.gate);
    wb::step(3, "Sleep: save the weights, discard the cache, keep the addresses");
    sleepOnce(engine);
    wb::step(4, "Wake: the same addresses, the same executable graphs");
    const double wakeMs = wakeOnce(engine);
    const auto link = hostLink(dev);
    wakeAgainstLimit(wakeMs, pinnedCopyMs(engine), engine.bytes(), link);
    wb::step(5, "Against tearing everything down and rebuilding it");
    const CUdeviceptr weightsWere = engine.weights.base, cacheWas = engine.cache.base;
    const Rebuild rebuilt = tearDownAndRebuild(engine);
    std::printf("tear down (save, destroy the graphs, free): %.1f ms; rebuild (allocate, copy back, capture and "
                "instantiate %d graphs): %.1f ms, against the wake's %.1f ms\n", rebuilt.teardownMs, kGraphs,
                rebuilt.rebuildMs, wakeMs);
    const bool right = stepIsRight(engine, 1);
    const bool moved = engine.weights.base != weightsWere || engine.cache.base != cacheWas;
    std::printf("the rebuilt regions are at %s addresses (weights %s, cache %s); its %d graphs are new ones; "
                "graph 1 right: %s\n", moved ? "other" : "the same", wb::hex(engine.weights.base).c_str(),
                wb::hex(engine.cache.base).c_str(), kGraphs, right ? "yes" : "no");
    wb::expect(right, "the rebuilt graph's result", "a wrong cache");
    destroyEngine(engine);

    wb::step(6, "Wake against the copy's limit and against a rebuild, by size");
    std::vector<Point> points;
    if (wb::underSanitizer()) {
      std::printf("left out under compute-sanitizer, which slows every call: the times would mean nothing\n");
    } else {
      std::printf("%10s %10s %10s %10s   GB/s of weights made usable: wake, copy alone, rebuild\n", "weights",
                  "wake ms", "copy ms", "rebuild ms");
      for (size_t mibs : {32, 128, 512}) {
        points.push_back(measure(dev, scale, mibs * kMiB));
        const Point& p = points.back();
        const double b = double(p.bytes) / 1e6;
        std::printf("%10s %10.2f %10.2f %10.2f   %.1f, %.1f, %.1f\n", mib(double(p.bytes)).c_str(), p.wakeMs,
                    p.copyMs, p.rebuildMs, b / p.wakeMs, b / p.copyMs, b / p.rebuildMs);
      }
      if (link) std::printf("the host link: %.1f GB/s per direction\n", link->bytesPerSecond() / 1e9);
    }
    const std::vector<std::string> pytorch = paths.pytorch.empty() ? std::vector<std::string>{}
                                                                   : pytorchRows(paths.pytorch);
    if (pytorch.empty())
      std::printf("PyTorch not measured in this run (pytorch_side.py writes its table where torch and a GPU are)\n");
    else
      for (const std::string& row : pytorch) std::printf("PyTorch, from pytorch_side.py: %s\n", row.c_str());

    CU_CHECK(cuLibraryUnload(streams));
    CU_CHECK(cuLibraryUnload(vec));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return figureOf(points, link, pytorch).save(paths.csv, 6);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

// Lesson 18: peers: two GPUs in one process.
//
// What you learn: whether a device may use another device's memory is a property of the pair and of
// the direction (cuDeviceCanAccessPeer); cuDeviceGetP2PAttribute says more about the link, never
// its name, which NVML tells, with the limits every bandwidth below is stated against. cuMemcpyPeer
// copies with or without peer access; cuCtxEnablePeerAccess grants the current context access to a
// peer context's memory, one direction, and names its errors. With access, a kernel on device 1 uses
// device 0's memory through the same pointer; without, it does not succeed (shown in a child). Then
// the figure: peer copies with and without access against staging through host memory. With one
// device, or two that cannot access each other, each step that needs them says why it cannot run.
//
// APIs: cuDeviceGetCount, cuDeviceCanAccessPeer, cuDeviceGetP2PAttribute, cuDeviceGetPCIBusId,
//       cuCtxEnablePeerAccess, cuCtxDisablePeerAccess, cuMemcpyPeer, cuMemcpyPeerAsync,
//       cuMemHostAlloc, cuMemcpyDtoH, cuMemcpyHtoD, cuLaunchKernel, cuLibraryGetKernel
//       (and NVML's link queries, through common/nvml.hpp)
// Run:  ctest -R lesson18   (or build/lessons/lesson18-multi-gpu [--csv lesson18-figure.csv])
#include "device_contexts.hpp"  // On, allocOn, freeOn, readBack, setWords: shared with the tests
#include "figure.hpp"
#include "launch.hpp"
#include "nvml.hpp"
#include "process.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using wb::allocOn, wb::deviceName, wb::freeOn, wb::On, wb::readBack, wb::setWords;

constexpr unsigned kChildSeconds = 30;  // the faulting child is ended after this: nothing hangs

// fill and scale of kernels/vector_ops.cu, as CUkernels: each runs on the device of the context
// that is current at its launch.
struct Kernels { CUfunction fill = nullptr, scale = nullptr; };

// Device 0 and device 1 with their primary contexts. With one device, dev1 and ctx1 stay unset.
struct Pair {
  int count = 0;
  CUdevice dev0 = 0, dev1 = 0;
  CUcontext ctx0 = nullptr, ctx1 = nullptr;
  int can01 = 0, can10 = 0;  // cuDeviceCanAccessPeer(0, 1) and (1, 0)
  bool two() const { return count >= 2; }
  bool accessBothWays() const { return can01 == 1 && can10 == 1; }
};

// Whether a step that needs two devices (that can access each other's memory) can run here; where
// not, it says why and what the step would show.
bool canRun(const Pair& p, bool needsAccess, const char* wouldShow) {
  std::string why;
  if (!p.two())
    why = "this machine has one CUDA device";
  else if (needsAccess && !p.accessBothWays())
    why = "devices 0 and 1 cannot access each other's memory both ways (cuDeviceCanAccessPeer: 0 -> 1 gives " +
          std::to_string(p.can01) + ", 1 -> 0 gives " + std::to_string(p.can10) +
          "; over PCIe on bare-metal Linux, an IOMMU that is on is the first thing to check)";
  if (!why.empty())
    std::printf("skipped: %s. With two devices%s, this step %s.\n", why.c_str(),
                needsAccess ? " that can access each other" : "", wouldShow);
  return why.empty();
}

void fill(const Kernels& k, CUdeviceptr p, float value, unsigned n, CUstream s = nullptr) {
  void* args[] = {&p, &value, &n};
  wb::launch(k.fill, "fill", (n + 255) / 256, 256, args, s);
}

void scale(const Kernels& k, CUdeviceptr p, float factor, float offset, unsigned n) {
  void* args[] = {&p, &factor, &offset, &n};
  wb::launch(k.scale, "scale", (n + 255) / 256, 256, args);
}

//! [can-access]
// For every ordered pair of devices: may contexts on the first access memory on the second? The
// question has a direction, so the table has one: row dev, column peer.
void whoCanAccess(const Pair& p) {
  std::printf("%d CUDA device(s)\n", p.count);
  if (p.two()) {
    std::printf("cuDeviceCanAccessPeer(dev, peer), 1: contexts on dev may access memory on peer\n%8s", "");
    for (int peer = 0; peer < p.count; ++peer) std::printf(" peer %d", peer);
    std::printf("\n");
    for (int dev = 0; dev < p.count; ++dev) {
      std::printf("  dev %d ", dev);
      for (int peer = 0; peer < p.count; ++peer) {
        CUdevice a = 0, b = 0;
        CU_CHECK(cuDeviceGet(&a, dev));
        CU_CHECK(cuDeviceGet(&b, peer));
        int can = 0;
        if (dev != peer) CU_CHECK(cuDeviceCanAccessPeer(&can, a, b));
        std::printf(" %6s", dev == peer ? "-" : std::to_string(can).c_str());
      }
      std::printf("\n");
    }
  }
  //! [can-access]
  //! [self]
  // A device with itself is no pair the reference defines an answer for: the output shows what this
  // driver says. cuDeviceGetP2PAttribute is documented to refuse it.
  int self = -1, value = -1;
  const CUresult asked = cuDeviceCanAccessPeer(&self, p.dev0, p.dev0);
  const CUresult attribute =
      cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, p.dev0, p.dev0);
  std::printf("device 0 with itself: cuDeviceCanAccessPeer returns %s, answering %d; "
              "cuDeviceGetP2PAttribute returns %s\n", wb::errorName(asked).c_str(), self,
              wb::errorName(attribute).c_str());
  wb::expect(attribute == CUDA_ERROR_INVALID_DEVICE,
             "cuDeviceGetP2PAttribute refusing a device paired with itself",
             "it returned " + wb::errorName(attribute));
  canRun(p, false, "prints, for every ordered pair, whether one may access the other's memory");
}
//! [self]

// What cuDeviceGetP2PAttribute says about the link from src to dst: -1 where the toolkit's header
// or the driver lacks the attribute.
struct Link {
  int access = 0, rank = 0, atomics = 0, arrays = 0, partialAtomics = -1;
};

//! [link]
Link linkFrom(CUdevice src, CUdevice dst) {
  Link l;
  CU_CHECK(cuDeviceGetP2PAttribute(&l.access, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, src, dst));
  CU_CHECK(cuDeviceGetP2PAttribute(&l.rank, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, src, dst));
  CU_CHECK(cuDeviceGetP2PAttribute(&l.atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, src, dst));
  CU_CHECK(cuDeviceGetP2PAttribute(&l.arrays, CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, src, dst));
#if CUDA_VERSION >= 13000  // not in CUDA 12.6's header; a driver older than the header refuses it
  const CUresult rc = cuDeviceGetP2PAttribute(
      &l.partialAtomics, CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED, src, dst);
  if (rc == CUDA_ERROR_INVALID_VALUE) l.partialAtomics = -1;
  else CU_CHECK(rc);
#endif
  return l;
}

// Where each device sits on the PCI bus: the driver's name for it that other tools share.
std::string busId(CUdevice dev) {
  char id[32] = {};
  CU_CHECK(cuDeviceGetPCIBusId(id, sizeof id, dev));
  return id;
}
//! [link]

//! [nvml-links]
// What joins the devices, which the driver does not say, from NVML (common/nvml.hpp): each device's
// PCIe link to the host, and the NVLinks from device 0 to device 1. Where NVML cannot answer, the
// reason is kept, and no bandwidth below is stated against that limit.
struct Links {
  std::optional<wb::nvml::PcieLink> pcie0, pcie1;
  std::optional<wb::nvml::NvLinks> nvlinks;
  std::string why0, why1, whyNvlinks;
  bool noNvlink = false;  // NVML answered, and no active NVLink joins the two
};

Links linksOf(const Pair& p) {
  Links l;
  l.pcie0 = wb::nvml::pcieLink(busId(p.dev0), l.why0);
  if (!p.two()) return l;
  l.pcie1 = wb::nvml::pcieLink(busId(p.dev1), l.why1);
  l.nvlinks = wb::nvml::nvlinksBetween(busId(p.dev0), busId(p.dev1), l.whyNvlinks);
  l.noNvlink = !l.nvlinks && l.whyNvlinks.rfind("no active NVLink", 0) == 0;  // nvml.cpp's answer for none
  return l;
}

void printLinks(const Pair& p, const Links& l) {
  const auto host = [](const std::optional<wb::nvml::PcieLink>& link, const std::string& why) {
    return link ? link->describe() : "NVML did not say (" + why + ")";
  };
  std::printf("device 0's link to the host: %s\n", host(l.pcie0, l.why0).c_str());
  if (!p.two()) return;
  std::printf("device 1's link to the host: %s\n", host(l.pcie1, l.why1).c_str());
  const std::string between =
      l.nvlinks ? l.nvlinks->describe()
                : "no NVLink (NVML: " + l.whyNvlinks + ")" + (l.noNvlink ? ": any peer path is PCIe" : "");
  std::printf("between device 0 and device 1: %s\n", between.c_str());
}
//! [nvml-links]

//! [link-table]
// The attributes both ways, beside the bus IDs: all the driver reports about the link. It does
// not say what the link is; NVML does, for the same bus IDs (as does nvidia-smi topo -m).
void whatTheLinkIs(const Pair& p, const Links& links) {
  std::printf("device 0: %s, PCI %s\n", deviceName(p.dev0).c_str(), busId(p.dev0).c_str());
  if (!p.two()) {
    printLinks(p, links);
    return (void)canRun(p, false, "prints what cuDeviceGetP2PAttribute and NVML report for the pair");
  }
  std::printf("device 1: %s, PCI %s\n", deviceName(p.dev1).c_str(), busId(p.dev1).c_str());
  const Link a = linkFrom(p.dev0, p.dev1), b = linkFrom(p.dev1, p.dev0);
  const auto row = [](const char* name, int x, int y) {  // -1: unknown to this toolkit or driver
    const auto cell = [](int v) { return v < 0 ? std::string("-") : std::to_string(v); };
    std::printf("  %-38s %8s %8s\n", name, cell(x).c_str(), cell(y).c_str());
  };
  std::printf("cuDeviceGetP2PAttribute(what, src, dst): %13s %8s\n", "0 -> 1", "1 -> 0");
  row("ACCESS_SUPPORTED", a.access, b.access);
  row("PERFORMANCE_RANK (0: the best link)", a.rank, b.rank);
  row("NATIVE_ATOMIC_SUPPORTED", a.atomics, b.atomics);
  row("CUDA_ARRAY_ACCESS_SUPPORTED", a.arrays, b.arrays);
  row("ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED", a.partialAtomics, b.partialAtomics);
  // The references do not say that the two answers agree: the output shows whether they did here.
  std::printf("ACCESS_SUPPORTED %s cuDeviceCanAccessPeer, both ways\n",
              a.access == p.can01 && b.access == p.can10 ? "agrees with" : "DIFFERS from");
  printLinks(p, links);
}
//! [link-table]

//! [memcpy-peer]
// A round trip 0 -> 1 -> 0 with cuMemcpyPeer while no peer access is enabled either way. A copy
// between device memories may return before it is done (the reference's notes on synchronous
// calls), and it belongs to neither context alone: both are synchronised before reading.
void copyWithoutAccess(const Pair& p) {
  constexpr size_t n = 1u << 20, bytes = n * sizeof(unsigned);  // 4 MiB
  std::vector<unsigned> pattern(n);
  for (size_t i = 0; i < n; ++i) pattern[i] = static_cast<unsigned>(i * 2654435761u);
  const CUdeviceptr from0 = allocOn(p.ctx0, bytes), back0 = allocOn(p.ctx0, bytes),
                    on1 = allocOn(p.ctx1, bytes);
  {
    On current(p.ctx0);
    CU_CHECK(cuMemcpyHtoD(from0, pattern.data(), bytes));
  }
  CU_CHECK(cuMemcpyPeer(on1, p.ctx1, from0, p.ctx0, bytes));
  wb::synchronize(p.ctx0), wb::synchronize(p.ctx1);
  CU_CHECK(cuMemcpyPeer(back0, p.ctx0, on1, p.ctx1, bytes));
  wb::synchronize(p.ctx0), wb::synchronize(p.ctx1);
  const std::vector<unsigned> back = readBack<unsigned>(p.ctx0, back0, n);
  const auto firstWrong = std::mismatch(back.begin(), back.end(), pattern.begin()).first;
  const size_t same = static_cast<size_t>(firstWrong - back.begin());
  std::printf("cuMemcpyPeer 0 -> 1, then 1 -> 0, no peer access enabled: the first %zu of %zu words came "
              "back as sent\n", same, n);
  wb::expect(same == n, "cuMemcpyPeer copying both ways without peer access", "other words came back");
  for (CUdeviceptr q : {from0, back0}) freeOn(p.ctx0, q);
  freeOn(p.ctx1, on1);
}
//! [memcpy-peer]

//! [memcpy-peer-async]
// cuMemcpyPeerAsync is ordered in its stream like any copy: a kernel on device 0 fills the source
// in stream s, the copy to device 1 follows in s, and the host waits only at the end.
void copyInStreamOrder(const Pair& p, const Kernels& k) {
  constexpr unsigned n = 1u << 20;
  const size_t bytes = size_t{n} * sizeof(float);
  const CUdeviceptr src = allocOn(p.ctx0, bytes), dst = allocOn(p.ctx1, bytes);
  setWords(p.ctx1, dst, 0, n);
  On current(p.ctx0);
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  fill(k, src, 7.0f, n, s);  // on device 0, in s
  CU_CHECK(cuMemcpyPeerAsync(dst, p.ctx1, src, p.ctx0, bytes, s));
  CU_CHECK(cuStreamSynchronize(s));
  const std::vector<float> got = readBack<float>(p.ctx1, dst, n);
  const size_t sevens = static_cast<size_t>(std::count(got.begin(), got.end(), 7.0f));
  std::printf(
      "fill(7.0) on device 0, then cuMemcpyPeerAsync to device 1, one stream: %zu of %u values are 7.0\n",
      sevens, n);
  wb::expect(sevens == n, "the copy following the kernel in its stream", "other values arrived");
  CU_CHECK(cuStreamDestroy(s));
  CU_CHECK(cuMemFree(src));
  freeOn(p.ctx1, dst);
}
//! [memcpy-peer-async]

//! [enable-errors]
// What one device can show: a context paired with itself is refused (the reference lists
// CUDA_ERROR_INVALID_CONTEXT for it, and CUDA_ERROR_PEER_ACCESS_UNSUPPORTED where the device
// cannot access the peer's device), and both calls need a current context.
void enableErrorsOnOneDevice(const Pair& p) {
  CUresult self = CUDA_SUCCESS;
  {
    On current(p.ctx0);
    self = cuCtxEnablePeerAccess(p.ctx0, 0);
    if (self == CUDA_SUCCESS) CU_CHECK(cuCtxDisablePeerAccess(p.ctx0));  // never leave it changed
  }
  CUcontext was = nullptr;
  CU_CHECK(cuCtxGetCurrent(&was));
  CU_CHECK(cuCtxSetCurrent(nullptr));
  const CUresult enableNone = cuCtxEnablePeerAccess(p.ctx0, 0), disableNone = cuCtxDisablePeerAccess(p.ctx0);
  CU_CHECK(cuCtxSetCurrent(was));
  std::printf("cuCtxEnablePeerAccess(the current context itself): %s\n", wb::errorName(self).c_str());
  std::printf("with no current context: cuCtxEnablePeerAccess %s, cuCtxDisablePeerAccess %s\n",
              wb::errorName(enableNone).c_str(), wb::errorName(disableNone).c_str());
  wb::expect(self == CUDA_ERROR_INVALID_CONTEXT || self == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
             "a context refused as its own peer", "it returned " + wb::errorName(self));
  wb::expect(enableNone == CUDA_ERROR_INVALID_CONTEXT && disableNone == CUDA_ERROR_INVALID_CONTEXT,
             "both calls refusing to run with no current context", "other results");
}
//! [enable-errors]

//! [enable]
// Access is granted to the current context, for the memory of the context named: device 1's
// context is made current to gain access to device 0's memory, and only that direction opens.
void enableOneDirection(const Pair& p) {
  CUresult first = CUDA_SUCCESS, again = first, otherWay = first, badFlags = first, off = first,
           offAgain = first;
  {
    On current(p.ctx1);
    first = cuCtxEnablePeerAccess(p.ctx0, 0);  // device 1 may now access device 0's memory
    again = cuCtxEnablePeerAccess(p.ctx0, 0);
  }
  {
    On current(p.ctx0);
    otherWay = cuCtxDisablePeerAccess(p.ctx1);  // was device 0 granted device 1's memory?
    badFlags = cuCtxEnablePeerAccess(p.ctx1, 1);
    if (badFlags == CUDA_SUCCESS) CU_CHECK(cuCtxDisablePeerAccess(p.ctx1));
  }
  {
    On current(p.ctx1);
    off = cuCtxDisablePeerAccess(p.ctx0);
    offAgain = cuCtxDisablePeerAccess(p.ctx0);
  }
  //! [enable]
  //! [enable-report]
  const auto line = [](const char* what, CUresult rc) {
    std::printf("  %-62s %s\n", what, wb::errorName(rc).c_str());
  };
  line("device 1's context current: cuCtxEnablePeerAccess(device 0's)", first);
  line("the same call again", again);
  line("device 0's context current: cuCtxDisablePeerAccess(device 1's)", otherWay);
  line("device 0's context current: cuCtxEnablePeerAccess(device 1's, 1)", badFlags);
  line("device 1's context current: cuCtxDisablePeerAccess(device 0's)", off);
  line("the same call again", offAgain);
  wb::expect(first == CUDA_SUCCESS && again == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
             "access enabled once, the second call refused as already enabled", "other results");
  wb::expect(otherWay == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "the other direction not enabled by it",
             "disabling it returned " + wb::errorName(otherWay));
  wb::expect(badFlags == CUDA_ERROR_INVALID_VALUE, "flags other than 0 refused",
             "it returned " + wb::errorName(badFlags));
  wb::expect(off == CUDA_SUCCESS && offAgain == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
             "access disabled once, the second call refused as not enabled", "other results");
}
//! [enable-report]

//! [kernel-access]
// With access enabled from device 1's context, a kernel on device 1 reads and writes device 0's
// memory through the pointer device 0 uses: scale(x2 + 1) turns device 0's 1.5 into 4.0.
void kernelOnPeerMemory(const Pair& p, const Kernels& k) {
  constexpr unsigned n = 1u << 20;
  const CUdeviceptr on0 = allocOn(p.ctx0, size_t{n} * sizeof(float));
  {
    On current(p.ctx0);
    fill(k, on0, 1.5f, n);  // on device 0
    CU_CHECK(cuCtxSynchronize());
  }
  {
    On current(p.ctx1);
    CU_CHECK(cuCtxEnablePeerAccess(p.ctx0, 0));
    scale(k, on0, 2.0f, 1.0f, n);  // on device 1, over device 0's memory
    CU_CHECK(cuCtxSynchronize());
    CU_CHECK(cuCtxDisablePeerAccess(p.ctx0));
  }
  const std::vector<float> v = readBack<float>(p.ctx0, on0, n);
  const size_t fours = static_cast<size_t>(std::count(v.begin(), v.end(), 4.0f));
  std::printf(
      "fill(1.5) on device 0, scale(x2 + 1) on device 1 over the same pointer: %zu of %u values are 4.0\n",
      fours, n);
  wb::expect(fours == n, "device 1's kernel reading and writing device 0's memory", "other values");
  freeOn(p.ctx0, on0);
}
//! [kernel-access]

//! [child]
// In a child: the same kernel on device 1 over device 0's memory, with no peer access enabled. No
// cleaning up: after a fault every call fails, and the process's end takes the contexts (lesson 10).
int childNoAccess() {
  CU_CHECK(cuInit(0));
  CUdevice dev0 = 0, dev1 = 0;
  CU_CHECK(cuDeviceGet(&dev0, 0));
  CU_CHECK(cuDeviceGet(&dev1, 1));
  CUcontext ctx0 = nullptr, ctx1 = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx0, dev0));
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx1, dev1));
  CUlibrary library = nullptr;
  CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr,
                                 nullptr, 0, nullptr, nullptr, 0));
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library, "scale"));
  unsigned n = 1u << 20;
  CUdeviceptr on0 = allocOn(ctx0, size_t{n} * sizeof(float));
  setWords(ctx0, on0, 0, n);
  //! [child]
  //! [child-2]
  CU_CHECK(cuCtxSetCurrent(ctx1));  // device 1; no cuCtxEnablePeerAccess
  float factor = 2.0f, offset = 1.0f;
  void* args[] = {&on0, &factor, &offset, &n};
  const CUresult launched = cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), (n + 255) / 256, 1, 1, 256,
                                           1, 1, 0, nullptr, args, nullptr);
  const CUresult synced = launched == CUDA_SUCCESS ? cuCtxSynchronize() : launched;
  std::printf(
      "  in the child: cuLaunchKernel(scale) on device 1 over device 0's memory: %s; cuCtxSynchronize: %s\n",
      wb::errorName(launched).c_str(), wb::errorName(synced).c_str());
  std::fflush(stdout);
  std::_Exit(launched == CUDA_SUCCESS && synced == CUDA_SUCCESS ? 11 : 10);
}
//! [child-2]

// What the program says, first thing, of each variable that is set (common/environment.cpp has what
// each does). It Controls those that change how a faulting child ends: the child runs without them.
const std::vector<wb::EnvUse> kEnvironment = {
    {"CUDA_VISIBLE_DEVICES", wb::Under::Teaches,
     "devices 0 and 1 are the first two it lists; with one listed, the steps that need two say why they are "
     "skipped"},
    {"CUDA_LAUNCH_BLOCKING", wb::Under::Controls, "the faulting child of step 5 runs without it"},
    {"CUDA_DEVICE_WAITS_ON_EXCEPTION", wb::Under::Controls, "the child of step 5 runs without it: a fault ends it"},
    {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", wb::Under::Controls, "the child of step 5 runs without it: no core file"},
    {"CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION", wb::Under::Controls, "the child of step 5 runs without it"},
    {"CUDA_ENABLE_LIGHTWEIGHT_COREDUMP", wb::Under::Controls, "the child of step 5 runs without it"},
    {"CUDA_ENABLE_USER_TRIGGERED_COREDUMP", wb::Under::Controls, "the child of step 5 runs without it"},
    {"CUDA_COREDUMP_FILE", wb::Under::Controls, "the child of step 5 runs without it"},
    {"CUDA_COREDUMP_PIPE", wb::Under::Controls, "the child of step 5 runs without it"},
    {"CUDA_COREDUMP_SHOW_PROGRESS", wb::Under::Controls, "the child of step 5 runs without it"},
    {"CUDA_COREDUMP_GENERATION_FLAGS", wb::Under::Controls, "the child of step 5 runs without it"},
};

//! [no-access]
// The parent starts the child with a time limit and reads how it ended: exit code 10 when the
// launch or the synchronisation failed, 11 when the access succeeded; a signal means it died.
void kernelWithoutAccess() {
  std::vector<std::string> env;  // bare names: removed
  for (const wb::EnvUse& u : kEnvironment)
    if (u.how == wb::Under::Controls) env.push_back(u.variable);
  const wb::ProcessEnd end = wb::runProcess({wb::selfPath(), "--child", "no-access"}, env, kChildSeconds);
  std::printf("%s", end.output.c_str());
  const std::string how = end.timedOut ? "it hung and was ended after " + std::to_string(kChildSeconds) + " s"
                          : end.signal ? "it was killed by signal " + std::to_string(end.signal)
                                       : "it exited with code " + std::to_string(end.code);
  std::printf("  (the child: %s)\n", how.c_str());
  wb::expect(!end.timedOut && (end.signal != 0 || end.code == 10),
             "the access without peer access failing in the child", how);
}
//! [no-access]

struct Rate {
  size_t bytes;
  double withAccess, withoutAccess, staged;  // GB/s
};

//! [time-copy]
// GB/s of a copy's best time (wb::bestMs, common/device_contexts.hpp: best of 5 after a warm-up).
template <class Copy>
double bestGBs(size_t bytes, Copy&& copy) { return static_cast<double>(bytes) / (wb::bestMs(copy) * 1e6); }

// The copy by the driver, in a stream of device 0's context; the host waits for the stream.
void peerCopy(const Pair& p, CUstream s, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  On current(p.ctx0);
  CU_CHECK(cuMemcpyPeerAsync(dst, p.ctx1, src, p.ctx0, bytes, s));
  CU_CHECK(cuStreamSynchronize(s));
}
//! [time-copy]

//! [staged]
// Staging by hand: down into pinned host memory (CU_MEMHOSTALLOC_PORTABLE: pinned for both
// contexts) from device 0, then up from it to device 1. Each call returns once its copy is done.
void stagedCopy(const Pair& p, void* pinned, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  {
    On current(p.ctx0);
    CU_CHECK(cuMemcpyDtoH(pinned, src, bytes));
  }
  On current(p.ctx1);
  CU_CHECK(cuMemcpyHtoD(dst, pinned, bytes));
}
//! [staged]

// Whether the first and last 4 KiB of dst hold word after a copy: a measurement of a copy that
// delivered wrong bytes would be no measurement.
bool arrived(const Pair& p, CUdeviceptr dst, size_t bytes, unsigned word) {
  const size_t n = 1024, last = bytes / sizeof(unsigned) - n;
  const std::vector<unsigned> head = readBack<unsigned>(p.ctx1, dst, n);
  const std::vector<unsigned> tail = readBack<unsigned>(p.ctx1, dst + last * sizeof(unsigned), n);
  return std::count(head.begin(), head.end(), word) == static_cast<std::ptrdiff_t>(n) &&
         std::count(tail.begin(), tail.end(), word) == static_cast<std::ptrdiff_t>(n);
}

void setAccess(const Pair& p, bool enable) {
  for (const auto& [from, to] : {std::pair{p.ctx0, p.ctx1}, std::pair{p.ctx1, p.ctx0}}) {
    On current(from);
    CU_CHECK(enable ? cuCtxEnablePeerAccess(to, 0) : cuCtxDisablePeerAccess(to));
  }
}

//! [figure]
// 64 KiB to 256 MiB from device 0 to device 1, three ways: cuMemcpyPeerAsync with no peer access
// enabled, the same with access enabled both ways, and staged by hand. Each way's bytes are
// checked once, at the largest size, before any time is believed.
std::vector<Rate> peerAgainstStaged(const Pair& p) {
  const size_t largest = 256u << 20;
  const unsigned word = 0xA5C3E1F0u;
  const CUdeviceptr src = allocOn(p.ctx0, largest), dst = allocOn(p.ctx1, largest);
  void* pinned = nullptr;
  CU_CHECK(cuMemHostAlloc(&pinned, largest, CU_MEMHOSTALLOC_PORTABLE));
  setWords(p.ctx0, src, word, largest / 4);
  CUstream s = nullptr;
  {
    On current(p.ctx0);
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  }
  const auto checked = [&](auto&& copy) {
    setWords(p.ctx1, dst, 0, largest / 4);
    copy(largest);
    wb::expect(arrived(p, dst, largest, word), "each way delivering the bytes it is timed on",
               "wrong bytes arrived");
  };
  //! [figure]
  //! [figure-2]
  const auto peer = [&](size_t bytes) { peerCopy(p, s, dst, src, bytes); };
  const auto staged = [&](size_t bytes) { stagedCopy(p, pinned, dst, src, bytes); };
  std::vector<Rate> rates;
  checked(peer);
  for (size_t bytes = 64u << 10; bytes <= largest; bytes *= 8)
    rates.push_back({bytes, 0, bestGBs(bytes, [&] { peer(bytes); }), 0});
  setAccess(p, true);
  checked(peer);
  checked(staged);
  for (Rate& r : rates) {
    r.withAccess = bestGBs(r.bytes, [&] { peer(r.bytes); });
    r.staged = bestGBs(r.bytes, [&] { staged(r.bytes); });
  }
  setAccess(p, false);
  {
    On current(p.ctx0);
    CU_CHECK(cuStreamDestroy(s));
  }
  CU_CHECK(cuMemFreeHost(pinned));
  freeOn(p.ctx0, src);
  freeOn(p.ctx1, dst);
  return rates;
}
//! [figure-2]

//! [limits]
// The limits the copies meet, in GB/s, from the links NVML reported (0 where it could not say): the
// link between the devices; both host links one after the other, 1 / (1/L0 + 1/L1); the slower one.
struct Limits {
  double peer = 0, staged = 0, host = 0;
  std::string peerName;
};

Limits limitsOf(const Links& l) {
  Limits lim;
  const double l0 = l.pcie0 ? l.pcie0->bytesPerSecond() / 1e9 : 0,
               l1 = l.pcie1 ? l.pcie1->bytesPerSecond() / 1e9 : 0;
  if (l0 > 0 && l1 > 0) lim.staged = 1 / (1 / l0 + 1 / l1), lim.host = std::min(l0, l1);
  if (l.nvlinks)
    lim.peer = l.nvlinks->bytesPerSecond() / 1e9, lim.peerName = "the NVLinks between the devices";
  else if (l.noNvlink && lim.host > 0)
    lim.peer = lim.host, lim.peerName = "the slower PCIe link (no NVLink joins them)";
  return lim;
}
//! [limits]

// "0.82 of the NVLinks between the devices (478.1 GB/s)", or why there is no fraction.
std::string against(double gbps, double limit, const std::string& what) {
  char text[200];
  if (limit > 0)
    std::snprintf(text, sizeof text, "%.2f of %s (%.1f GB/s)", gbps / limit, what.c_str(), limit);
  else
    std::snprintf(text, sizeof text, "no limit known for %s (step 2 says why)", what.c_str());
  return text;
}

//! [figure-table]
// The table, then each way at the largest size against the limit of its links and the staged copy.
void reportRates(const std::vector<Rate>& rates, const Limits& lim) {
  std::printf("device 0 -> device 1, GB/s (best of 5 after a warm-up, host clock around each whole copy):\n");
  std::printf("  %10s  %20s  %24s  %16s\n", "size", "peer access enabled", "peer access not enabled",
              "staged by hand");
  for (const Rate& r : rates)
    std::printf("  %10s  %20.2f  %24.2f  %16.2f\n", wb::bytes(r.bytes).c_str(), r.withAccess, r.withoutAccess,
                r.staged);
  const Rate& big = rates.back();
  std::printf("at %s:\n", wb::bytes(big.bytes).c_str());
  std::printf(
      "  peer access enabled:     %.1f GB/s, %s; %.1fx the staged copy\n", big.withAccess,
      against(big.withAccess, lim.peer, lim.peer > 0 ? lim.peerName : "the link between the devices").c_str(),
      big.withAccess / big.staged);
  std::printf("  peer access not enabled: %.1f GB/s, %s; %.1fx the staged copy, %.2fx the peer copy\n",
              big.withoutAccess, against(big.withoutAccess, lim.host, "the slower host link").c_str(),
              big.withoutAccess / big.staged, big.withoutAccess / big.withAccess);
  std::printf("  staged by hand:          %.1f GB/s, %s\n", big.staged,
              against(big.staged, lim.staged, "two host-link crossings one after the other").c_str());
}
//! [figure-table]

//! [figure-claims]
// What the page claims of these numbers: no copy faster than the links it crosses allow, and, where
// NVLink joins the devices with a limit above what staging can reach, the peer copy faster than
// staging. Otherwise (PCIe, or a narrow NVLink) it claims no order.
void checkRates(const Rate& big, const Limits& lim, const Links& links) {
  const bool nearerPeer = std::fabs(std::log(big.withoutAccess / big.withAccess)) <
                          std::fabs(std::log(big.withoutAccess / big.staged));
  std::printf("without peer access, cuMemcpyPeerAsync came nearer the %s\n",
              nearerPeer ? "peer copy" : "staged copy");
  wb::expect((lim.peer == 0 || big.withAccess <= lim.peer * 1.01) &&
                 (lim.staged == 0 || big.staged <= lim.staged * 1.01),
             "each copy within the limit of the links it crosses",
             "a copy measured faster than its links allow");
  if (links.nvlinks && lim.staged > 0 && lim.peer > lim.staged)
    wb::expect(big.withAccess > big.staged,
               "the copy over NVLink faster than staging through host memory at " + wb::bytes(big.bytes),
               "it was not faster there");
  else
    std::printf("the links do not settle which way is faster here (no NVLink, a narrow one, or a limit NVML "
                "did not give): the lesson claims no order\n");
}
//! [figure-claims]

wb::FigureTable tableOf(const std::vector<Rate>& rates, const Limits& lim, const Links& links) {
  wb::FigureTable table("bytes,way,GB/s");
  for (const Rate& r : rates) {
    table.row("%zu,peer access enabled,%.3f", r.bytes, r.withAccess);
    table.row("%zu,peer access not enabled,%.3f", r.bytes, r.withoutAccess);
    table.row("%zu,staged by hand,%.3f", r.bytes, r.staged);
  }
  if (rates.empty()) return table;
  // Lines across the plot: docs/figure_plot.cpp draws a row at x 0 whose name begins "limit: " as one.
  const std::string peerLink =
      links.nvlinks ? std::to_string(links.nvlinks->links) + " NVLinks" : std::string("PCIe: the slower link");
  if (lim.peer > 0) table.row("0,limit: %s,%.3f", peerLink.c_str(), lim.peer);
  if (lim.host > 0 && lim.host != lim.peer) table.row("0,limit: PCIe: the slower host link,%.3f", lim.host);
  return table;
}

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  wb::FigurePaths paths;
  try {
    if (!args.empty() && args[0] == "--child") {
      if (args.size() == 2 && args[1] == "no-access") return childNoAccess();
      return std::fprintf(stderr, "usage: lesson18-multi-gpu --child no-access\n"), wb::kExitUsage;
    }
    if (!wb::parseFigureArgs(argc, argv, paths, "lesson18-figure.csv")) return wb::kExitUsage;
    wb::checkEnvironment(kEnvironment);
    // The image is checked before the driver starts: a damaged one stops the program in a moment.
    const std::string image = wb::verifiedImagePath("vector_ops.fatbin");
    CU_CHECK(cuInit(0));
    Pair p;
    CU_CHECK(cuDeviceGetCount(&p.count));
    CU_CHECK(cuDeviceGet(&p.dev0, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&p.ctx0, p.dev0));
    CU_CHECK(cuCtxSetCurrent(p.ctx0));
    if (p.two()) {
      CU_CHECK(cuDeviceGet(&p.dev1, 1));
      CU_CHECK(cuDevicePrimaryCtxRetain(&p.ctx1, p.dev1));
      CU_CHECK(cuDeviceCanAccessPeer(&p.can01, p.dev0, p.dev1));
      CU_CHECK(cuDeviceCanAccessPeer(&p.can10, p.dev1, p.dev0));
    }
    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&library, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel fillKernel = nullptr, scaleKernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&fillKernel, library, "fill"));
    CU_CHECK(cuLibraryGetKernel(&scaleKernel, library, "scale"));
    const Kernels k{reinterpret_cast<CUfunction>(fillKernel), reinterpret_cast<CUfunction>(scaleKernel)};
    // Under compute-sanitizer (WORKBOOK_UNDER_SANITIZER) every call is slowed: times mean nothing there.
    const bool sanitized = wb::underSanitizer();

    wb::step(1, "Which device can access which");
    whoCanAccess(p);
    wb::step(2, "What the driver says about the link");
    const Links links = linksOf(p);
    const Limits limits = limitsOf(links);
    whatTheLinkIs(p, links);
    wb::step(3, "cuMemcpyPeer needs no peer access");
    if (canRun(p, false,
               "copies 4 MiB from device 0 to device 1 and back with cuMemcpyPeer, with no peer access enabled, and "
               "shows cuMemcpyPeerAsync following a kernel in its stream")) {
      copyWithoutAccess(p);
      copyInStreamOrder(p, k);
    }
    wb::step(4, "Enabling access, one direction at a time");
    enableErrorsOnOneDevice(p);
    if (canRun(p, true,
               "enables access from device 1's context to device 0's memory and shows what each call returns, both "
               "ways, twice"))
      enableOneDirection(p);
    wb::step(5, "A kernel on device 1 uses device 0's memory");
    if (canRun(p, true,
               "runs a kernel on device 1 over device 0's memory, with access (the values arrive) and, in a child "
               "process, without (the access does not succeed)")) {
      kernelOnPeerMemory(p, k);
      kernelWithoutAccess();
    }
    wb::step(6, "Peer copy against staging through host memory");
    std::vector<Rate> rates;
    const bool measure =
        canRun(p, true,
               "times copies from device 0 to device 1 from 64 KiB to 256 MiB: with peer access, without it, and "
               "staged by hand through pinned host memory, and writes the figure's table");
    if (measure && sanitized) std::printf("left out under compute-sanitizer, which slows every call\n");
    if (measure && !sanitized) {
      rates = peerAgainstStaged(p);
      reportRates(rates, limits);
      checkRates(rates.back(), limits, links);
    }

    CU_CHECK(cuLibraryUnload(library));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    if (p.two()) CU_CHECK(cuDevicePrimaryCtxRelease(p.dev1));
    CU_CHECK(cuDevicePrimaryCtxRelease(p.dev0));
    return tableOf(rates, limits, links).save(paths.csv, 6);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

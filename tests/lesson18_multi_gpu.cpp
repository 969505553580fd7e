// Lesson 18's claims: cuDeviceGetP2PAttribute refuses a device paired with itself and cuDeviceGet an
// ordinal past the last device; cuCtxEnablePeerAccess refuses a context as its own peer, and both
// peer calls need a current context (these run on one device). With two: the P2P attributes are
// yes-or-no answers (whether ACCESS_SUPPORTED agrees with cuDeviceCanAccessPeer is shown, not
// asserted: the references do not promise it), and an unknown attribute is refused; cuMemcpyPeer
// copies both ways with or without peer access, and cuMemcpyPeerAsync follows a kernel in its
// stream. With two that can access each other: access is enabled per direction, a second enable is
// ALREADY_ENABLED, the other direction stays NOT_ENABLED, flags other than 0 are INVALID_VALUE; with
// access a kernel on device 1 reads and writes device 0's memory; without it the access does not
// succeed (in a child process); and the peer copy stays within the link NVML reports, and beats
// staging through pinned host memory where NVLink joins the devices. A case whose devices lack what
// it needs reports itself skipped, with the reason.
#include "damaged_images.hpp"
#include "device_contexts.hpp"
#include "nvml.hpp"
#include "support.hpp"

#include <algorithm>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// Device 0's primary context, current, and fill and scale of vector_ops.fatbin as CUkernels.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary library = nullptr;
  CUfunction fill = nullptr, scale = nullptr;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CUkernel f = nullptr, s = nullptr;
    CU_CHECK(cuLibraryGetKernel(&f, library, "fill"));
    CU_CHECK(cuLibraryGetKernel(&s, library, "scale"));
    fill = reinterpret_cast<CUfunction>(f);
    scale = reinterpret_cast<CUfunction>(s);
  }
  ~Lab() { cuLibraryUnload(library); }
  CUcontext ctx0() const { return primary.get(); }
  // Launches on the device of the current context, in stream s.
  void launchFill(CUdeviceptr p, float value, unsigned n, CUstream s = nullptr) const {
    void* args[] = {&p, &value, &n};
    CU_CHECK(cuLaunchKernel(fill, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, args, nullptr));
  }
  void launchScale(CUdeviceptr p, float factor, float offset, unsigned n) const {
    void* args[] = {&p, &factor, &offset, &n};
    CU_CHECK(cuLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  }
};

// Why a case cannot run on this machine, or "": it needs two devices, and with `from` and `to` set,
// that the device `from` can access the memory of the device `to` (-1: no access needed). A case
// calls wbt::skipCase with the reason and returns, before it touches device 1.
std::string missing(int from = -1, int to = -1) {
  const int count = wbt::initDriver();
  if (count < 2) return "this machine has " + std::to_string(count) + " CUDA device(s); the case needs two";
  if (from < 0) return "";
  int can = 0;
  CU_CHECK(cuDeviceCanAccessPeer(&can, wbt::device(from), wbt::device(to)));
  if (can == 1) return "";
  return "cuDeviceCanAccessPeer says device " + std::to_string(from) + " cannot access device " + std::to_string(to) +
         "'s memory (over PCIe on bare-metal Linux, an IOMMU that is on is the first thing to check)";
}

// Both directions.
std::string missingBothWays() {
  std::string why = missing(0, 1);
  return why.empty() ? missing(1, 0) : why;
}

int requireTwoDevices() {
  const int count = wbt::initDriver();
  REQUIRE_MESSAGE(count >= 2, "this case needs two CUDA devices (it should have skipped)");
  return count;
}

// Lab, and device 1's primary context (retained, not current).
struct TwoLab : Lab {
  int count = requireTwoDevices();
  wbt::RetainedPrimary primary1{wbt::device(1)};
  CUcontext ctx1() const { return primary1.get(); }
  CUdevice dev0() const { return primary.device(); }
  CUdevice dev1() const { return primary1.device(); }
};

// Peer access from the context `from` to the memory of `to`, disabled at scope exit if it was enabled here.
class Access {
 public:
  Access(CUcontext from, CUcontext to) : from_(from), to_(to) {
    wbt::Pushed current(from);
    rc_ = cuCtxEnablePeerAccess(to, 0);
  }
  ~Access() {
    if (rc_ != CUDA_SUCCESS) return;
    wbt::Pushed current(from_);
    cuCtxDisablePeerAccess(to_);
  }
  Access(const Access&) = delete;
  Access& operator=(const Access&) = delete;
  CUresult result() const { return rc_; }

 private:
  CUcontext from_, to_;
  CUresult rc_ = CUDA_ERROR_UNKNOWN;
};

// Device memory in a context, freed at scope exit.
class Buffer {
 public:
  Buffer(CUcontext ctx, size_t bytes) : ctx_(ctx) {
    wbt::Pushed current(ctx);
    CU_CHECK(cuMemAlloc(&p_, bytes));
  }
  ~Buffer() {
    wbt::Pushed current(ctx_);
    cuMemFree(p_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  CUdeviceptr get() const { return p_; }

 private:
  CUcontext ctx_;
  CUdeviceptr p_ = 0;
};

using wb::readBack;  // common/device_contexts.hpp, as lesson 18's program reads back

void upload(CUcontext ctx, CUdeviceptr p, const std::vector<unsigned>& words) {
  wbt::Pushed current(ctx);
  CU_CHECK(cuMemcpyHtoD(p, words.data(), words.size() * sizeof(unsigned)));
}

using wb::synchronize;  // common/device_contexts.hpp

std::vector<unsigned> pattern(size_t n, unsigned seed) {
  std::vector<unsigned> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = seed ^ static_cast<unsigned>(i * 2654435761u);
  return v;
}

// A round trip 0 -> 1 -> 0 with cuMemcpyPeer; what came back.
std::vector<unsigned> roundTrip(const TwoLab& lab, const std::vector<unsigned>& words) {
  const size_t bytes = words.size() * sizeof(unsigned);
  Buffer from0(lab.ctx0(), bytes), on1(lab.ctx1(), bytes), back0(lab.ctx0(), bytes);
  upload(lab.ctx0(), from0.get(), words);
  CU_CHECK(cuMemcpyPeer(on1.get(), lab.ctx1(), from0.get(), lab.ctx0(), bytes));
  synchronize(lab.ctx0());
  synchronize(lab.ctx1());
  CU_CHECK(cuMemcpyPeer(back0.get(), lab.ctx0(), on1.get(), lab.ctx1(), bytes));
  synchronize(lab.ctx0());
  synchronize(lab.ctx1());
  return readBack<unsigned>(lab.ctx0(), back0.get(), words.size());
}

// A kernel on device 0 fills src in a stream of device 0's context, cuMemcpyPeerAsync copies it to
// device 1 in the same stream, the host waits once: what arrived on device 1.
std::vector<float> fillThenCopy(const TwoLab& lab, unsigned n, float value) {
  const size_t bytes = size_t{n} * sizeof(float);
  Buffer src(lab.ctx0(), bytes), dst(lab.ctx1(), bytes);
  {
    wbt::Pushed current(lab.ctx1());
    wbt::setWords(dst.get(), 0, n);
  }
  wbt::Pushed current(lab.ctx0());
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  lab.launchFill(src.get(), value, n, s);
  const CUresult copied = cuMemcpyPeerAsync(dst.get(), lab.ctx1(), src.get(), lab.ctx0(), bytes, s);
  const CUresult waited = cuStreamSynchronize(s);
  cuStreamDestroy(s);
  CHECK(copied == CUDA_SUCCESS);
  CHECK(waited == CUDA_SUCCESS);
  return readBack<float>(lab.ctx1(), dst.get(), n);
}

size_t countOf(const std::vector<float>& v, float value) {
  return static_cast<size_t>(std::count(v.begin(), v.end(), value));
}

using wb::bestMs;  // best of 5 after a warm-up, in ms, as lesson 18's program times its copies

}  // namespace

TEST_SUITE("one-device") {
  TEST_CASE("cuDeviceGetP2PAttribute of a device with itself is CUDA_ERROR_INVALID_DEVICE for every attribute, and cuDeviceGet gives no handle for an ordinal past the last device") {
    const int count = wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    for (CUdevice_P2PAttribute what :
         {CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED,
          CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED}) {
      CAPTURE(static_cast<int>(what));
      int value = -1;
      CHECK(cuDeviceGetP2PAttribute(&value, what, dev, dev) == CUDA_ERROR_INVALID_DEVICE);
    }
    // Ordinals run from 0 to count - 1. A handle comes only from cuDeviceGet (the reference makes no
    // handle equal to its ordinal), so the one past the last is asked for there; which of the codes
    // it lists comes back is not said.
    CUdevice pastTheLast = 0;
    const CUresult got = cuDeviceGet(&pastTheLast, count);
    MESSAGE("cuDeviceGet(" << count << "): " << wb::errorName(got));
    CHECK(got != CUDA_SUCCESS);
  }

  TEST_CASE("cuCtxEnablePeerAccess of the current context itself is refused with a code the reference lists, and with no current context cuCtxEnablePeerAccess and cuCtxDisablePeerAccess are CUDA_ERROR_INVALID_CONTEXT") {
    Lab lab;
    const CUresult self = cuCtxEnablePeerAccess(lab.ctx0(), 0);
    if (self == CUDA_SUCCESS) cuCtxDisablePeerAccess(lab.ctx0());
    MESSAGE("the context as its own peer: " << wb::errorName(self));
    // Both apply: "the current context is peerContext", and the device cannot access itself as a peer.
    CHECK((self == CUDA_ERROR_INVALID_CONTEXT || self == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED));
    CU_CHECK(cuCtxSetCurrent(nullptr));  // Lab's Pushed pops whatever is on top at its end
    const CUresult enable = cuCtxEnablePeerAccess(lab.ctx0(), 0), disable = cuCtxDisablePeerAccess(lab.ctx0());
    CU_CHECK(cuCtxSetCurrent(lab.ctx0()));
    CHECK(enable == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(disable == CUDA_ERROR_INVALID_CONTEXT);
  }
}

TEST_SUITE("attributes") {
  TEST_CASE("between two devices the P2P attributes are yes-or-no answers (the rank a number from 0, 0 the best), and an unknown attribute or a null result is CUDA_ERROR_INVALID_VALUE") {
    if (const std::string why = missing(); !why.empty()) return wbt::skipCase(why);
    TwoLab lab;
    for (const auto& [src, dst] : {std::pair{lab.dev0(), lab.dev1()}, std::pair{lab.dev1(), lab.dev0()}}) {
      const CUdevice from = src, to = dst;  // named copies: doctest's CAPTURE takes no structured bindings
      CAPTURE(from);
      CAPTURE(to);
      int can = -1, access = -1, rank = -1, atomics = -1, arrays = -1;
      CU_CHECK(cuDeviceCanAccessPeer(&can, from, to));
      CU_CHECK(cuDeviceGetP2PAttribute(&access, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, from, to));
      CU_CHECK(cuDeviceGetP2PAttribute(&rank, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, from, to));
      CU_CHECK(cuDeviceGetP2PAttribute(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, from, to));
      CU_CHECK(cuDeviceGetP2PAttribute(&arrays, CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, from, to));
      // Whether ACCESS_SUPPORTED agrees with cuDeviceCanAccessPeer neither reference says (the driver's:
      // "P2P Access is enable"; the runtime's: "1 if peer access is enabled"): shown, not asserted.
      MESSAGE("can access " << can << ", ACCESS_SUPPORTED " << access << (access == can ? " (agrees)" : " (DIFFERS)")
                            << ", PERFORMANCE_RANK " << rank << ", NATIVE_ATOMIC_SUPPORTED " << atomics
                            << ", CUDA_ARRAY_ACCESS_SUPPORTED " << arrays);
      CHECK((can == 0 || can == 1));
      CHECK((access == 0 || access == 1));
      CHECK(rank >= 0);
      CHECK((atomics == 0 || atomics == 1));
      CHECK((arrays == 0 || arrays == 1));
      int value = -1;
      CHECK(cuDeviceGetP2PAttribute(&value, static_cast<CUdevice_P2PAttribute>(0), from, to) ==
            CUDA_ERROR_INVALID_VALUE);
      CHECK(cuDeviceGetP2PAttribute(nullptr, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, from, to) ==
            CUDA_ERROR_INVALID_VALUE);
    }
    char id0[32] = {}, id1[32] = {};
    CU_CHECK(cuDeviceGetPCIBusId(id0, sizeof id0, lab.dev0()));
    CU_CHECK(cuDeviceGetPCIBusId(id1, sizeof id1, lab.dev1()));
    MESSAGE("PCI bus IDs: " << id0 << " and " << id1);
    CHECK(std::string(id0) != std::string(id1));
  }
}

TEST_SUITE("enable") {
  TEST_CASE("access is enabled per direction: enabled once, the second call is ALREADY_ENABLED, the other direction is NOT_ENABLED, flags other than 0 are INVALID_VALUE, and disabled once, the second disable is NOT_ENABLED") {
    if (const std::string why = missingBothWays(); !why.empty()) return wbt::skipCase(why);
    TwoLab lab;
    {
      Access oneToZero(lab.ctx1(), lab.ctx0());  // device 1's context gains device 0's memory
      REQUIRE(oneToZero.result() == CUDA_SUCCESS);
      {
        wbt::Pushed current(lab.ctx1());
        CHECK(cuCtxEnablePeerAccess(lab.ctx0(), 0) == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
      }
      wbt::Pushed current(lab.ctx0());
      CHECK(cuCtxDisablePeerAccess(lab.ctx1()) == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
      const CUresult badFlags = cuCtxEnablePeerAccess(lab.ctx1(), 1);
      if (badFlags == CUDA_SUCCESS) cuCtxDisablePeerAccess(lab.ctx1());
      CHECK(badFlags == CUDA_ERROR_INVALID_VALUE);
    }  // disabled here
    wbt::Pushed current(lab.ctx1());
    CHECK(cuCtxDisablePeerAccess(lab.ctx0()) == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    CHECK(cuCtxEnablePeerAccess(lab.ctx0(), 0) == CUDA_SUCCESS);  // enabled again after a disable
    CHECK(cuCtxDisablePeerAccess(lab.ctx0()) == CUDA_SUCCESS);
  }
}

TEST_SUITE("memcpy-peer") {
  TEST_CASE("cuMemcpyPeer copies 0 -> 1 -> 0 exactly with no peer access enabled") {
    if (const std::string why = missing(); !why.empty()) return wbt::skipCase(why);
    TwoLab lab;
    const std::vector<unsigned> words = pattern(1u << 20, 0x5EED);
    CHECK(roundTrip(lab, words) == words);
  }

  TEST_CASE("cuMemcpyPeer copies 0 -> 1 -> 0 exactly with peer access enabled both ways") {
    if (const std::string why = missingBothWays(); !why.empty()) return wbt::skipCase(why);
    TwoLab lab;
    Access zeroToOne(lab.ctx0(), lab.ctx1()), oneToZero(lab.ctx1(), lab.ctx0());
    REQUIRE(zeroToOne.result() == CUDA_SUCCESS);
    REQUIRE(oneToZero.result() == CUDA_SUCCESS);
    CHECK(roundTrip(lab, pattern(1u << 20, 0xF00D)) == pattern(1u << 20, 0xF00D));
  }

  TEST_CASE("cuMemcpyPeerAsync in the stream of a kernel that fills its source copies what the kernel wrote") {
    if (const std::string why = missing(); !why.empty()) return wbt::skipCase(why);
    TwoLab lab;
    const unsigned n = 1u << 22;  // 16 MiB
    CHECK(countOf(fillThenCopy(lab, n, 7.0f), 7.0f) == n);
  }
}

TEST_SUITE("kernel-access") {
  TEST_CASE("with access enabled from device 1's context, a kernel on device 1 reads and writes device 0's memory through device 0's pointer") {
    if (const std::string why = missing(1, 0); !why.empty()) return wbt::skipCase(why);
    TwoLab lab;
    const unsigned n = 1u << 20;
    Buffer on0(lab.ctx0(), size_t{n} * sizeof(float));
    lab.launchFill(on0.get(), 1.5f, n);  // device 0's context is current: on device 0
    CU_CHECK(cuCtxSynchronize());
    {
      Access oneToZero(lab.ctx1(), lab.ctx0());
      REQUIRE(oneToZero.result() == CUDA_SUCCESS);
      wbt::Pushed current(lab.ctx1());
      lab.launchScale(on0.get(), 2.0f, 1.0f, n);  // on device 1
      CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
    }
    CHECK(countOf(readBack<float>(lab.ctx0(), on0.get(), n), 4.0f) == n);
  }
}

// In a child process: a kernel on device `runOn` scales memory allocated on the other device. With
// WORKBOOK_ENABLE_OTHER_WAY=1 set, access is first enabled in the other direction only (the other
// device's context gains this device's memory). No access covers the kernel's reads, and what such an
// access does is not specified: the child exits 10 when the launch or cuCtxSynchronize failed, 11 when
// both succeeded.
void childAccess(int runOn) {
  TwoLab lab;
  const CUcontext here = runOn == 1 ? lab.ctx1() : lab.ctx0(), there = runOn == 1 ? lab.ctx0() : lab.ctx1();
  unsigned n = 1u << 20;
  CUdeviceptr elsewhere = 0;
  {
    wbt::Pushed current(there);
    CU_CHECK(cuMemAlloc(&elsewhere, size_t{n} * sizeof(float)));
    wbt::setWords(elsewhere, 0, n);
  }
  if (std::getenv("WORKBOOK_ENABLE_OTHER_WAY")) {
    wbt::Pushed current(there);
    CU_CHECK(cuCtxEnablePeerAccess(here, 0));  // `there` gains `here`'s memory: not what the kernel needs
  }
  CU_CHECK(cuCtxSetCurrent(here));
  float factor = 2.0f, offset = 1.0f;
  void* args[] = {&elsewhere, &factor, &offset, &n};
  const CUresult launched = cuLaunchKernel(lab.scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
  const CUresult synced = launched == CUDA_SUCCESS ? cuCtxSynchronize() : launched;
  std::printf("launch %s, synchronize %s\n", wb::errorName(launched).c_str(), wb::errorName(synced).c_str());
  std::fflush(stdout);
  std::_Exit(launched == CUDA_SUCCESS && synced == CUDA_SUCCESS ? 11 : 10);
}

TEST_CASE("child: device 1 reads device 0's memory" * doctest::skip(!wbt::inChild())) { childAccess(1); }
TEST_CASE("child: device 0 reads device 1's memory" * doctest::skip(!wbt::inChild())) { childAccess(0); }

namespace {
// The variables that would make a faulting child wait for a debugger or dump core: removed for it.
const std::vector<std::string> kChildEnvironment = {
    "WORKBOOK_CHILD=1", "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_WAITS_ON_EXCEPTION", "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
    "CUDA_ENABLE_USER_TRIGGERED_COREDUMP"};

wbt::ChildEnd runFaultingChild(const std::string& testCase, std::vector<std::string> env) {
  env.insert(env.end(), kChildEnvironment.begin(), kChildEnvironment.end());
  const wb::ProcessEnd end = wb::runProcess({wb::selfPath(), "--test-case=" + testCase, "--no-version"}, env, 30);
  wbt::ChildEnd child;
  child.crashed = end.signal != 0;
  child.timedOut = end.timedOut;
  child.code = end.code;
  child.output = end.output;
  return child;
}
}  // namespace

// Named "unspecified": the sanitize target leaves these suites out, since the child may crash.
TEST_SUITE("unspecified") {
  TEST_CASE("a kernel on device 1 over device 0's memory with no peer access does not succeed: the launch or the synchronize fails, or the child dies") {
    if (const std::string why = missing(); !why.empty()) return wbt::skipCase(why);
    const wbt::ChildEnd end = runFaultingChild("child: device 1 reads device 0's memory", {});
    MESSAGE("the child " << (end.crashed ? "crashed" : "exited with " + std::to_string(end.code)) << ":\n"
                         << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK((end.crashed || end.code == 10));
    CHECK(end.code != 11);
  }
  TEST_CASE("access is one-directional: with only device 1's context granted device 0's memory, a kernel on device 0 over device 1's memory does not succeed") {
    // The child grants device 1's context device 0's memory: that direction must be possible.
    if (const std::string why = missing(1, 0); !why.empty()) return wbt::skipCase(why);
    const wbt::ChildEnd end =
        runFaultingChild("child: device 0 reads device 1's memory", {"WORKBOOK_ENABLE_OTHER_WAY=1"});
    MESSAGE("the child " << (end.crashed ? "crashed" : "exited with " + std::to_string(end.code)) << ":\n"
                         << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK((end.crashed || end.code == 10));
    CHECK(end.code != 11);
  }
}

namespace {
// The links NVML reports for the pair: the NVLinks between them and each device's PCIe link, in
// bytes per second (0 where NVML did not say), and why where it did not.
struct PairLinks {
  double nvlink = 0, pcie0 = 0, pcie1 = 0;
  bool noNvlink = false;  // NVML answered: no active NVLink joins them
  std::string why;
};

PairLinks pairLinks(CUdevice dev0, CUdevice dev1) {
  char id0[32] = {}, id1[32] = {};
  CU_CHECK(cuDeviceGetPCIBusId(id0, sizeof id0, dev0));
  CU_CHECK(cuDeviceGetPCIBusId(id1, sizeof id1, dev1));
  PairLinks l;
  std::string why0, why1, whyNv;
  if (const auto p = wb::nvml::pcieLink(id0, why0)) l.pcie0 = p->bytesPerSecond();
  if (const auto p = wb::nvml::pcieLink(id1, why1)) l.pcie1 = p->bytesPerSecond();
  if (const auto nv = wb::nvml::nvlinksBetween(id0, id1, whyNv)) l.nvlink = nv->bytesPerSecond();
  l.noNvlink = l.nvlink == 0 && whyNv.rfind("no active NVLink", 0) == 0;  // common/nvml.cpp's answer for none
  l.why = "PCIe: " + (why0.empty() ? why1 : why0) + "; NVLink: " + whyNv;
  return l;
}
}  // namespace

TEST_SUITE("bandwidth") {
  TEST_CASE("with peer access enabled both ways, a 256 MiB copy from device 0 to device 1 and one staged through pinned host memory each deliver their bytes no faster than the links NVML reports allow, and where NVLink joins the devices with more than staging can reach the peer copy is the faster, in the same run") {
    if (const std::string why = missingBothWays(); !why.empty()) return wbt::skipCase(why);
    TwoLab lab;
    const PairLinks links = pairLinks(lab.dev0(), lab.dev1());
    // The peer copy crosses the NVLinks or, where none joins the devices, both PCIe links.
    const double peerLimit = links.nvlink > 0 ? links.nvlink
                             : links.noNvlink && links.pcie0 > 0 && links.pcie1 > 0 ? std::min(links.pcie0, links.pcie1)
                                                                                   : 0;
    if (peerLimit == 0 || links.pcie0 == 0 || links.pcie1 == 0)
      return wbt::skipCase("NVML did not say what joins the devices, so there is no limit to hold the copies to (" +
                           links.why + ")");
    const double stagedLimit = 1 / (1 / links.pcie0 + 1 / links.pcie1);  // one host link, then the other
    const size_t bytes = 256u << 20;
    const unsigned word = 0xA5C3E1F0u;
    Buffer src(lab.ctx0(), bytes), dst(lab.ctx1(), bytes);
    wbt::setWords(src.get(), word, bytes / 4);  // device 0's context is current
    // Whether the first and last 4 KiB of dst hold word; then dst is cleared for the next way.
    const auto arrivedAndCleared = [&] {
      const size_t n = 1024;
      const std::vector<unsigned> head = readBack<unsigned>(lab.ctx1(), dst.get(), n),
                                  tail = readBack<unsigned>(lab.ctx1(), dst.get() + bytes - n * 4, n);
      wbt::Pushed current(lab.ctx1());
      wbt::setWords(dst.get(), 0, bytes / 4);
      return std::count(head.begin(), head.end(), word) + std::count(tail.begin(), tail.end(), word) ==
             static_cast<std::ptrdiff_t>(2 * n);
    };
    void* pinned = nullptr;
    CU_CHECK(cuMemHostAlloc(&pinned, bytes, CU_MEMHOSTALLOC_PORTABLE));
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));  // device 0's context is current
    double peerMs = 0, stagedMs = 0;
    {
      Access zeroToOne(lab.ctx0(), lab.ctx1()), oneToZero(lab.ctx1(), lab.ctx0());
      REQUIRE(zeroToOne.result() == CUDA_SUCCESS);
      REQUIRE(oneToZero.result() == CUDA_SUCCESS);
      peerMs = bestMs([&] {
        CU_CHECK(cuMemcpyPeerAsync(dst.get(), lab.ctx1(), src.get(), lab.ctx0(), bytes, s));
        CU_CHECK(cuStreamSynchronize(s));
      });
      CHECK_MESSAGE(arrivedAndCleared(), "the peer copy did not deliver the bytes it was timed on");
      stagedMs = bestMs([&] {
        CU_CHECK(cuMemcpyDtoH(pinned, src.get(), bytes));
        wbt::Pushed current(lab.ctx1());
        CU_CHECK(cuMemcpyHtoD(dst.get(), pinned, bytes));
      });
      CHECK_MESSAGE(arrivedAndCleared(), "the staged copy did not deliver the bytes it was timed on");
    }
    cuStreamDestroy(s);
    cuMemFreeHost(pinned);
    const double peerRate = bytes / (peerMs * 1e-3), stagedRate = bytes / (stagedMs * 1e-3);
    MESSAGE("256 MiB from device 0 to device 1: peer copy " << peerRate / 1e9 << " GB/s, " << peerRate / peerLimit
                                                            << " of its link's " << peerLimit / 1e9 << " GB/s; staged "
                                                            << stagedRate / 1e9 << " GB/s, " << stagedRate / stagedLimit
                                                            << " of two host crossings' " << stagedLimit / 1e9 << " GB/s");
    // A copy cannot beat the wire: above its limit, the link was misread or the timing is wrong.
    CHECK(peerRate <= peerLimit * 1.01);
    CHECK(stagedRate <= stagedLimit * 1.01);
    // The order is claimed only where NVLink joins the devices with more than staging can reach.
    if (links.nvlink > stagedLimit)
      CHECK(peerMs < stagedMs);
    else
      MESSAGE("no NVLink above the staged copy's limit joins the devices: the order of the two ways is not asserted");
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}

// The checks of lesson 18's exercises (lessons/18-multi-gpu/exercises.cpp). What one device can show
// runs everywhere, two contexts of device 0 standing in for two devices where that is meaningful;
// what needs two devices runs after it, and on a machine with one the exercise then reports itself
// skipped with the reason, never passed. Whether peer access is enabled is read the only way the
// Driver API offers: cuCtxEnablePeerAccess answers CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED (where it
// enables instead, the check disables it again). A machine whose devices cannot access each other is
// played by this check: it stands between the code and cuDeviceCanAccessPeer (and
// cuDeviceGetP2PAttribute) and answers 0 for the directions it names. Pending work comes from the
// gate kernel; failures of single calls from the ledger's FailCall. The timed check compares the
// copier with a plain staged copy measured in the same run. Each case's name begins with the
// requirements it verifies.
#include "check.hpp"
#include "gate.hpp"
#include "18-multi-gpu/exercises.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// ---- The machine as the check wants it to look ----------------------------------------------------

namespace {

std::mutex refusedMutex;
std::set<std::pair<CUdevice, CUdevice>> refused;  // (from, to): "from cannot access to's memory"

bool isRefused(CUdevice from, CUdevice to) {
  std::lock_guard<std::mutex> lock(refusedMutex);
  return refused.count({from, to}) != 0;
}

// While it lives, cuDeviceCanAccessPeer answers 0 from `from` to `to` (that direction only), as on a
// machine whose pair has no P2P in that direction.
class Refuse {
 public:
  Refuse(CUdevice from, CUdevice to) : pair_(from, to) {
    std::lock_guard<std::mutex> lock(refusedMutex);
    refused.insert(pair_);
  }
  ~Refuse() {
    std::lock_guard<std::mutex> lock(refusedMutex);
    refused.erase(pair_);
  }
  Refuse(const Refuse&) = delete;
  Refuse& operator=(const Refuse&) = delete;

 private:
  std::pair<CUdevice, CUdevice> pair_;
};

}  // namespace

extern "C" CUresult CUDAAPI cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  using Real = CUresult(CUDAAPI*)(int*, CUdevice, CUdevice);
  static const Real real = reinterpret_cast<Real>(wbx::detail::real("cuDeviceCanAccessPeer"));
  if (const CUresult injected = wbx::detail::enter("cuDeviceCanAccessPeer")) return injected;
  if (!real) return CUDA_ERROR_NOT_FOUND;
  const CUresult rc = real(canAccessPeer, dev, peerDev);
  if (rc == CUDA_SUCCESS && isRefused(dev, peerDev)) *canAccessPeer = 0;
  return rc;
}

extern "C" CUresult CUDAAPI cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                                    CUdevice dstDevice) {
  using Real = CUresult(CUDAAPI*)(int*, CUdevice_P2PAttribute, CUdevice, CUdevice);
  static const Real real = reinterpret_cast<Real>(wbx::detail::real("cuDeviceGetP2PAttribute"));
  if (const CUresult injected = wbx::detail::enter("cuDeviceGetP2PAttribute")) return injected;
  if (!real) return CUDA_ERROR_NOT_FOUND;
  const CUresult rc = real(value, attrib, srcDevice, dstDevice);
  if (rc == CUDA_SUCCESS && attrib == CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED && isRefused(srcDevice, dstDevice))
    *value = 0;
  return rc;
}

// Counted, and able to fail on demand (wbx::FailCall).
WBX_INTERPOSE(cuCtxEnablePeerAccess, (CUcontext peer, unsigned flags), (peer, flags))
WBX_INTERPOSE(cuMemcpyPeerAsync,
              (CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, size_t bytes, CUstream s),
              (dst, dstCtx, src, srcCtx, bytes, s))

namespace {

int deviceCount() {
  CU_CHECK(cuInit(0));
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  return count;
}

bool canAccess(CUdevice from, CUdevice to) {  // as the check plays the machine
  int can = 0;
  CU_CHECK(cuDeviceCanAccessPeer(&can, from, to));
  return can == 1;
}

// Whether access from `from` to the memory of `to` is enabled. Probing enables it where it was
// not, so a probe that enabled it disables it again and answers false.
bool accessEnabled(CUcontext from, CUcontext to) {
  wbt::Pushed current(from);
  const CUresult rc = cuCtxEnablePeerAccess(to, 0);
  if (rc == CUDA_SUCCESS) cuCtxDisablePeerAccess(to);
  return rc == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
}

// Peer access disabled between every two of the contexts, whatever an earlier case left.
void disableAll(const std::vector<CUcontext>& contexts) {
  for (CUcontext from : contexts)
    for (CUcontext to : contexts)
      if (from != to) {
        wbt::Pushed current(from);
        cuCtxDisablePeerAccess(to);  // CUDA_ERROR_PEER_ACCESS_NOT_ENABLED where it was not
      }
}

// The primary contexts of devices 0 .. count - 1, retained for the scope.
struct Primaries {
  std::vector<std::unique_ptr<wbt::RetainedPrimary>> retained;
  std::vector<CUcontext> contexts;
  std::vector<CUdevice> devices;
  explicit Primaries(int count) {
    for (int i = 0; i < count; ++i) {
      retained.push_back(std::make_unique<wbt::RetainedPrimary>(wbt::device(i)));
      contexts.push_back(retained.back()->get());
      devices.push_back(wbt::device(i));
    }
  }
};

// A context of the check's own on device `ordinal` (not a primary context), made once and kept for
// the process: creating one costs about 0.1 s. Not left current.
CUcontext ownContext(int ordinal) {
  static std::vector<std::pair<int, std::unique_ptr<wbt::OwnedContext>>> made;
  for (const auto& m : made)
    if (m.first == ordinal) return m.second->get();
  made.emplace_back(ordinal, std::make_unique<wbt::OwnedContext>(wbt::device(ordinal)));
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));  // cuCtxCreate pushed it
  return made.back().second->get();
}

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

// A non-blocking stream of a context, synchronised and destroyed at scope exit.
class Stream {
 public:
  explicit Stream(CUcontext ctx) : ctx_(ctx) {
    wbt::Pushed current(ctx);
    CU_CHECK(cuStreamCreate(&s_, CU_STREAM_NON_BLOCKING));
  }
  ~Stream() {
    wbt::Pushed current(ctx_);
    cuStreamSynchronize(s_);
    cuStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return s_; }
  CUcontext context() const { return ctx_; }
  void sync() const {
    wbt::Pushed current(ctx_);
    CU_CHECK(cuStreamSynchronize(s_));
  }

 private:
  CUcontext ctx_;
  CUstream s_ = nullptr;
};

void setBytes(CUcontext ctx, CUdeviceptr p, unsigned char value, size_t bytes) {
  wbt::Pushed current(ctx);
  wbt::setBytes(p, value, bytes);
}

std::vector<unsigned char> bytesAt(CUcontext ctx, CUdeviceptr p, size_t bytes) {
  wbt::Pushed current(ctx);
  std::vector<unsigned char> v(bytes);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, bytes));
  return v;
}

// How many of the first `bytes` bytes of got differ from want's.
size_t differing(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want, size_t bytes) {
  size_t wrong = 0;
  for (size_t i = 0; i < bytes; ++i) wrong += got[i] != want[i];
  return wrong;
}

// Runs f, which is to throw: true when it threw anything but wb::NotDone (which goes on).
template <class F>
bool threw(F&& f) {
  try {
    f();
  } catch (const wb::NotDone&) {
    throw;
  } catch (const std::exception&) {
    return true;
  }
  return false;
}

// The gate kernel loaded into a context (loading waits for the context's kernels: before any gate
// closes, lesson 09), and the library that holds it.
class Kernels {
 public:
  explicit Kernels(CUcontext ctx) {
    wbt::Pushed current(ctx);
    CU_CHECK(cuLibraryLoadFromFile(&library_, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k_ = wb::StreamKernels::load(library_);
  }
  // Loads the same kernels into one more context.
  void loadInto(CUcontext ctx) {
    wbt::Pushed current(ctx);
    wb::StreamKernels::load(library_);
  }
  ~Kernels() { cuLibraryUnload(library_); }
  Kernels(const Kernels&) = delete;
  Kernels& operator=(const Kernels&) = delete;
  CUfunction gate() const { return k_.gate; }

 private:
  CUlibrary library_ = nullptr;
  wb::StreamKernels k_;
};

// A stream held by a gate, with a new value written behind the gate into `words` words at source:
// made with the stream's context pushed, and that context pushed again to end it, so the caller's
// stack in between is the caller's.
class HeldSource {
 public:
  HeldSource(const Kernels& k, const Stream& s, CUdeviceptr source, size_t words, uint32_t value, double seconds)
      : ctx_(s.context()) {
    wbt::Pushed current(ctx_);
    gate_ = std::make_unique<wb::Gate>(k.gate(), s.get(), seconds);
    CU_CHECK(cuMemsetD32Async(source, value, words, s.get()));
  }
  ~HeldSource() {
    wbt::Pushed current(ctx_);
    gate_.reset();  // opens it and waits for the kernel to end
  }
  HeldSource(const HeldSource&) = delete;
  HeldSource& operator=(const HeldSource&) = delete;
  wb::Gate& gate() { return *gate_; }

 private:
  CUcontext ctx_;
  std::unique_ptr<wb::Gate> gate_;
};

// Opens a gate as soon as the code under check waits for a stream, an event or a context (the
// ledger counts those calls), and never once the code has returned without waiting: a staged copy
// must wait for the work behind the gate, and must not wait for the gate's deadline to do so.
class OpenOnWait {
 public:
  explicit OpenOnWait(wb::Gate& gate) : gate_(gate), base_(waits()), watcher_([this] { watch(); }) {}
  ~OpenOnWait() { stop(); }
  OpenOnWait(const OpenOnWait&) = delete;
  OpenOnWait& operator=(const OpenOnWait&) = delete;
  // The code has returned: the gate stays as it is.
  void stop() {
    returned_ = true;
    if (watcher_.joinable()) watcher_.join();
  }
  bool opened() const { return opened_; }

 private:
  static long waits() {
    long n = 0;
    for (const char* f : {"cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize", "cuStreamQuery",
                          "cuEventQuery"})
      n += wbx::calls(f);
    return n;
  }
  void watch() {
    while (!returned_) {
      if (waits() != base_) {
        gate_.open();
        opened_ = true;
        return;
      }
      std::this_thread::yield();
    }
  }
  wb::Gate& gate_;
  const long base_;
  std::atomic<bool> returned_{false}, opened_{false};
  std::thread watcher_;
};

constexpr uint32_t kOld = 0x01010101u, kNew = 0x600DDA7Au;

// The bytes a copy of `bytes` bytes of kNew words gives, followed by the old bytes up to `total`.
std::vector<unsigned char> wanted(size_t bytes, size_t total) {
  std::vector<unsigned char> v(total, static_cast<unsigned char>(kOld));
  for (size_t i = 0; i < bytes; ++i) {
    const uint32_t w = kNew;
    v[i] = reinterpret_cast<const unsigned char*>(&w)[i % 4];
  }
  return v;
}

// How the check holds the work that writes the source: not at all (it is done before the call), by
// a gate that stays closed until the call has returned, or by a gate opened once the call waits.
enum class Hold { None, Gate, GateOpenedOnWait };

// One copy of `bytes` bytes from src to dst, after `stream` has written the source: what the check
// saw.
struct Seen {
  bool stackKept = false, returnedWhileHeld = false, arrivedAtReturn = false, arrivedInTheEnd = false;
  bool openedOnWait = false;
  std::string held;  // what the call left held, as the ledger says it
};

Seen copyAfterWork(const Kernels& k, const Stream& stream, CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src,
                   CUcontext srcCtx, size_t words, size_t bytes, Hold hold) {
  setBytes(srcCtx, src, static_cast<unsigned char>(kOld), words * 4);
  setBytes(dstCtx, dst, static_cast<unsigned char>(kOld), words * 4);
  const std::vector<unsigned char> want = wanted(bytes, words * 4);
  Seen seen;
  std::unique_ptr<HeldSource> held;
  if (hold == Hold::None) {
    wbt::Pushed current(srcCtx);
    CU_CHECK(cuMemsetD32Async(src, kNew, words, stream.get()));
    CU_CHECK(cuStreamSynchronize(stream.get()));
  } else {
    held = std::make_unique<HeldSource>(k, stream, src, words, kNew, hold == Hold::Gate ? 2.0 : 10.0);
  }
  const std::vector<CUcontext> stackBefore = wbx::contextStack();
  const wbx::Holdings before = wbx::holdings();
  {
    std::unique_ptr<OpenOnWait> opener;
    if (hold == Hold::GateOpenedOnWait) opener = std::make_unique<OpenOnWait>(held->gate());
    ex18::copyAcross(dst, dstCtx, src, srcCtx, bytes, stream.get());
    if (opener) {
      opener->stop();
      seen.openedOnWait = opener->opened();
    }
  }
  seen.returnedWhileHeld = held && held->gate().outcome() == wb::Gate::Waiting;
  seen.stackKept = wbx::contextStack() == stackBefore;
  seen.held = wbx::holdings().differenceFrom(before);
  // Read at once only where the gate is open by now or the copy was to be done: where it holds a
  // kernel in a context of the destination's device, a read there may wait for that kernel's turn.
  if (hold != Hold::Gate) seen.arrivedAtReturn = bytesAt(dstCtx, dst, words * 4) == want;
  if (held) held->gate().open();
  stream.sync();
  seen.arrivedInTheEnd = bytesAt(dstCtx, dst, words * 4) == want;
  return seen;
}

// Best of three, in ms, by the host's clock around the whole call.
template <class Work>
double bestOfThree(Work&& work) {
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const wb::Stopwatch clock;
    work();
    best = std::min(best, clock.ms());
  }
  return best;
}

}  // namespace

EXERCISE("copy-across", "A device-to-device copy that takes the link when there is one",
         "Push each context (an RAII guard that pops, so every throw leaves the stack as found) and cuCtxGetDevice. "
         "Same device: cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream). Two devices with "
         "cuDeviceCanAccessPeer 1 both ways: with dstCtx pushed cuCtxEnablePeerAccess(srcCtx, 0), with srcCtx pushed "
         "cuCtxEnablePeerAccess(dstCtx, 0), each accepting CUDA_SUCCESS or CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "
         "then cuMemcpyPeerAsync. Otherwise cuStreamSynchronize(stream), cuMemHostAlloc(&buf, bytes, "
         "CU_MEMHOSTALLOC_PORTABLE) held by an object that frees it, cuMemcpyDtoH with srcCtx pushed, cuMemcpyHtoD with "
         "dstCtx pushed. cuMemcpyPeerAsync alone gives the right bytes too: what it lacks is the access that lets "
         "the copy take the link.") {
  TEST_CASE("R1 R2 R3 R4 R5: between two contexts of one device, and from a context to itself, it returns with the copy pending behind the stream's work and leaves the stack; with two devices it enables access both ways, and stages (waiting for the stream) where a direction is refused; failures leave nothing behind") {
    const int count = deviceCount();
    wbt::RetainedPrimary primary0(wbt::device(0));
    const CUcontext ctx0 = primary0.get(), own0 = ownContext(0);
    Kernels k(ctx0);
    const size_t words = 1u << 20, odd = words * 4 - 3;
    Stream s0(ctx0);
    {
      Buffer src(ctx0, words * 4), dst(own0, words * 4);
      const Seen one = copyAfterWork(k, s0, dst.get(), own0, src.get(), ctx0, words, odd, Hold::Gate);
      CAPTURE(one.held);
      CHECK_MESSAGE(one.returnedWhileHeld, "between contexts of one device, copyAcross waited for the stream: it must "
                                           "only enqueue the copy");
      CHECK_MESSAGE(one.stackKept, "copyAcross left another context current (none was)");
      CHECK_MESSAGE(one.arrivedInTheEnd, "dst does not hold the bytes written behind the gate, or bytes past the "
                                         "copy changed: was the copy enqueued in stream, after its work?");
      CHECK_MESSAGE(one.held == "", "copyAcross left something held");
      {  // one context twice: one device too, and no pair of devices to ask about
        Buffer again(ctx0, words * 4);
        const Seen same = copyAfterWork(k, s0, again.get(), ctx0, src.get(), ctx0, words, odd, Hold::Gate);
        CAPTURE(same.held);
        CHECK_MESSAGE(same.returnedWhileHeld, "from a context to itself, copyAcross waited for the stream: it must "
                                              "only enqueue the copy");
        CHECK_MESSAGE(same.stackKept, "from a context to itself, copyAcross left another context current (none was)");
        CHECK_MESSAGE(same.arrivedInTheEnd, "from a context to itself, dst does not hold the bytes written behind the "
                                            "gate, or bytes past the copy changed");
        CHECK_MESSAGE(same.held == "", "from a context to itself, copyAcross left something held");
      }
      const std::vector<CUcontext> stackBefore = wbx::contextStack();
      wbx::FailCall fail("cuMemcpyPeerAsync", CUDA_ERROR_INVALID_VALUE);
      const bool threwOnFailure = threw([&] { ex18::copyAcross(dst.get(), own0, src.get(), ctx0, odd, s0.get()); });
      CHECK_MESSAGE(fail.fired(), "between contexts of one device, the copy was not cuMemcpyPeerAsync");
      CHECK_MESSAGE(threwOnFailure, "copyAcross did not throw when cuMemcpyPeerAsync failed");
      CHECK_MESSAGE(wbx::contextStack() == stackBefore, "when cuMemcpyPeerAsync failed, copyAcross left the context "
                                                        "stack changed");
    }
    if (count < 2)
      throw wbx::Skipped("copies between two devices (the link, peer access, the staged path) need two devices; "
                         "between two contexts of one device all passed");

    Primaries all(2);
    const CUcontext ctx1 = all.contexts[1];
    const CUdevice dev0 = all.devices[0], dev1 = all.devices[1];
    k.loadInto(ctx1);
    disableAll(all.contexts);
    Stream s1(ctx1);
    Buffer on0(ctx0, words * 4), on1(ctx1, words * 4);
    wbt::Pushed current(ctx0);  // the caller's context from here on

    const bool link = canAccess(dev0, dev1) && canAccess(dev1, dev0);
    {
      // The first copy may enable peer access, so no gate holds its stream then: whether enabling
      // waits for a device's running kernels, the reference does not say. The copy back finds
      // access enabled and must only enqueue.
      const Seen there = copyAfterWork(k, s0, on1.get(), ctx1, on0.get(), ctx0, words, words * 4,
                                       link ? Hold::None : Hold::GateOpenedOnWait);
      const Seen back = copyAfterWork(k, s1, on0.get(), ctx0, on1.get(), ctx1, words, odd,
                                      link ? Hold::Gate : Hold::GateOpenedOnWait);
      CAPTURE(link);
      CHECK_MESSAGE(there.arrivedInTheEnd, "device 1 did not get device 0's bytes");
      CHECK_MESSAGE(back.arrivedInTheEnd, "device 0 did not get device 1's bytes (an odd count), or more changed");
      CHECK_MESSAGE((there.stackKept && back.stackKept), "copyAcross changed the caller's context stack");
      CHECK_MESSAGE((there.held == "" && back.held == ""), "copyAcross left something held");
      if (link) {
        CHECK_MESSAGE(back.returnedWhileHeld, "between devices that can access each other, copyAcross waited for "
                                              "the stream: it must only enqueue the copy");
        CHECK_MESSAGE(accessEnabled(ctx1, ctx0), "peer access from device 1's context to device 0's memory is not enabled");
        CHECK_MESSAGE(accessEnabled(ctx0, ctx1), "peer access from device 0's context to device 1's memory is not enabled");
        disableAll(all.contexts);
        const std::vector<CUcontext> stackBefore = wbx::contextStack();
        wbx::FailCall fail("cuCtxEnablePeerAccess", CUDA_ERROR_TOO_MANY_PEERS);
        const bool threwOnFailure = threw([&] { ex18::copyAcross(on1.get(), ctx1, on0.get(), ctx0, odd, s0.get()); });
        CHECK_MESSAGE(fail.fired(), "copyAcross never called cuCtxEnablePeerAccess");
        CHECK_MESSAGE(threwOnFailure, "copyAcross did not throw when cuCtxEnablePeerAccess failed with "
                                      "CUDA_ERROR_TOO_MANY_PEERS");
        CHECK_MESSAGE(wbx::contextStack() == stackBefore,
                      "when cuCtxEnablePeerAccess failed, copyAcross left the context stack changed");
      } else {
        MESSAGE("devices 0 and 1 cannot access each other here: both copies were staged");
      }
      disableAll(all.contexts);
    }

    // Each direction refused in turn: a copy that asks only one direction takes the link once.
    for (const auto& [from, to] : {std::pair{dev1, dev0}, std::pair{dev0, dev1}}) {
      Refuse refuse(from, to);
      const Seen staged = copyAfterWork(k, s0, on1.get(), ctx1, on0.get(), ctx0, words, odd, Hold::GateOpenedOnWait);
      const int refusedFrom = from == dev0 ? 0 : 1;
      CAPTURE(refusedFrom);
      CAPTURE(staged.held);
      CHECK_MESSAGE(staged.openedOnWait, "with one direction refused, copyAcross did not wait for the work in the stream "
                                         "before copying (or did not stage the copy at all)");
      CHECK_MESSAGE(staged.arrivedAtReturn, "with one direction refused, the bytes had not all arrived when copyAcross "
                                            "returned: a staged copy is done when it returns");
      CHECK_MESSAGE(staged.stackKept, "the staged copy changed the caller's context stack");
      CHECK_MESSAGE(staged.held == "", "the staged copy left something held (its pinned buffer?)");
      CHECK_MESSAGE((!accessEnabled(ctx0, ctx1) && !accessEnabled(ctx1, ctx0)),
                    "peer access was enabled although cuDeviceCanAccessPeer refused a direction");
      disableAll(all.contexts);
    }
    {
      Refuse refuse(dev1, dev0);
      const std::vector<CUcontext> stackBefore = wbx::contextStack();
      const wbx::Holdings before = wbx::holdings();
      wbx::FailCall fail("cuMemcpyHtoD", CUDA_ERROR_INVALID_VALUE);
      const bool threwOnFailure = threw([&] { ex18::copyAcross(on1.get(), ctx1, on0.get(), ctx0, odd, s0.get()); });
      const std::string held = wbx::holdings().differenceFrom(before);
      CAPTURE(held);
      CHECK_MESSAGE(fail.fired(), "the staged copy up was not cuMemcpyHtoD");
      CHECK_MESSAGE(threwOnFailure, "copyAcross did not throw when the copy up failed");
      CHECK_MESSAGE(held == "", "when the copy up failed, copyAcross kept its pinned buffer");
      CHECK_MESSAGE(wbx::contextStack() == stackBefore, "when the copy up failed, copyAcross left the stack changed");
    }
  }
}

EXERCISE("enable-all-peers", "Enable every peer, twice, without an error",
         "For each context: push it (an RAII guard that pops), cuCtxGetDevice. For each ordered pair i != j: "
         "cuDeviceCanAccessPeer(&can, dev[i], dev[j]) for that direction; 0: record {i, j}; otherwise, with "
         "contexts[i] pushed by the guard, cuCtxEnablePeerAccess(contexts[j], 0) and CU_CHECK the result unless it "
         "is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED. CU_CHECK around the call itself makes the second call throw; "
         "contexts[i] is not on device i; access one way says nothing of the other.") {
  TEST_CASE("R1 R2 R3 R4 R5: no context and one context give no pair and leave no context current; with two devices or more, in reverse order and one direction refused, twice: the refused pairs returned, every other pair enabled, the stack kept, TOO_MANY_PEERS thrown") {
    const int count = deviceCount();
    std::vector<ex18::PeerPair> none, alone;
    {
      wbt::RetainedPrimary primary0(wbt::device(0));
      const std::vector<CUcontext> stackBefore = wbx::contextStack();
      none = ex18::enableAllPeers({});
      alone = ex18::enableAllPeers({primary0.get()});
      CHECK_MESSAGE(wbx::contextStack() == stackBefore, "enableAllPeers changed the calling thread's context stack");
    }
    CHECK_MESSAGE(none.empty(), "no context has no pair");
    CHECK_MESSAGE(alone.empty(), "one context has no pair");
    if (count < 2)
      throw wbx::Skipped("pairs of devices need two devices; no context and one context passed");

    const int used = std::min(count, 8);  // no device needs more than 7 peers
    Primaries all(used);
    const std::vector<CUcontext> reversed(all.contexts.rbegin(), all.contexts.rend());
    const std::vector<CUdevice> devices(all.devices.rbegin(), all.devices.rend());
    disableAll(all.contexts);
    Refuse refuse(all.devices.back(), all.devices.front());
    wbt::Pushed current(all.contexts[0]);
    const std::vector<CUcontext> stackBefore = wbx::contextStack();

    const std::vector<ex18::PeerPair> first = ex18::enableAllPeers(reversed);
    std::vector<ex18::PeerPair> second;
    CHECK_NOTHROW(second = ex18::enableAllPeers(reversed));
    const bool kept = wbx::contextStack() == stackBefore;

    std::vector<ex18::PeerPair> unsupported;
    for (int i = 0; i < used; ++i)
      for (int j = 0; j < used; ++j)
        if (i != j && !canAccess(devices[i], devices[j])) unsupported.push_back({i, j});
    size_t notEnabled = 0, enabledAnyway = 0;
    for (int i = 0; i < used; ++i)
      for (int j = 0; j < used; ++j) {
        if (i == j) continue;
        const bool enabled = accessEnabled(reversed[i], reversed[j]);
        if (canAccess(devices[i], devices[j]))
          notEnabled += !enabled;
        else
          enabledAnyway += enabled;
      }
    CAPTURE(used);
    CAPTURE(unsupported.size());
    CHECK_MESSAGE(first == unsupported, "the first call did not return exactly the pairs that cannot access, in "
                                        "order (contexts[i] is not on device i here, and one direction only is refused)");
    CHECK_MESSAGE(second == unsupported, "the second call did not return exactly the pairs that cannot access");
    CHECK_MESSAGE(notEnabled == 0, "pairs that can access each other were left without peer access");
    CHECK_MESSAGE(enabledAnyway == 0, "access was enabled for a pair whose devices cannot access each other");
    CHECK_MESSAGE(kept, "enableAllPeers changed the calling thread's context stack");

    disableAll(all.contexts);
    {
      wbx::FailCall fail("cuCtxEnablePeerAccess", CUDA_ERROR_TOO_MANY_PEERS);
      const bool threwOnFailure = threw([&] { ex18::enableAllPeers(reversed); });
      CHECK_MESSAGE(fail.fired(), "enableAllPeers never called cuCtxEnablePeerAccess");
      CHECK_MESSAGE(threwOnFailure, "CUDA_ERROR_TOO_MANY_PEERS did not reach the caller");
      CHECK_MESSAGE(wbx::contextStack() == stackBefore, "when cuCtxEnablePeerAccess failed, the context stack was left changed");
    }
    disableAll(all.contexts);
  }
}

EXERCISE("staged-copier", "A staged device-to-device copy that overlaps its two halves",
         "Constructor: cuMemHostAlloc(&staging_[k], chunkBytes, CU_MEMHOSTALLOC_PORTABLE) for k = 0, 1. In copy, "
         "with an object per context that makes a stream and two events and, at scope exit, synchronises the stream "
         "and destroys them: for chunk i, k = i % 2, with srcCtx pushed: from i >= 2 on cuStreamWaitEvent(down, "
         "uploaded[k], 0), cuMemcpyDtoHAsync into staging_[k], cuEventRecord(downloaded[k], down); with dstCtx "
         "pushed: cuStreamWaitEvent(up, downloaded[k], 0), cuMemcpyHtoDAsync from staging_[k], cuEventRecord("
         "uploaded[k], up). Then cuStreamSynchronize(up). One buffer used for every chunk forces each chunk to wait "
         "for the last: no overlap.") {
  TEST_CASE("R1 R2 R3 R4: portable buffers made once; odd sizes, a size under a chunk, whole chunks, 0 bytes and 1024 small chunks arrive exactly; nothing past the end written, nothing held, the stack kept, a failed copy up leaving nothing behind") {
    const int count = deviceCount();
    wbt::RetainedPrimary primary0(wbt::device(0));
    const CUcontext src = primary0.get(), dst = ownContext(count >= 2 ? 1 : 0);
    MESSAGE((count >= 2 ? "from device 0 to a context of device 1" : "one device here: between two contexts of device 0"));
    const size_t chunk = 1u << 20, most = 3 * chunk + 12345, slack = 4096;
    std::vector<unsigned char> pattern(most);
    for (size_t i = 0; i < most; ++i) pattern[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    Buffer from(src, most), to(dst, most + slack);
    {
      wbt::Pushed current(src);
      CU_CHECK(cuMemcpyHtoD(from.get(), pattern.data(), most));
      CU_CHECK(cuCtxSynchronize());  // a pageable copy may return before it lands; the copier's streams do not wait
    }
    const wbx::Holdings beforeCopier = wbx::holdings();
    {
      // Made with a context current (pinned memory is allocated in one), used with none current,
      // freed with it current again.
      std::unique_ptr<ex18::StagedCopier> made;
      {
        wbt::Pushed current(src);
        made = std::make_unique<ex18::StagedCopier>(chunk);
      }
      ex18::StagedCopier& copier = *made;
      const std::string allocated = wbx::holdings().differenceFrom(beforeCopier);
      CAPTURE(allocated);
      CHECK_MESSAGE(allocated == "2 pinned host allocations more", "the constructor did not make exactly the two "
                                                                    "staging buffers");
      for (int k = 0; k < 2; ++k) {
        wbt::Pushed current(src);
        unsigned flags = 0;
        const CUresult rc = copier.stagingBuffer(k) ? cuMemHostGetFlags(&flags, copier.stagingBuffer(k))
                                                    : CUDA_ERROR_INVALID_VALUE;
        CAPTURE(k);
        CHECK_MESSAGE((rc == CUDA_SUCCESS && (flags & CU_MEMHOSTALLOC_PORTABLE)),
                      "a staging buffer is not from cuMemHostAlloc with CU_MEMHOSTALLOC_PORTABLE: another context "
                      "treats it as pageable");
      }
      for (const size_t bytes : {most, size_t{1000}, 2 * chunk, size_t{0}}) {
        CAPTURE(bytes);
        setBytes(dst, to.get(), 0xEE, most + slack);
        const std::vector<CUcontext> stackBefore = wbx::contextStack();
        const wbx::Holdings before = wbx::holdings();
        const long allocations = wbx::calls("cuMemHostAlloc") + wbx::calls("cuMemAllocHost");
        copier.copy(to.get(), dst, from.get(), src, bytes);
        const std::string held = wbx::holdings().differenceFrom(before);
        const bool kept = wbx::contextStack() == stackBefore;
        const long allocatedInCopy = wbx::calls("cuMemHostAlloc") + wbx::calls("cuMemAllocHost") - allocations;
        const std::vector<unsigned char> got = bytesAt(dst, to.get(), most + slack);
        CHECK_MESSAGE(differing(got, pattern, bytes) == 0, "bytes that are not the source's arrived (a chunk lost?)");
        const bool untouched =
            std::all_of(got.begin() + static_cast<long>(bytes), got.end(), [](unsigned char c) { return c == 0xEE; });
        CHECK_MESSAGE(untouched, "bytes past the end of the copy were written");
        CAPTURE(held);
        CHECK_MESSAGE(held == "", "copy left streams or events (or memory) behind");
        CHECK_MESSAGE(allocatedInCopy == 0,
                      "copy allocated pinned memory: the two buffers are made once, by the constructor");
        CHECK_MESSAGE(kept, "copy changed the calling thread's context stack (no context was current)");
      }
      {  // srcCtx and dstCtx the same context
        Buffer same(src, most + slack);
        setBytes(src, same.get(), 0xEE, most + slack);
        const std::vector<CUcontext> stackBefore = wbx::contextStack();
        const wbx::Holdings before = wbx::holdings();
        copier.copy(same.get(), src, from.get(), src, most);
        const std::string held = wbx::holdings().differenceFrom(before);
        const bool kept = wbx::contextStack() == stackBefore;
        const std::vector<unsigned char> got = bytesAt(src, same.get(), most + slack);
        CHECK_MESSAGE(differing(got, pattern, most) == 0, "from a context to itself, bytes that are not the source's arrived");
        CHECK_MESSAGE(std::all_of(got.begin() + static_cast<long>(most), got.end(), [](unsigned char c) { return c == 0xEE; }),
                      "from a context to itself, bytes past the end of the copy were written");
        CAPTURE(held);
        CHECK_MESSAGE(held == "", "from a context to itself, copy left streams or events (or memory) behind");
        CHECK_MESSAGE(kept, "from a context to itself, copy changed the calling thread's context stack");
      }
      {
        setBytes(dst, to.get(), 0xEE, most + slack);
        const std::vector<CUcontext> stackBefore = wbx::contextStack();
        const wbx::Holdings before = wbx::holdings();
        wbx::FailCall fail("cuMemcpyHtoDAsync", CUDA_ERROR_INVALID_VALUE, 3);
        const bool threwOnFailure = threw([&] { copier.copy(to.get(), dst, from.get(), src, most); });
        const std::string held = wbx::holdings().differenceFrom(before);
        CAPTURE(held);
        CHECK_MESSAGE(fail.fired(), "the copies up were not cuMemcpyHtoDAsync, one per chunk");
        CHECK_MESSAGE(threwOnFailure, "copy did not throw when a copy up failed");
        CHECK_MESSAGE(held == "", "when a copy up failed, copy left its streams or events behind");
        CHECK_MESSAGE(wbx::contextStack() == stackBefore, "when a copy up failed, the context stack was left changed");
      }
      wbt::Pushed current(src);
      made.reset();
    }
    const std::string left = wbx::holdings().differenceFrom(beforeCopier);
    CAPTURE(left);
    CHECK_MESSAGE(left == "", "the destructor did not free the staging buffers");

    // 1024 chunks of their own bytes: each copy up must follow its copy down, and each copy down
    // the copy up that last read its buffer.
    const size_t small = 4096, many = 1024 * small;
    Buffer manyFrom(src, many), manyTo(dst, many);
    std::vector<uint32_t> words(many / 4);
    for (size_t i = 0; i < words.size(); ++i) words[i] = wbt::patternAt(0xC0FFEEu, i);
    setBytes(dst, manyTo.get(), 0xEE, many);
    {
      wbt::Pushed current(src);
      CU_CHECK(cuMemcpyHtoD(manyFrom.get(), words.data(), many));
      CU_CHECK(cuCtxSynchronize());  // as above: landed before the copier's streams read it
      ex18::StagedCopier copier(small);
      for (int k = 0; k < 2; ++k)
        if (copier.stagingBuffer(k)) std::memset(copier.stagingBuffer(k), 0xEE, small);
      copier.copy(manyTo.get(), dst, manyFrom.get(), src, many);
    }
    std::vector<uint32_t> arrived(words.size());
    {
      wbt::Pushed there(dst);
      CU_CHECK(cuMemcpyDtoH(arrived.data(), manyTo.get(), many));
    }
    size_t wrongWords = 0;
    for (size_t i = 0; i < words.size(); ++i) wrongWords += arrived[i] != words[i];
    CAPTURE(wrongWords);
    CHECK_MESSAGE(wrongWords == 0, "through 1024 chunks of 4 KiB, some bytes were not the source's: does each copy up "
                                   "wait for its copy down, and each copy down for the copy up that last read its "
                                   "buffer?");
  }

  // Between primary contexts (one context twice on one device): whether the copy engines run the
  // copies of two contexts of one device at once is not what this case is about.
  TEST_CASE("R3: 256 MiB through chunks of 8 MiB takes at most 0.8 of copying down whole and then up whole, in this run") {
    const int count = deviceCount();
    Primaries all(std::min(count, 2));
    const CUcontext src = all.contexts[0], dst = all.contexts.back();
    const size_t bytes = 256u << 20;
    Buffer from(src, bytes), to(dst, bytes);
    setBytes(src, from.get(), 0x5A, bytes);
    wbt::Pushed current(src);
    ex18::StagedCopier copier(8u << 20);
    copier.copy(to.get(), dst, from.get(), src, bytes);  // the learner's code first; a warm-up too
    if (wb::underSanitizer()) throw wbx::Skipped("compute-sanitizer intercepts every copy: there is no time to compare");
    for (int ordinal : {0, count >= 2 ? 1 : 0})
      if (wbt::attribute(wbt::device(ordinal), CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT) < 2)
        throw wbx::Skipped("device " + std::to_string(ordinal) + " has fewer than two copy engines: a copy down and "
                           "a copy up cannot overlap there");
    void* whole = nullptr;
    CU_CHECK(cuMemHostAlloc(&whole, bytes, CU_MEMHOSTALLOC_PORTABLE));
    const auto downThenUp = [&] {
      CU_CHECK(cuMemcpyDtoH(whole, from.get(), bytes));  // src is current
      wbt::Pushed there(dst);
      CU_CHECK(cuMemcpyHtoD(to.get(), whole, bytes));
    };
    downThenUp();  // warm-up
    const double plainMs = bestOfThree(downThenUp);
    const double copierMs = bestOfThree([&] { copier.copy(to.get(), dst, from.get(), src, bytes); });
    cuMemFreeHost(whole);
    const std::vector<unsigned char> tail = bytesAt(dst, to.get() + bytes - 4096, 4096);
    MESSAGE("down whole then up whole " << plainMs << " ms; the copier " << copierMs << " ms, at most "
                                        << 0.8 * plainMs << " ms allowed");
    CHECK_MESSAGE(std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return c == 0x5A; }),
                  "the copier did not deliver the bytes it was timed on");
    CHECK_MESSAGE(copierMs <= 0.8 * plainMs, "the chunks did not overlap: does each copy down wait only for the copy "
                                             "up that last read its buffer?");
  }
}

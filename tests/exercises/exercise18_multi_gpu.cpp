// The checks of lesson 18's exercises (lessons/18-multi-gpu/exercises.cpp). The first two need two
// devices: each case asks for them first (wbx::needDevices), and on a machine with one the exercise
// reports itself skipped with the reason, never passed. Whether peer access is enabled is read the
// only way the Driver API offers: cuCtxEnablePeerAccess answers CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
// (where it enables instead, the check disables it again). The timed check compares the copier with
// a plain staged copy measured in the same run.
#include "check.hpp"
#include "18-multi-gpu/exercises.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

int deviceCount() {
  CU_CHECK(cuInit(0));
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  return count;
}

bool canAccess(CUdevice from, CUdevice to) {
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
  void sync() const {
    wbt::Pushed current(ctx_);
    CU_CHECK(cuStreamSynchronize(s_));
  }

 private:
  CUcontext ctx_;
  CUstream s_ = nullptr;
};

// n floats of value written by vector_ops' fill kernel, on the device of ctx, in stream s.
class Filler {
 public:
  Filler() {
    CU_CHECK(cuLibraryLoadFromFile(&library_, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, library_, "fill"));
    fill_ = reinterpret_cast<CUfunction>(k);
  }
  ~Filler() { cuLibraryUnload(library_); }
  Filler(const Filler&) = delete;
  Filler& operator=(const Filler&) = delete;
  void operator()(CUcontext ctx, CUdeviceptr p, float value, unsigned n, CUstream s) const {
    wbt::Pushed current(ctx);
    void* args[] = {&p, &value, &n};
    CU_CHECK(cuLaunchKernel(fill_, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, args, nullptr));
  }

 private:
  CUlibrary library_ = nullptr;
  CUfunction fill_ = nullptr;
};

void setBytes(CUcontext ctx, CUdeviceptr p, unsigned char value, size_t bytes) {
  wbt::Pushed current(ctx);
  CU_CHECK(cuMemsetD8(p, value, bytes));
  CU_CHECK(cuCtxSynchronize());
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
         "cuCtxGetCurrent first, to restore at the end; cuCtxGetDevice with each context pushed gives its device. "
         "Where cuDeviceCanAccessPeer is 1 both ways: with dstCtx current cuCtxEnablePeerAccess(srcCtx, 0), with "
         "srcCtx current cuCtxEnablePeerAccess(dstCtx, 0), each accepting CUDA_SUCCESS or "
         "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, then cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream). "
         "Otherwise cuStreamSynchronize(stream), cuMemHostAlloc(&buf, bytes, CU_MEMHOSTALLOC_PORTABLE), cuMemcpyDtoH "
         "with srcCtx current, cuMemcpyHtoD with dstCtx current, cuMemFreeHost. cuMemcpyPeerAsync alone gives the "
         "right bytes too: what it lacks is the access that lets the copy take the link.") {
  TEST_CASE("bytes arrive both ways in stream order, the current context is kept, and peer access is enabled both ways where the devices allow it") {
    wbx::needDevices(2);
    Primaries all(2);
    const CUcontext ctx0 = all.contexts[0], ctx1 = all.contexts[1];
    disableAll(all.contexts);
    Filler fill;
    const unsigned n = 1u << 22;  // 16 MiB of floats
    const size_t bytes = size_t{n} * sizeof(float), odd = bytes - 1;
    Buffer on0(ctx0, bytes), on1(ctx1, bytes);
    Stream s0(ctx0), s1(ctx1);
    wbt::Pushed current(ctx0);

    setBytes(ctx1, on1.get(), 0, bytes);
    fill(ctx0, on0.get(), 7.0f, n, s0.get());  // not waited for: the copy must follow it in s0
    ex18::copyAcross(on1.get(), ctx1, on0.get(), ctx0, bytes, s0.get());
    const bool keptThere = wbt::current() == ctx0;
    s0.sync();
    const std::vector<unsigned char> want0 = bytesAt(ctx0, on0.get(), bytes);
    CHECK_MESSAGE(differing(bytesAt(ctx1, on1.get(), bytes), want0, bytes) == 0,
                  "device 1 did not get device 0's bytes (was the copy ordered after the fill in the stream?)");

    setBytes(ctx0, on0.get(), 0, bytes);
    fill(ctx1, on1.get(), 3.0f, n, s1.get());
    ex18::copyAcross(on0.get(), ctx0, on1.get(), ctx1, odd, s1.get());
    const bool keptBack = wbt::current() == ctx0;
    s1.sync();
    const std::vector<unsigned char> want1 = bytesAt(ctx1, on1.get(), bytes), got0 = bytesAt(ctx0, on0.get(), bytes);
    CHECK_MESSAGE(differing(got0, want1, odd) == 0, "device 0 did not get device 1's bytes");
    CHECK_MESSAGE(got0[odd] == 0, "a byte past the end of the copy was written");
    CHECK_MESSAGE(keptThere, "copyAcross left another context current");
    CHECK_MESSAGE(keptBack, "copyAcross left another context current");

    if (canAccess(all.devices[0], all.devices[1]) && canAccess(all.devices[1], all.devices[0])) {
      CHECK_MESSAGE(accessEnabled(ctx1, ctx0),
                    "peer access from device 1's context to device 0's memory is not enabled");
      CHECK_MESSAGE(accessEnabled(ctx0, ctx1),
                    "peer access from device 0's context to device 1's memory is not enabled");
    } else {
      MESSAGE("devices 0 and 1 cannot access each other: the staged path was checked");
    }
    disableAll(all.contexts);
  }
}

EXERCISE("enable-all-peers", "Enable every peer, twice, without an error",
         "Remember cuCtxGetCurrent and restore it with cuCtxSetCurrent at the end. For each context, "
         "cuCtxPushCurrent, cuCtxGetDevice, cuCtxPopCurrent gives its device. For each ordered pair i != j: if "
         "cuDeviceCanAccessPeer(&can, dev[i], dev[j]) gives 0, record {i, j}; otherwise push contexts[i], call "
         "cuCtxEnablePeerAccess(contexts[j], 0), pop, and CU_CHECK the result unless it is "
         "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED. CU_CHECK around the call itself makes the second call throw.") {
  TEST_CASE("called twice on every device's primary context: no error, the unsupported pairs reported, every other pair enabled, the current context kept") {
    wbx::needDevices(2);
    const int count = deviceCount();
    Primaries all(count);
    disableAll(all.contexts);
    wbt::Pushed current(all.contexts[0]);

    const std::vector<ex18::PeerPair> first = ex18::enableAllPeers(all.contexts);
    std::vector<ex18::PeerPair> second;
    CHECK_NOTHROW(second = ex18::enableAllPeers(all.contexts));
    const bool kept = wbt::current() == all.contexts[0];

    std::vector<ex18::PeerPair> unsupported;
    for (int i = 0; i < count; ++i)
      for (int j = 0; j < count; ++j)
        if (i != j && !canAccess(all.devices[i], all.devices[j])) unsupported.push_back({i, j});
    CAPTURE(count);
    CAPTURE(unsupported.size());
    CHECK_MESSAGE(first == unsupported, "the first call did not return exactly the pairs that cannot access");
    CHECK_MESSAGE(second == unsupported, "the second call did not return exactly the pairs that cannot access");
    size_t notEnabled = 0;
    for (int i = 0; i < count; ++i)
      for (int j = 0; j < count; ++j)
        if (i != j && canAccess(all.devices[i], all.devices[j]) && !accessEnabled(all.contexts[i], all.contexts[j]))
          ++notEnabled;
    CHECK_MESSAGE(notEnabled == 0, "pairs that can access each other were left without peer access");
    CHECK_MESSAGE(kept, "enableAllPeers left another context current");
    disableAll(all.contexts);
  }
}

EXERCISE("staged-copier", "A staged device-to-device copy that overlaps its two halves",
         "Constructor: cuMemHostAlloc(&staging_[k], chunkBytes, CU_MEMHOSTALLOC_PORTABLE) for k = 0, 1. In copy: "
         "remember the current context; with srcCtx current create a stream `down` and events downloaded[2], with "
         "dstCtx current a stream `up` and events uploaded[2]. For chunk i, k = i % 2: with srcCtx current, from "
         "i >= 2 on cuStreamWaitEvent(down, uploaded[k], 0), cuMemcpyDtoHAsync into staging_[k], cuEventRecord("
         "downloaded[k], down); with dstCtx current cuStreamWaitEvent(up, downloaded[k], 0), cuMemcpyHtoDAsync from "
         "staging_[k], cuEventRecord(uploaded[k], up). Then cuStreamSynchronize(up), destroy what you made, restore "
         "the context. One buffer used for every chunk forces each chunk to wait for the last: no overlap.") {
  TEST_CASE("an odd size and a size under one chunk arrive exactly, nothing past the end is written, and the current context is kept") {
    const int count = deviceCount();
    Primaries all(std::min(count, 2));
    const CUcontext src = all.contexts[0], dst = all.contexts.back();
    MESSAGE((count >= 2 ? "from device 0 to device 1" : "one device here: between two buffers of device 0"));
    const size_t chunk = 1u << 20, odd = 3 * chunk + 12345, small = 1000, slack = 4096;
    wbt::Pushed current(src);  // pinned memory is allocated in a context: the copier is made in one
    ex18::StagedCopier copier(chunk);
    std::vector<unsigned char> pattern(odd);
    for (size_t i = 0; i < odd; ++i) pattern[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    Buffer from(src, odd), to(dst, odd + slack);
    CU_CHECK(cuMemcpyHtoD(from.get(), pattern.data(), odd));
    for (const size_t bytes : {odd, small}) {
      CAPTURE(bytes);
      setBytes(dst, to.get(), 0xEE, odd + slack);
      copier.copy(to.get(), dst, from.get(), src, bytes);
      const bool kept = wbt::current() == src;
      const std::vector<unsigned char> got = bytesAt(dst, to.get(), odd + slack);
      CHECK_MESSAGE(differing(got, pattern, bytes) == 0, "bytes that are not the source's arrived");
      const bool untouched =
          std::all_of(got.begin() + static_cast<long>(bytes), got.end(), [](unsigned char c) { return c == 0xEE; });
      CHECK_MESSAGE(untouched, "bytes past the end of the copy were written");
      CHECK_MESSAGE(kept, "copy left another context current");
    }
  }

  TEST_CASE("256 MiB through chunks of 8 MiB takes at most 0.8 of copying down whole and then up whole, in this run") {
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

// The ledger's books and the entry points it stands before (ledger.hpp says what for).
#include "ledger.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

namespace wbx {

namespace {

using Key = std::pair<int, std::uintptr_t>;  // (kind, handle or address)

struct Books {
  std::mutex mutex;
  std::multimap<Key, CUcontext> live;  // each thing held, with the context current when it was made
  std::map<CUdevice, CUcontext> primary;
  std::map<std::string, long> calls;
  std::string failFunction;
  CUresult failError = CUDA_SUCCESS;
  unsigned failIn = 0;  // 0: nothing armed
  bool failFired = false;
};

Books& books() {
  static Books* b = new Books;  // never destroyed: calls may come from exit handlers
  return *b;
}

template <typename T>
std::uintptr_t key(T handle) {
  if constexpr (std::is_pointer_v<T>)
    return reinterpret_cast<std::uintptr_t>(handle);
  else
    return static_cast<std::uintptr_t>(handle);
}

CUcontext current() {
  CUcontext ctx = nullptr;
  cuCtxGetCurrent(&ctx);  // not on the books: it holds nothing
  return ctx;
}

template <typename T>
void add(Held kind, T handle, CUcontext ctx = current()) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.live.emplace(Key{static_cast<int>(kind), key(handle)}, ctx);
}

template <typename T>
void remove(Held kind, T handle) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  const auto it = b.live.find(Key{static_cast<int>(kind), key(handle)});
  if (it != b.live.end()) b.live.erase(it);
}

// Every mapping inside [from, from + bytes): one cuMemUnmap may end several cuMemMap.
void removeRange(Held kind, CUdeviceptr from, size_t bytes) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  const int k = static_cast<int>(kind);
  b.live.erase(b.live.lower_bound(Key{k, from}), b.live.lower_bound(Key{k, from + bytes}));
}

// What a context held goes with it.
void forgetContext(CUcontext ctx) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  for (auto it = b.live.begin(); it != b.live.end();) {
    const bool primaryRetain = it->first.first == static_cast<int>(Held::PrimaryRetains);
    it = !primaryRetain && it->second == ctx ? b.live.erase(it) : std::next(it);
  }
}

void retained(CUdevice dev, CUcontext ctx) {
  add(Held::PrimaryRetains, dev, ctx);
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.primary[dev] = ctx;
}

// After a release: once the primary context is no longer active, what it held is gone.
void released(CUdevice dev) {
  remove(Held::PrimaryRetains, dev);
  unsigned flags = 0;
  int active = 1;
  if (cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || active) return;
  CUcontext ctx = nullptr;
  {
    Books& b = books();
    std::lock_guard<std::mutex> lock(b.mutex);
    ctx = b.primary[dev];
  }
  if (ctx) forgetContext(ctx);
}

const char* const kKindNames[] = {"context",       "primary-context retain", "stream",         "event",
                                  "device allocation", "pinned host allocation", "host registration",
                                  "module",        "library",                "graph",          "executable graph",
                                  "link state",    "IPC mapping",            "allocation handle",
                                  "address reservation", "mapping",          "memory pool",    "green context"};
static_assert(sizeof(kKindNames) / sizeof(kKindNames[0]) == static_cast<int>(Held::Kinds), "a name per kind");

}  // namespace

std::string Holdings::differenceFrom(const Holdings& before) const {
  std::string out;
  for (int k = 0; k < static_cast<int>(Held::Kinds); ++k) {
    const long d = count[k] - before.count[k];
    if (d == 0) continue;
    if (!out.empty()) out += ", ";
    const long n = d < 0 ? -d : d;
    out += std::to_string(n) + " " + kKindNames[k] + (n == 1 ? "" : "s") + (d < 0 ? " fewer" : " more");
  }
  return out;
}

Holdings holdings() {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  Holdings h;
  for (const auto& [k, ctx] : b.live) ++h.count[k.first];
  return h;
}

long calls(const std::string& function) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  const auto it = b.calls.find(function);
  return it == b.calls.end() ? 0 : it->second;
}

FailCall::FailCall(const std::string& function, CUresult error, unsigned nth) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.failFunction = function, b.failError = error, b.failIn = nth, b.failFired = false;
}

FailCall::~FailCall() {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.failIn = 0;
}

bool FailCall::fired() const {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  return b.failFired;
}

namespace detail {

void* real(const char* symbol) { return dlsym(RTLD_NEXT, symbol); }

CUresult enter(const char* function) {
  Books& b = books();
  std::lock_guard<std::mutex> lock(b.mutex);
  ++b.calls[function];
  if (b.failIn == 0 || b.failFunction != function || --b.failIn != 0) return CUDA_SUCCESS;
  b.failFired = true;
  return b.failError;
}

}  // namespace detail

}  // namespace wbx

using wbx::Held;

// WBX_TRACK: WBX_INTERPOSE, and on success `then` (which sees the arguments) keeps the books.
#define WBX_TRACK(name, params, args, then)                                                      \
  extern "C" CUresult CUDAAPI name params {                                                      \
    using Real = CUresult(CUDAAPI*) params;                                                      \
    static const Real real = reinterpret_cast<Real>(::wbx::detail::real(WBX_STRING(name)));     \
    if (const CUresult injected = ::wbx::detail::enter(#name)) return injected;                  \
    if (!real) return CUDA_ERROR_NOT_FOUND;                                                      \
    const CUresult rc = real args;                                                               \
    if (rc == CUDA_SUCCESS) { then; }                                                            \
    return rc;                                                                                   \
  }

// Contexts, and what goes with them.
#if CUDA_VERSION >= 13000
WBX_TRACK(cuCtxCreate, (CUcontext * ctx, CUctxCreateParams* params, unsigned flags, CUdevice dev),
          (ctx, params, flags, dev), wbx::add(Held::Contexts, *ctx, *ctx))
#else
WBX_TRACK(cuCtxCreate, (CUcontext * ctx, unsigned flags, CUdevice dev), (ctx, flags, dev),
          wbx::add(Held::Contexts, *ctx, *ctx))
#endif
WBX_TRACK(cuCtxDestroy, (CUcontext ctx), (ctx), (wbx::remove(Held::Contexts, ctx), wbx::forgetContext(ctx)))
WBX_TRACK(cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice dev), (ctx, dev), wbx::retained(dev, *ctx))
WBX_TRACK(cuDevicePrimaryCtxRelease, (CUdevice dev), (dev), wbx::released(dev))
WBX_TRACK(cuDevicePrimaryCtxReset, (CUdevice dev), (dev), {
  CUcontext ctx = nullptr;
  {
    wbx::Books& b = wbx::books();
    std::lock_guard<std::mutex> lock(b.mutex);
    ctx = b.primary[dev];
  }
  if (ctx) wbx::forgetContext(ctx);
})
#if CUDA_VERSION >= 12040
WBX_TRACK(cuGreenCtxCreate, (CUgreenCtx * ctx, CUdevResourceDesc desc, CUdevice dev, unsigned flags),
          (ctx, desc, dev, flags), wbx::add(Held::GreenContexts, *ctx))
WBX_TRACK(cuGreenCtxDestroy, (CUgreenCtx ctx), (ctx), wbx::remove(Held::GreenContexts, ctx))
#endif

// Streams and events.
WBX_TRACK(cuStreamCreate, (CUstream * s, unsigned flags), (s, flags), wbx::add(Held::Streams, *s))
WBX_TRACK(cuStreamCreateWithPriority, (CUstream * s, unsigned flags, int priority), (s, flags, priority),
          wbx::add(Held::Streams, *s))
#if CUDA_VERSION >= 12050
WBX_TRACK(cuGreenCtxStreamCreate, (CUstream * s, CUgreenCtx ctx, unsigned flags, int priority),
          (s, ctx, flags, priority), wbx::add(Held::Streams, *s))
#endif
WBX_TRACK(cuStreamDestroy, (CUstream s), (s), wbx::remove(Held::Streams, s))
WBX_TRACK(cuEventCreate, (CUevent * e, unsigned flags), (e, flags), wbx::add(Held::Events, *e))
WBX_TRACK(cuIpcOpenEventHandle, (CUevent * e, CUipcEventHandle handle), (e, handle), wbx::add(Held::Events, *e))
WBX_TRACK(cuEventDestroy, (CUevent e), (e), wbx::remove(Held::Events, e))

// Memory.
WBX_TRACK(cuMemAlloc, (CUdeviceptr * p, size_t bytes), (p, bytes), wbx::add(Held::DeviceMemory, *p))
WBX_TRACK(cuMemAllocPitch, (CUdeviceptr * p, size_t* pitch, size_t width, size_t height, unsigned element),
          (p, pitch, width, height, element), wbx::add(Held::DeviceMemory, *p))
WBX_TRACK(cuMemAllocManaged, (CUdeviceptr * p, size_t bytes, unsigned flags), (p, bytes, flags),
          wbx::add(Held::DeviceMemory, *p))
WBX_TRACK(cuMemAllocAsync, (CUdeviceptr * p, size_t bytes, CUstream s), (p, bytes, s),
          wbx::add(Held::DeviceMemory, *p))
WBX_TRACK(cuMemAllocFromPoolAsync, (CUdeviceptr * p, size_t bytes, CUmemoryPool pool, CUstream s),
          (p, bytes, pool, s), wbx::add(Held::DeviceMemory, *p))
WBX_TRACK(cuMemFree, (CUdeviceptr p), (p), wbx::remove(Held::DeviceMemory, p))
WBX_TRACK(cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, s), wbx::remove(Held::DeviceMemory, p))
WBX_TRACK(cuMemAllocHost, (void** p, size_t bytes), (p, bytes), wbx::add(Held::PinnedHost, *p))
WBX_TRACK(cuMemHostAlloc, (void** p, size_t bytes, unsigned flags), (p, bytes, flags), wbx::add(Held::PinnedHost, *p))
WBX_TRACK(cuMemFreeHost, (void* p), (p), wbx::remove(Held::PinnedHost, p))
WBX_TRACK(cuMemHostRegister, (void* p, size_t bytes, unsigned flags), (p, bytes, flags),
          wbx::add(Held::HostRegistered, p))
WBX_TRACK(cuMemHostUnregister, (void* p), (p), wbx::remove(Held::HostRegistered, p))
WBX_TRACK(cuMemPoolCreate, (CUmemoryPool * pool, const CUmemPoolProps* props), (pool, props),
          wbx::add(Held::Pools, *pool))
WBX_TRACK(cuMemPoolDestroy, (CUmemoryPool pool), (pool), wbx::remove(Held::Pools, pool))
WBX_TRACK(cuIpcOpenMemHandle, (CUdeviceptr * p, CUipcMemHandle handle, unsigned flags), (p, handle, flags),
          wbx::add(Held::IpcMappings, *p))
WBX_TRACK(cuIpcCloseMemHandle, (CUdeviceptr p), (p), wbx::remove(Held::IpcMappings, p))

// Virtual memory.
WBX_TRACK(cuMemCreate,
          (CUmemGenericAllocationHandle * h, size_t bytes, const CUmemAllocationProp* prop, unsigned long long flags),
          (h, bytes, prop, flags), wbx::add(Held::MemHandles, *h))
WBX_TRACK(cuMemImportFromShareableHandle,
          (CUmemGenericAllocationHandle * h, void* osHandle, CUmemAllocationHandleType type), (h, osHandle, type),
          wbx::add(Held::MemHandles, *h))
WBX_TRACK(cuMemRetainAllocationHandle, (CUmemGenericAllocationHandle * h, void* address), (h, address),
          wbx::add(Held::MemHandles, *h))
WBX_TRACK(cuMemRelease, (CUmemGenericAllocationHandle h), (h), wbx::remove(Held::MemHandles, h))
WBX_TRACK(cuMemAddressReserve,
          (CUdeviceptr * p, size_t bytes, size_t alignment, CUdeviceptr hint, unsigned long long flags),
          (p, bytes, alignment, hint, flags), wbx::add(Held::Reservations, *p))
WBX_TRACK(cuMemAddressFree, (CUdeviceptr p, size_t bytes), (p, bytes), wbx::remove(Held::Reservations, p))
WBX_TRACK(cuMemMap,
          (CUdeviceptr p, size_t bytes, size_t offset, CUmemGenericAllocationHandle h, unsigned long long flags),
          (p, bytes, offset, h, flags), wbx::add(Held::Mappings, p))
WBX_TRACK(cuMemUnmap, (CUdeviceptr p, size_t bytes), (p, bytes), wbx::removeRange(Held::Mappings, p, bytes))

// Code.
WBX_TRACK(cuModuleLoad, (CUmodule * m, const char* path), (m, path), wbx::add(Held::Modules, *m))
WBX_TRACK(cuModuleLoadData, (CUmodule * m, const void* image), (m, image), wbx::add(Held::Modules, *m))
WBX_TRACK(cuModuleLoadDataEx,
          (CUmodule * m, const void* image, unsigned n, CUjit_option* options, void** values),
          (m, image, n, options, values), wbx::add(Held::Modules, *m))
WBX_TRACK(cuModuleLoadFatBinary, (CUmodule * m, const void* image), (m, image), wbx::add(Held::Modules, *m))
WBX_TRACK(cuModuleUnload, (CUmodule m), (m), wbx::remove(Held::Modules, m))
WBX_TRACK(cuLibraryLoadData,
          (CUlibrary * l, const void* code, CUjit_option* jitOptions, void** jitValues, unsigned jitCount,
           CUlibraryOption* options, void** values, unsigned count),
          (l, code, jitOptions, jitValues, jitCount, options, values, count), wbx::add(Held::Libraries, *l, nullptr))
WBX_TRACK(cuLibraryLoadFromFile,
          (CUlibrary * l, const char* path, CUjit_option* jitOptions, void** jitValues, unsigned jitCount,
           CUlibraryOption* options, void** values, unsigned count),
          (l, path, jitOptions, jitValues, jitCount, options, values, count), wbx::add(Held::Libraries, *l, nullptr))
WBX_TRACK(cuLibraryUnload, (CUlibrary l), (l), wbx::remove(Held::Libraries, l))
WBX_TRACK(cuLinkCreate, (unsigned n, CUjit_option* options, void** values, CUlinkState* state),
          (n, options, values, state), wbx::add(Held::LinkStates, *state))
WBX_TRACK(cuLinkDestroy, (CUlinkState state), (state), wbx::remove(Held::LinkStates, state))

// Graphs.
WBX_TRACK(cuGraphCreate, (CUgraph * g, unsigned flags), (g, flags), wbx::add(Held::Graphs, *g))
WBX_TRACK(cuGraphClone, (CUgraph * g, CUgraph original), (g, original), wbx::add(Held::Graphs, *g))
WBX_TRACK(cuStreamEndCapture, (CUstream s, CUgraph* g), (s, g), if (*g) wbx::add(Held::Graphs, *g))
WBX_TRACK(cuGraphDestroy, (CUgraph g), (g), wbx::remove(Held::Graphs, g))
WBX_TRACK(cuGraphInstantiate, (CUgraphExec * e, CUgraph g, unsigned long long flags), (e, g, flags),
          wbx::add(Held::GraphExecs, *e))
WBX_TRACK(cuGraphInstantiateWithParams, (CUgraphExec * e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS* params),
          (e, g, params), wbx::add(Held::GraphExecs, *e))
WBX_TRACK(cuGraphExecDestroy, (CUgraphExec e), (e), wbx::remove(Held::GraphExecs, e))

// Calls that hold nothing, counted (and able to fail) all the same.
WBX_INTERPOSE(cuCtxSynchronize, (void), ())
WBX_INTERPOSE(cuStreamSynchronize, (CUstream s), (s))
WBX_INTERPOSE(cuEventSynchronize, (CUevent e), (e))
WBX_INTERPOSE(cuStreamQuery, (CUstream s), (s))
WBX_INTERPOSE(cuEventQuery, (CUevent e), (e))
WBX_INTERPOSE(cuEventRecord, (CUevent e, CUstream s), (e, s))
WBX_INTERPOSE(cuStreamWaitEvent, (CUstream s, CUevent e, unsigned flags), (s, e, flags))
WBX_INTERPOSE(cuStreamBeginCapture, (CUstream s, CUstreamCaptureMode mode), (s, mode))
WBX_INTERPOSE(cuCtxPushCurrent, (CUcontext ctx), (ctx))
WBX_INTERPOSE(cuCtxPopCurrent, (CUcontext * ctx), (ctx))
WBX_INTERPOSE(cuCtxSetCurrent, (CUcontext ctx), (ctx))
WBX_INTERPOSE(cuMemcpyHtoD, (CUdeviceptr dst, const void* src, size_t bytes), (dst, src, bytes))
WBX_INTERPOSE(cuMemcpyDtoH, (void* dst, CUdeviceptr src, size_t bytes), (dst, src, bytes))
WBX_INTERPOSE(cuMemcpyDtoD, (CUdeviceptr dst, CUdeviceptr src, size_t bytes), (dst, src, bytes))
WBX_INTERPOSE(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t bytes), (dst, src, bytes))
WBX_INTERPOSE(cuMemcpyHtoDAsync, (CUdeviceptr dst, const void* src, size_t bytes, CUstream s), (dst, src, bytes, s))
WBX_INTERPOSE(cuMemcpyDtoHAsync, (void* dst, CUdeviceptr src, size_t bytes, CUstream s), (dst, src, bytes, s))
WBX_INTERPOSE(cuMemcpyDtoDAsync, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s), (dst, src, bytes, s))
WBX_INTERPOSE(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s), (dst, src, bytes, s))
WBX_INTERPOSE(cuMemsetD8, (CUdeviceptr dst, unsigned char v, size_t n), (dst, v, n))
WBX_INTERPOSE(cuMemsetD16, (CUdeviceptr dst, unsigned short v, size_t n), (dst, v, n))
WBX_INTERPOSE(cuMemsetD32, (CUdeviceptr dst, unsigned int v, size_t n), (dst, v, n))
WBX_INTERPOSE(cuLaunchKernel,
              (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
               unsigned shared, CUstream s, void** params, void** extra),
              (f, gx, gy, gz, bx, by, bz, shared, s, params, extra))
WBX_INTERPOSE(cuLaunchKernelEx, (const CUlaunchConfig* config, CUfunction f, void** params, void** extra),
              (config, f, params, extra))
WBX_INTERPOSE(cuLaunchHostFunc, (CUstream s, CUhostFn fn, void* data), (s, fn, data))
WBX_INTERPOSE(cuGraphLaunch, (CUgraphExec e, CUstream s), (e, s))
WBX_INTERPOSE(cuModuleGetFunction, (CUfunction * f, CUmodule m, const char* name), (f, m, name))
WBX_INTERPOSE(cuLibraryGetKernel, (CUkernel * k, CUlibrary l, const char* name), (k, l, name))
WBX_INTERPOSE(cuKernelGetFunction, (CUfunction * f, CUkernel k), (f, k))
WBX_INTERPOSE(cuMemGetInfo, (size_t * free, size_t* total), (free, total))

// The checks of lesson 22's exercises (lessons/22-batched-copies/exercises.cpp). The check binary
// stands between the code and cuMemcpyBatchAsync and cuMemcpy3DBatchAsync (below), so it sees every
// batch the code makes, and can refuse one without it reaching the driver. Pending work comes from the
// gate kernel of lesson 09: nothing sleeps, and every gate gives up at its deadline. The code under
// check runs in a context the check created; the ledger (ledger.hpp) says what it left held. CUDA 12.8
// introduced the batch calls: with an older cuda.h, or an older driver, exercises 1 and 3 report
// themselves skipped (exercise 2 needs neither). cuStreamIsCapturing, which the ledger does not stand
// before, is interposed here so that it can be made to fail. Each case's name begins with the
// requirements it verifies.
#include "check.hpp"
#include "gate.hpp"
#include "22-batched-copies/exercises.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// What the check saw of the batches made since reset().
struct SeenBatch {
  size_t count = 0;
  std::vector<size_t> sizes;
  std::vector<unsigned> orders;  // each copy's srcAccessOrder, from attrs and attrsIdxs
  CUstream stream = nullptr;
};
struct Seen3D {
  size_t numOps = 0;
  unsigned long long flags = 0;
  CUstream stream = nullptr;
  unsigned order = 0;  // the first operation's srcAccessOrder
};
struct Seen {
  std::vector<SeenBatch> batches;
  std::vector<Seen3D> batches3D;
  bool refuse = false;  // answer every batch with CUDA_ERROR_INVALID_VALUE, never reaching the driver
  void reset() { batches.clear(), batches3D.clear(), refuse = false; }
};
Seen& seen() {
  static Seen s;
  return s;
}

}  // namespace

#if CUDA_VERSION >= 12080

namespace {

void noteBatch(CUdeviceptr*, CUdeviceptr*, size_t* sizes, size_t count, CUmemcpyAttributes* attrs, size_t* attrsIdxs,
               size_t numAttrs, CUstream stream) {
  SeenBatch b;
  b.count = count;
  b.stream = stream;
  if (sizes) b.sizes.assign(sizes, sizes + count);
  for (size_t i = 0; attrs && attrsIdxs && numAttrs > 0 && i < count; ++i) {
    size_t k = 0;
    while (k + 1 < numAttrs && attrsIdxs[k + 1] <= i) ++k;
    b.orders.push_back(static_cast<unsigned>(attrs[k].srcAccessOrder));
  }
  seen().batches.push_back(b);
}

void note3D(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* ops, unsigned long long flags, CUstream stream) {
  seen().batches3D.push_back({numOps, flags, stream, numOps && ops ? static_cast<unsigned>(ops[0].srcAccessOrder) : 0});
}

}  // namespace

// The two entry points, as the source calls them (cuda.h's macros pick the symbol: the _v2 ones from
// 13.0), counted by the ledger too, so that FailCall can fail them.
#if CUDA_VERSION >= 13000
extern "C" CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                                               CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                                               CUstream stream) {
  using Real = CUresult(CUDAAPI*)(CUdeviceptr*, CUdeviceptr*, size_t*, size_t, CUmemcpyAttributes*, size_t*, size_t,
                                  CUstream);
  static const Real real = reinterpret_cast<Real>(wbx::detail::real(WBX_STRING(cuMemcpyBatchAsync)));
  noteBatch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
  if (const CUresult injected = wbx::detail::enter("cuMemcpyBatchAsync")) return injected;
  if (seen().refuse) return CUDA_ERROR_INVALID_VALUE;
  return real ? real(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream) : CUDA_ERROR_NOT_FOUND;
}
extern "C" CUresult CUDAAPI cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* ops, unsigned long long flags,
                                                 CUstream stream) {
  using Real = CUresult(CUDAAPI*)(size_t, CUDA_MEMCPY3D_BATCH_OP*, unsigned long long, CUstream);
  static const Real real = reinterpret_cast<Real>(wbx::detail::real(WBX_STRING(cuMemcpy3DBatchAsync)));
  note3D(numOps, ops, flags, stream);
  if (const CUresult injected = wbx::detail::enter("cuMemcpy3DBatchAsync")) return injected;
  if (seen().refuse) return CUDA_ERROR_INVALID_VALUE;
  return real ? real(numOps, ops, flags, stream) : CUDA_ERROR_NOT_FOUND;
}
#else  // 12.8 and 12.9: the same with failIdx
extern "C" CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes, size_t count,
                                               CUmemcpyAttributes* attrs, size_t* attrsIdxs, size_t numAttrs,
                                               size_t* failIdx, CUstream stream) {
  using Real = CUresult(CUDAAPI*)(CUdeviceptr*, CUdeviceptr*, size_t*, size_t, CUmemcpyAttributes*, size_t*, size_t,
                                  size_t*, CUstream);
  static const Real real = reinterpret_cast<Real>(wbx::detail::real(WBX_STRING(cuMemcpyBatchAsync)));
  noteBatch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
  if (const CUresult injected = wbx::detail::enter("cuMemcpyBatchAsync")) return injected;
  if (seen().refuse) return CUDA_ERROR_INVALID_VALUE;
  return real ? real(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, stream) : CUDA_ERROR_NOT_FOUND;
}
extern "C" CUresult CUDAAPI cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP* ops, size_t* failIdx,
                                                 unsigned long long flags, CUstream stream) {
  using Real = CUresult(CUDAAPI*)(size_t, CUDA_MEMCPY3D_BATCH_OP*, size_t*, unsigned long long, CUstream);
  static const Real real = reinterpret_cast<Real>(wbx::detail::real(WBX_STRING(cuMemcpy3DBatchAsync)));
  note3D(numOps, ops, flags, stream);
  if (const CUresult injected = wbx::detail::enter("cuMemcpy3DBatchAsync")) return injected;
  if (seen().refuse) return CUDA_ERROR_INVALID_VALUE;
  return real ? real(numOps, ops, failIdx, flags, stream) : CUDA_ERROR_NOT_FOUND;
}
#endif

#endif  // CUDA_VERSION >= 12080

WBX_INTERPOSE(cuStreamIsCapturing, (CUstream stream, CUstreamCaptureStatus* status), (stream, status))

namespace {

// The batch calls need CUDA 12.8 in the build and in the driver; else the exercise is skipped.
void needBatches() {
  if (CUDA_VERSION < 12080)
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": cuMemcpyBatchAsync came with 12.8");
  int driver = 0;
  CU_CHECK(cuInit(0));
  CU_CHECK(cuDriverGetVersion(&driver));
  if (driver < 12080) throw wbx::Skipped("driver " + std::to_string(driver) + ": cuMemcpyBatchAsync came with 12.8");
}

// A context of the check's own on device 0, current for the test, with the gate kernel loaded into
// it (before any gate closes); the batches seen start from none.
struct Lab {
  CUdevice dev = (needBatches(), wbt::initDriver(), wbt::device(0));
  wbt::OwnedContext ctx{dev};
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);
    seen().reset();
  }
  ~Lab() {
    seen().reset();
    cuLibraryUnload(library);
  }
};

class Pinned {
 public:
  explicit Pinned(size_t bytes) { CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&p_), bytes)); }
  ~Pinned() { cuMemFreeHost(p_); }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  unsigned char* get() const { return p_; }
  CUdeviceptr addr() const { return reinterpret_cast<CUdeviceptr>(p_); }

 private:
  unsigned char* p_ = nullptr;
};

using wbt::DeviceBuffer;
using wbt::Stream;

CUdeviceptr addr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

std::vector<unsigned char> bytePattern(uint32_t seed, size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(wbt::patternAt(seed, i) >> 13);
  return v;
}

std::vector<unsigned char> download(CUdeviceptr p, size_t n) {
  std::vector<unsigned char> out(n);
  CU_CHECK(cuMemcpyDtoH(out.data(), p, n));
  return out;
}

// A copy from pageable memory may return once the bytes are staged, before they land, and it runs in
// the legacy stream, which the check's non-blocking streams do not wait for: wait for the context.
void upload(CUdeviceptr p, const std::vector<unsigned char>& bytes) {
  CU_CHECK(cuMemcpyHtoD(p, bytes.data(), bytes.size()));
  CU_CHECK(cuCtxSynchronize());
}

constexpr unsigned kStream = 1;  // CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, whatever the header

// Whether call threw something other than wb::NotDone (which goes on: the exercise is not done).
template <typename Call>
bool throws(Call&& call) {
  try {
    call();
  } catch (const wb::NotDone&) {
    throw;
  } catch (const std::exception&) {
    return true;
  }
  return false;
}

}  // namespace

EXERCISE("scattered-blocks", "Scattered blocks in one call, and where one call is refused",
         "one wb::memcpyBatchAsync for the copies of more than 0 bytes, each with srcAccessOrder STREAM; on NULL, "
         "CU_STREAM_LEGACY or a capturing stream (cuStreamIsCapturing), one cuMemcpyAsync per copy, in order") {
  TEST_CASE("R1 R2 R3 R4 R8 R9: on a created stream: one batch of the copies of more than 0 bytes, in stream order, returned before it ran") {
    Lab lab;
    Stream s;
    const std::vector<unsigned char> a = bytePattern(1, 1u << 20);
    DeviceBuffer device(4u << 20);  // [0, 1 MiB) a source, destinations from 1 MiB
    upload(device.get(), a);
    Pinned pinned(2u << 20);  // [0, 64 KiB) a source, from 1 MiB a destination
    std::memset(pinned.get(), 1, 65536);
    std::memset(pinned.get() + (1u << 20), 0, 4099);
    const std::vector<ex22::BlockCopy> blocks = {{device.get() + (1u << 20), pinned.addr(), 65536},
                                                 {device.get() + (2u << 20), device.get(), 3},
                                                 {device.get() + (3u << 20), device.get(), 0},
                                                 {pinned.addr() + (1u << 20), device.get(), 4099}};
    const auto stack = wbx::contextStack();
    const wbx::Holdings before = wbx::holdings();
    const long loops = wbx::calls("cuMemcpyAsync");
    bool returnedFirst = false;
    {
      wb::Gate gate(lab.k.gate, s.get(), 3.0);
      ex22::copyBlocks(blocks, s.get());
      returnedFirst = gate.outcome() == wb::Gate::Waiting;
      std::memset(pinned.get(), 2, 65536);  // read in stream order: these bytes must arrive
      gate.open();
      s.sync();
    }
    CHECK(returnedFirst);
    REQUIRE(seen().batches.size() == 1);
    const SeenBatch& b = seen().batches[0];
    CHECK(b.count == 3);
    std::vector<size_t> sizes = b.sizes;  // in any order: the task asks for one batch, not an order
    std::sort(sizes.begin(), sizes.end());
    CHECK(sizes == std::vector<size_t>{3, 4099, 65536});
    CHECK(b.orders == std::vector<unsigned>(3, kStream));
    CHECK(b.stream == s.get());
    CHECK(wbx::calls("cuMemcpyAsync") == loops);
    const std::vector<unsigned char> first = download(device.get() + (1u << 20), 65536);
    CHECK(std::all_of(first.begin(), first.end(), [](unsigned char v) { return v == 2; }));
    CHECK(download(device.get() + (2u << 20), 3) == std::vector<unsigned char>(a.begin(), a.begin() + 3));
    CHECK(std::memcmp(pinned.get() + (1u << 20), a.data(), 4099) == 0);
    CHECK(wbx::holdings().differenceFrom(before) == "");
    CHECK(wbx::contextStack() == stack);
  }

  // In the device's primary context: on an H200 with driver 580 the reference solution's batch copy
  // into pageable memory, made in a context of cuCtxCreate, did not bring the bytes, while lesson 22's
  // program saw the same copy arrive in the primary context. The task asks about memory kinds here,
  // not contexts, so this case does not depend on what that driver did.
  TEST_CASE("R2 R3: pageable memory both ways, odd sizes, byte for byte") {
    needBatches();
    wbt::RetainedPrimary primary(wbt::device(0));
    wbt::Pushed current(primary.get());
    seen().reset();
    Stream s;
    const std::vector<unsigned char> from = bytePattern(2, 70001), back = bytePattern(3, 12345);
    std::vector<unsigned char> into(back.size(), 0);
    DeviceBuffer device(2u << 20);
    upload(device.get() + (1u << 20), back);
    ex22::copyBlocks({{device.get(), addr(from.data()), from.size()}, {addr(into.data()), device.get() + (1u << 20), into.size()}},
                     s.get());
    s.sync();
    CHECK(download(device.get(), from.size()) == from);
    CHECK(into == back);
    REQUIRE(seen().batches.size() == 1);
    CHECK(seen().batches[0].orders == std::vector<unsigned>(2, kStream));
  }

  TEST_CASE("R4 R5 R8: on the legacy stream, NULL and CU_STREAM_LEGACY: one cuMemcpyAsync per copy, in the list's order, no batch") {
    Lab lab;
    const std::vector<unsigned char> first = bytePattern(4, 8192), second = bytePattern(5, 8192);
    Pinned pinned(3 * 8192);
    std::memcpy(pinned.get(), first.data(), 8192);
    std::memcpy(pinned.get() + 8192, second.data(), 8192);
    DeviceBuffer device(8192);
    for (CUstream legacy : {static_cast<CUstream>(nullptr), CU_STREAM_LEGACY}) {
      CAPTURE(legacy == nullptr ? "NULL" : "CU_STREAM_LEGACY");
      wbt::setBytes(device.get(), 0, 8192);
      std::memset(pinned.get() + 2 * 8192, 0, 8192);
      const long loops = wbx::calls("cuMemcpyAsync");
      const wbx::Holdings before = wbx::holdings();
      // Both write the device buffer: the second one's bytes must be what is left. Then a copy back.
      ex22::copyBlocks({{device.get(), pinned.addr(), 8192},
                        {device.get(), pinned.addr() + 8192, 8192},
                        {device.get(), pinned.addr(), 0},
                        {pinned.addr() + 2 * 8192, device.get(), 8192}},
                       legacy);
      CU_CHECK(cuCtxSynchronize());
      CHECK(seen().batches.empty());
      CHECK(wbx::calls("cuMemcpyAsync") - loops == 3);
      CHECK(download(device.get(), 8192) == second);
      CHECK(std::memcmp(pinned.get() + 2 * 8192, second.data(), 8192) == 0);
      CHECK(wbx::holdings().differenceFrom(before) == "");
    }
  }

  TEST_CASE("R6: in a capturing stream: no batch; the graph holds one copy node per copy and, launched, copies them") {
    Lab lab;
    Stream s;
    const std::vector<unsigned char> a = bytePattern(6, 4096), b = bytePattern(7, 777);
    Pinned pinned(8192);
    std::memcpy(pinned.get(), a.data(), a.size());
    DeviceBuffer device(8192);
    upload(device.get() + 4096, b);
    std::memset(pinned.get() + 4096, 0, b.size());
    wbt::setBytes(device.get(), 0, a.size());
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    const bool threw = throws([&] {
      ex22::copyBlocks({{device.get(), pinned.addr(), a.size()}, {pinned.addr() + 4096, device.get() + 4096, b.size()}},
                       s.get());
    });
    CUgraph graph = nullptr;
    const CUresult ended = cuStreamEndCapture(s.get(), &graph);
    CHECK_FALSE(threw);
    CHECK(seen().batches.empty());
    REQUIRE(ended == CUDA_SUCCESS);
    REQUIRE(graph != nullptr);
    size_t nodes = 0;
    CU_CHECK(cuGraphGetNodes(graph, nullptr, &nodes));
    std::vector<CUgraphNode> all(nodes);
    if (nodes) CU_CHECK(cuGraphGetNodes(graph, all.data(), &nodes));
    size_t copies = 0;
    for (CUgraphNode node : all) {
      CUgraphNodeType type{};
      CU_CHECK(cuGraphNodeGetType(node, &type));
      copies += type == CU_GRAPH_NODE_TYPE_MEMCPY;
    }
    CHECK(copies == 2);
    CUgraphExec exec = nullptr;
    CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
    CU_CHECK(cuGraphLaunch(exec, s.get()));
    s.sync();
    CHECK(download(device.get(), a.size()) == a);
    CHECK(std::memcmp(pinned.get() + 4096, b.data(), b.size()) == 0);
    cuGraphExecDestroy(exec);
    cuGraphDestroy(graph);
  }

  TEST_CASE("R4: nothing to copy, an empty list or copies of 0 bytes only: no call at all") {
    Lab lab;
    Stream s;
    DeviceBuffer device(4096);
    const long loops = wbx::calls("cuMemcpyAsync");
    ex22::copyBlocks({}, s.get());
    ex22::copyBlocks({{device.get(), device.get() + 2048, 0}, {device.get() + 2048, device.get(), 0}}, s.get());
    ex22::copyBlocks({{device.get(), device.get() + 2048, 0}}, nullptr);
    s.sync();
    CHECK(seen().batches.empty());
    CHECK(wbx::calls("cuMemcpyAsync") == loops);
  }

  TEST_CASE("R7 R8: a refused batch, a refused first or second cuMemcpyAsync on the legacy stream, or a refused cuStreamIsCapturing, throws and leaves nothing held") {
    Lab lab;
    Stream s;
    DeviceBuffer device(8192);
    const std::vector<ex22::BlockCopy> blocks = {{device.get(), device.get() + 4096, 4096}};
    // Two copies on the legacy stream: each of the two cuMemcpyAsync calls fails in turn.
    const std::vector<ex22::BlockCopy> two = {{device.get(), device.get() + 4096, 2048},
                                              {device.get() + 2048, device.get() + 6144, 2048}};
    const wbx::Holdings before = wbx::holdings();
    {
      wbx::FailCall fail("cuMemcpyBatchAsync", CUDA_ERROR_INVALID_VALUE);
      CHECK(throws([&] { ex22::copyBlocks(blocks, s.get()); }));
      CHECK(fail.fired());
    }
    for (unsigned nth : {1u, 2u}) {
      CAPTURE(nth);
      wbx::FailCall fail("cuMemcpyAsync", CUDA_ERROR_INVALID_VALUE, nth);
      CHECK(throws([&] { ex22::copyBlocks(two, nullptr); }));
      CHECK(fail.fired());
    }
    {
      // The task names cuStreamIsCapturing; a solution that asks otherwise is not held to this one.
      wbx::FailCall fail("cuStreamIsCapturing", CUDA_ERROR_INVALID_VALUE);
      const bool threw = throws([&] { ex22::copyBlocks(blocks, s.get()); });
      if (fail.fired()) CHECK_MESSAGE(threw, "cuStreamIsCapturing failed and copyBlocks went on as if it had answered");
    }
    s.sync();
    CU_CHECK(cuCtxSynchronize());
    CHECK(wbx::holdings().differenceFrom(before) == "");
  }
}

namespace {

// The rules of exercise 2, as its task states them: the answer every case is compared with.
ex22::BatchCheck expectedCheck(size_t count, const std::vector<ex22::AttrEntry>& e) {
  using F = ex22::BatchFault;
  if (e.empty()) return {F::NoAttributes, SIZE_MAX};
  if (e.size() > count) return {F::MoreAttributesThanCopies, SIZE_MAX};
  if (e[0].firstCopy != 0) return {F::FirstIndexNotZero, 0};
  for (size_t k = 1; k < e.size(); ++k)
    if (e[k].firstCopy <= e[k - 1].firstCopy) return {F::IndexNotIncreasing, k};
  if (e.back().firstCopy >= count) return {F::IndexPastLastCopy, e.size() - 1};
  for (size_t k = 0; k < e.size(); ++k)
    if (e[k].srcAccessOrder < 1 || e[k].srcAccessOrder > 3) return {F::InvalidAccessOrder, k};
  return {F::None, SIZE_MAX};
}

const char* faultName(ex22::BatchFault f) {
  using F = ex22::BatchFault;
  switch (f) {
    case F::None: return "None";
    case F::NoAttributes: return "NoAttributes";
    case F::MoreAttributesThanCopies: return "MoreAttributesThanCopies";
    case F::FirstIndexNotZero: return "FirstIndexNotZero";
    case F::IndexNotIncreasing: return "IndexNotIncreasing";
    case F::IndexPastLastCopy: return "IndexPastLastCopy";
    case F::InvalidAccessOrder: return "InvalidAccessOrder";
  }
  return "?";
}

std::string describe(size_t count, const std::vector<ex22::AttrEntry>& e) {
  std::string s = "count " + std::to_string(count) + ", entries {";
  for (const auto& a : e) s += " (" + std::to_string(a.firstCopy) + ", " + std::to_string(a.srcAccessOrder) + ")";
  return s + " }";
}

// Whether checkBatch gave the answer the rules give (a failed CHECK says which batch and both answers).
bool checkOne(size_t count, const std::vector<ex22::AttrEntry>& e) {
  const ex22::BatchCheck want = expectedCheck(count, e), got = ex22::checkBatch(count, e);
  INFO(describe(count, e) << ": want " << faultName(want.fault) << " at " << want.at << ", got " << faultName(got.fault)
                          << " at " << got.at);
  CHECK(got.fault == want.fault);
  CHECK(got.at == want.at);
  return got.fault == want.fault && got.at == want.at;
}

}  // namespace

EXERCISE("batch-rules", "Say which rule a batch breaks, now that 13.0 has no failIdx",
         "check the rules in the task's order; at is the entry's position k (SIZE_MAX for the whole batch); valid "
         "orders are 1, 2 and 3 only; indices strictly increase and the last one is below count") {
  TEST_CASE("R1 R2 R3 R4 R5 R6 R7 R9: every rule broken alone, at the first, a middle and the last entry") {
    using E = ex22::AttrEntry;
    const size_t M = SIZE_MAX;
    const std::vector<std::pair<size_t, std::vector<E>>> cases = {
        {4, {{0, 1}, {2, 2}}},                    // a good batch
        {1, {{0, 3}}},                            // one copy, one entry
        {4, {}},                                  // no attributes
        {2, {{0, 1}, {1, 1}, {2, 1}}},            // more entries than copies
        {4, {{1, 1}, {2, 1}}},                    // first index not 0
        {8, {{0, 1}, {3, 1}, {3, 1}, {5, 1}}},    // equal neighbours in the middle
        {8, {{0, 1}, {3, 1}, {2, 1}}},            // decreasing at the last entry
        {8, {{0, 1}, {0, 1}}},                    // equal at entry 1
        {4, {{0, 1}, {4, 1}}},                    // last index == count
        {4, {{0, 1}, {3, 1}}},                    // last index == count - 1: fine
        {4, {{0, 1}, {M, 1}}},                    // last index SIZE_MAX
        {6, {{0, 0}, {2, 1}}},                    // order 0 (a zeroed struct) at the first entry
        {6, {{0, 1}, {2, 4}, {4, 2}}},            // order 4 in the middle
        {6, {{0, 2}, {2, 3}, {4, 0x7FFFFFFFu}}},  // order MAX at the last entry
        {6, {{0, 1}, {2, 0xFFFFFFFFu}}},          // no order at all
        {4, {{0, 1}, {M, 1}, {M, 1}}},            // equal neighbours of SIZE_MAX: no + 1 may wrap
        {4, {{0, 1}, {M - 1, 1}, {M, 1}}},        // increasing up to SIZE_MAX, past the last copy
    };
    for (const auto& [count, entries] : cases) checkOne(count, entries);
  }

  TEST_CASE("R7 R8: two rules broken: the earlier one in the task's order wins, at its first entry") {
    checkOne(0, {});                               // no copies, no attributes
    checkOne(0, {{0, 1}});                         // more entries than copies (count 0)
    checkOne(2, {{1, 0}, {1, 0}, {5, 9}});         // more entries than copies beats everything else
    checkOne(4, {{1, 0}, {0, 1}});                 // first index beats increasing and the order
    checkOne(6, {{0, 0}, {2, 1}, {2, 1}});         // increasing beats the order at entry 0
    checkOne(6, {{0, 1}, {4, 1}, {3, 1}, {2, 1}}); // the first k that does not increase
    checkOne(3, {{0, 9}, {5, 1}});                 // past the last copy beats the order
    checkOne(9, {{0, 1}, {2, 0}, {4, 0}});         // the first invalid order
  }

  TEST_CASE("R1 R2 R3 R4 R5 R6 R7 R8: 2000 batches from a fixed seed, each as the rules say (the first wrong answer ends it)") {
    std::mt19937_64 rng(22);
    for (int i = 0; i < 2000; ++i) {
      const size_t count = rng() % 7;
      std::vector<ex22::AttrEntry> e(rng() % 6);
      size_t next = rng() % 3 == 0 ? rng() % 3 : 0;
      for (auto& a : e) {
        a.firstCopy = next;
        next += rng() % 4 == 0 ? 0 : 1 + rng() % 2;  // mostly increasing, sometimes not
        const unsigned pick = static_cast<unsigned>(rng() % 12);
        a.srcAccessOrder = pick < 9 ? 1 + pick % 3 : pick == 9 ? 0u : pick == 10 ? 4u : 0x7FFFFFFFu;
      }
      if (!e.empty() && rng() % 8 == 0) e.back().firstCopy = SIZE_MAX - rng() % 2;
      if (!checkOne(count, e)) break;  // the first wrong answer is enough to read
    }
  }
}

namespace {

constexpr ex22::Extent kVolume = {37, 11, 5};
constexpr size_t kVolumeBytes = 37 * 11 * 5;

// The bytes of box at `at` of a packed volume, packed.
std::vector<unsigned char> boxOf(const std::vector<unsigned char>& volume, ex22::Offset at, ex22::Extent box) {
  std::vector<unsigned char> out;
  for (size_t z = 0; z < box.depth; ++z)
    for (size_t y = 0; y < box.height; ++y)
      for (size_t x = 0; x < box.width; ++x)
        out.push_back(volume[((at.z + z) * kVolume.height + at.y + y) * kVolume.width + at.x + x]);
  return out;
}

}  // namespace

EXERCISE("volume-box", "A box out of a volume with one 3D batch",
         "one wb::memcpy3DBatchAsync of one pointer-to-pointer operation: the source at the box's first byte with "
         "rowLength = the volume's width and layerHeight = its height, the destination packed (0, 0); check bounds "
         "without sums that wrap") {
  TEST_CASE("R1 R2: boxes inside a volume in device memory and in pinned memory: every byte, nothing past the box, one call") {
    Lab lab;
    Stream s;
    const std::vector<unsigned char> volume = bytePattern(8, kVolumeBytes);
    DeviceBuffer onDevice(kVolumeBytes);
    upload(onDevice.get(), volume);
    Pinned onHost(kVolumeBytes);
    std::memcpy(onHost.get(), volume.data(), kVolumeBytes);
    constexpr size_t kGuard = 64;
    DeviceBuffer packed(kVolumeBytes + kGuard);
    const struct {
      ex22::Offset at;
      ex22::Extent box;
    } boxes[] = {{{3, 2, 1}, {17, 6, 3}}, {{0, 0, 0}, {37, 11, 5}}, {{36, 10, 4}, {1, 1, 1}}, {{0, 4, 2}, {37, 3, 2}},
                 {{20, 0, 0}, {1, 11, 5}}, {{5, 1, 3}, {30, 9, 1}}, {{0, 0, 4}, {37, 11, 1}}};
    for (CUdeviceptr volumeAt : {onDevice.get(), onHost.addr()}) {
      for (const auto& b : boxes) {
        INFO((volumeAt == onDevice.get() ? "device memory" : "pinned memory") << ", box at (" << b.at.x << ", "
             << b.at.y << ", " << b.at.z << ") of " << b.box.width << " x " << b.box.height << " x " << b.box.depth);
        wbt::setBytes(packed.get(), 0xEE, kVolumeBytes + kGuard);
        seen().reset();
        ex22::copyBox(volumeAt, kVolume, b.at, b.box, packed.get(), s.get());
        s.sync();
        const std::vector<unsigned char> want = boxOf(volume, b.at, b.box);
        const std::vector<unsigned char> got = download(packed.get(), kVolumeBytes + kGuard);
        CHECK(std::equal(want.begin(), want.end(), got.begin()));
        CHECK(std::all_of(got.begin() + static_cast<std::ptrdiff_t>(want.size()), got.end(),
                          [](unsigned char v) { return v == 0xEE; }));
        REQUIRE(seen().batches3D.size() == 1);
        const Seen3D& op = seen().batches3D[0];
        CHECK(op.numOps == 1);
        CHECK(op.order == kStream);
        CHECK(op.flags == 0);
        CHECK(op.stream == s.get());
      }
    }
  }

  TEST_CASE("R3: it returns while the stream is held: the copy only enqueued") {
    Lab lab;
    Stream s;
    DeviceBuffer volume(kVolumeBytes), packed(kVolumeBytes);
    bool returnedFirst = false;
    {
      wb::Gate gate(lab.k.gate, s.get(), 3.0);
      ex22::copyBox(volume.get(), kVolume, {1, 1, 1}, {8, 8, 2}, packed.get(), s.get());
      returnedFirst = gate.outcome() == wb::Gate::Waiting;
      gate.open();
      s.sync();
    }
    CHECK(returnedFirst);
  }

  TEST_CASE("R4: a box past an edge, by one byte or by a wrapping sum, or of no bytes starting past an edge, throws std::invalid_argument with no call") {
    Lab lab;
    Stream s;
    DeviceBuffer volume(kVolumeBytes), packed(kVolumeBytes);
    seen().refuse = true;  // a call that gets through is answered here: the driver never sees it
    const size_t M = SIZE_MAX;
    const struct {
      ex22::Offset at;
      ex22::Extent box;
    } outside[] = {{{21, 0, 0}, {17, 1, 1}}, {{0, 5, 0}, {1, 7, 1}},  {{0, 0, 3}, {1, 1, 3}},   {{37, 0, 0}, {1, 1, 1}},
                   {{0, 11, 0}, {1, 1, 1}},  {{0, 0, 5}, {1, 1, 1}},  {{0, 0, 0}, {38, 1, 1}},  {{M - 2, 0, 0}, {4, 1, 1}},
                   {{2, 0, 0}, {M - 1, 1, 1}}, {{0, M, 0}, {1, 2, 1}}, {{0, 0, 1}, {1, 1, M}},
                   // No bytes, but starting outside: refused as any box outside (the task: for any values).
                   {{38, 0, 0}, {0, 1, 1}},  {{0, 12, 0}, {1, 0, 1}}, {{0, 0, M}, {1, 1, 0}}};
    for (const auto& b : outside) {
      INFO("box at (" << b.at.x << ", " << b.at.y << ", " << b.at.z << ") of " << b.box.width << " x " << b.box.height
                      << " x " << b.box.depth);
      bool invalid = false;
      try {
        ex22::copyBox(volume.get(), kVolume, b.at, b.box, packed.get(), s.get());
      } catch (const std::invalid_argument&) {
        invalid = true;
      } catch (const wb::NotDone&) {
        throw;
      } catch (const std::exception&) {
      }
      CHECK(invalid);
    }
    CHECK(seen().batches3D.empty());
  }

  TEST_CASE("R5: a box inside with a width, height or depth of 0: no call, nothing written, no error") {
    Lab lab;
    Stream s;
    DeviceBuffer volume(kVolumeBytes), packed(64);
    wbt::setBytes(packed.get(), 0xEE, 64);
    for (const ex22::Extent& zero : {ex22::Extent{0, 3, 3}, ex22::Extent{3, 0, 3}, ex22::Extent{3, 3, 0}})
      ex22::copyBox(volume.get(), kVolume, {1, 1, 1}, zero, packed.get(), s.get());
    s.sync();
    CHECK(seen().batches3D.empty());
    const std::vector<unsigned char> got = download(packed.get(), 64);
    CHECK(std::all_of(got.begin(), got.end(), [](unsigned char v) { return v == 0xEE; }));
  }

  TEST_CASE("R6: a refused call throws") {
    Lab lab;
    Stream s;
    DeviceBuffer volume(kVolumeBytes), packed(kVolumeBytes);
    wbx::FailCall fail("cuMemcpy3DBatchAsync", CUDA_ERROR_INVALID_VALUE);
    CHECK(throws([&] { ex22::copyBox(volume.get(), kVolume, {0, 0, 0}, {4, 4, 4}, packed.get(), s.get()); }));
    CHECK(fail.fired());
  }
}

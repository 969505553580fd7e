// Lesson 22: batched copies: many copies, one call.
//
// What you learn: cuMemcpyBatchAsync enqueues many pointer-to-pointer copies with one call, and
// cuMemcpy3DBatchAsync many 3D copies between pointers and CUDA arrays. The batch runs in stream
// order as a whole, its copies in no order among themselves. CUDA 12.8 introduced both with a
// failIdx argument that 13.0 dropped (common/compat.hpp bridges the two), and the driver keeps both
// entry points. Each copy carries attributes: the source access order (STREAM, DURING_API_CALL,
// ANY) says when the driver may read the source, location hints say where an operand without a
// fixed place lives, and a flag asks for overlap with compute. One batch moves device, pinned and
// pageable memory alike; a pageable source read DURING_API_CALL may be overwritten as soon as the
// call returns. The legacy NULL stream is refused, a capturing stream too (on driver 580), and so is
// every batch that breaks a documented rule. Then the figure: many small scattered copies as one
// batch against a loop of cuMemcpyAsync, in the same run, with the PCIe link's limit beside them.
//
// APIs: cuMemcpyBatchAsync, cuMemcpy3DBatchAsync, cuGetProcAddress, cuStreamBeginCapture,
//       cuStreamIsCapturing, cuStreamEndCapture, cuArray3DCreate, cuArrayDestroy, cuMemcpyAsync,
//       cuMemAllocHost, cuDeviceGetAttribute, cuDeviceGetPCIBusId (and NVML's PCIe link, through
//       common/nvml.hpp)
// Run:  ctest -R lesson22   (or build/lessons/lesson22-batched-copies [--csv lesson22-figure.csv])
#include "figure.hpp"
#include "gate.hpp"
#include "needs.hpp"
#include "nvml.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

const char* const kTitles[] = {
    "Two signatures, one call",
    "One batch over device, pinned and pageable memory",
    "When the source is read",
    "The streams a batch takes",
    "Malformed batches",
    "cuMemcpy3DBatchAsync: pitched boxes and CUDA arrays",
    "Many small copies: one batch against a loop",
};

#if CUDA_VERSION >= 12080

using Kernels = wb::StreamKernels;  // the gate kernel holds a stream (common/gate.hpp)

// Bytes that differ from seed to seed and from place to place, so a copy that read the wrong place
// or the wrong amount shows.
std::vector<unsigned char> pattern(uint32_t seed, size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed * 0x9E3779B9u;
    x ^= x >> 15, x *= 0x85EBCA6Bu, x ^= x >> 13;
    v[i] = static_cast<unsigned char>(x);
  }
  return v;
}

std::vector<unsigned char> download(CUdeviceptr p, size_t n) {
  std::vector<unsigned char> out(n);
  CU_CHECK(cuMemcpyDtoH(out.data(), p, n));
  return out;
}

CUdeviceptr addr(const void* host) { return reinterpret_cast<CUdeviceptr>(host); }

CUstream newStream(unsigned flags = CU_STREAM_NON_BLOCKING) {
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, flags));
  return s;
}

CUmemcpyAttributes attributes(CUmemcpySrcAccessOrder order, unsigned flags = 0) {
  CUmemcpyAttributes a{};  // zeroed: no location hints
  a.srcAccessOrder = order;
  a.flags = flags;
  return a;
}

// One copy of n bytes from src to dst in stream s, with one attribute: what the later steps try.
CUresult copyOne(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s,
                 CUmemcpySrcAccessOrder order = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM) {
  CUmemcpyAttributes a = attributes(order);
  size_t first = 0;
  return wb::memcpyBatchAsync(&dst, &src, &n, 1, &a, &first, 1, s);
}

//! [signatures]
// The name cuMemcpyBatchAsync is one signature or the other, chosen by the header this program was
// built with (common/compat.hpp bridges them). The driver keeps both: cuGetProcAddress finds each
// by the CUDA version whose signature the caller expects (lesson 12).
void signatures(int driver) {
  std::printf("built with CUDA %d.%d: the call is %s\n", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10,
              CUDA_VERSION >= 13000 ? "cuMemcpyBatchAsync_v2 (no failIdx)" : "cuMemcpyBatchAsync (failIdx)");
  void* asOf128 = nullptr;
  void* asOf130 = nullptr;
  const auto find = [](int version, void** fn) {
    return cuGetProcAddress("cuMemcpyBatchAsync", fn, version, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  };
  const CUresult rc128 = find(12080, &asOf128), rc130 = find(13000, &asOf130);
  const char* other = !asOf130 ? "nothing" : asOf130 == asOf128 ? "THE SAME FUNCTION" : "another function";
  std::printf("driver %d.%d, cuGetProcAddress(\"cuMemcpyBatchAsync\"):\n", driver / 1000, driver % 1000 / 10);
  std::printf("  for 12080: %s, %s\n", wb::errorName(rc128).c_str(),
              asOf128 ? "the 12.8 signature" : "nothing");
  std::printf("  for 13000: %s, %s\n", wb::errorName(rc130).c_str(), other);
  if (driver >= 13000)
    wb::expect(asOf128 && asOf130 && asOf128 != asOf130, "a 13.0 driver keeping both entry points",
               asOf128 && asOf130 ? "one function for both" : "not both found");
}
//! [signatures]

struct Copy {
  const char* what;
  CUdeviceptr dst, src;
  size_t bytes;
  const unsigned char* sent;  // what the source held
  const unsigned char* hostDst;  // the destination, when it is host memory (else read back)
};

// Whether every byte of a copy arrived.
bool arrived(const Copy& c) {
  if (c.hostDst) return std::memcmp(c.hostDst, c.sent, c.bytes) == 0;
  return std::memcmp(download(c.dst, c.bytes).data(), c.sent, c.bytes) == 0;
}

//! [mixed]
// Five copies, one call. Every pointer is an address of unified addressing (lesson 05): device
// memory, pinned memory or pageable memory, and the driver finds out which. attrs[0] applies to
// copies 0 to 3, attrs[1] from copy 4 on: attrsIdxs holds the first copy of each.
void submitMixed(const std::vector<Copy>& copies, CUstream s) {
  std::vector<CUdeviceptr> dsts, srcs;
  std::vector<size_t> sizes;
  for (const Copy& c : copies) dsts.push_back(c.dst), srcs.push_back(c.src), sizes.push_back(c.bytes);
  CUmemcpyAttributes attrs[2] = {attributes(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
                                 attributes(CU_MEMCPY_SRC_ACCESS_ORDER_ANY)};
  attrs[0].flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;  // a hint the driver may ignore
  attrs[1].srcLocHint.type = CU_MEM_LOCATION_TYPE_HOST;          // copy 4 reads malloc'd memory
  size_t attrsIdxs[2] = {0, 4};
  CU_CHECK(wb::memcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), copies.size(), attrs, attrsIdxs, 2,
                                s));
  CU_CHECK(cuStreamSynchronize(s));  // the batch as a whole, in stream order
}
//! [mixed]

void mixedBatch(CUdevice dev, CUstream s) {
  const std::vector<unsigned char> a = pattern(1, 2u << 20), b = pattern(2, 64u << 10), c = pattern(3, (256u << 10) + 1);
  CUdeviceptr device = 0;  // four 2 MiB slots: [0] a source, [1..3] destinations
  CU_CHECK(cuMemAlloc(&device, 8u << 20));
  CU_CHECK(cuMemcpyHtoD(device, a.data(), a.size()));
  CU_CHECK(cuMemsetD8(device + (2u << 20), 0, 6u << 20));
  CU_CHECK(cuCtxSynchronize());  // both ran in the legacy stream, which s (non-blocking) does not wait for
  unsigned char* pinned = nullptr;  // [0, 64 KiB) a source, from 1 MiB a destination
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&pinned), 2u << 20));
  std::memcpy(pinned, b.data(), b.size());
  std::memset(pinned + (1u << 20), 0, 1u << 20);
  std::vector<unsigned char> pageableDst(12345, 0);
  const std::vector<Copy> copies = {
      {"pinned   -> device", device + (2u << 20), addr(pinned), b.size(), b.data(), nullptr},
      {"device   -> device", device + (4u << 20), device, (1u << 20) + 3, a.data(), nullptr},
      {"device   -> pinned", addr(pinned + (1u << 20)), device, 4099, a.data(), pinned + (1u << 20)},
      {"device   -> pageable", addr(pageableDst.data()), device, pageableDst.size(), a.data(), pageableDst.data()},
      {"pageable -> device", device + (6u << 20), addr(c.data()), c.size(), c.data(), nullptr},
  };
  submitMixed(copies, s);
  bool all = true;
  for (size_t i = 0; i < copies.size(); ++i) {
    const bool ok = arrived(copies[i]);
    all = all && ok;
    std::printf("copy %zu: %-20s %10s, attrs[%d] %-6s %s\n", i, copies[i].what, wb::bytes(copies[i].bytes).c_str(),
                i < 4 ? 0 : 1, i < 4 ? "STREAM" : "ANY", ok ? "every byte as sent" : "WRONG BYTES");
  }
  wb::expect(all, "every copy of the mixed batch arriving byte for byte", "wrong bytes arrived");
  int managed = 0, pageable = 0;
  CU_CHECK(cuDeviceGetAttribute(&managed, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  CU_CHECK(cuDeviceGetAttribute(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev));
  std::printf("location hints apply to managed memory here: %s; to pageable memory: %s (PAGEABLE_MEMORY_ACCESS %d)\n",
              managed ? "yes" : "no", pageable ? "yes" : "no, ignored", pageable);
  CU_CHECK(cuMemFreeHost(pinned));
  CU_CHECK(cuMemFree(device));
}

//! [access-order]
// One copy of n bytes behind a closed gate. The source holds 1s when the call is made and 2s the
// moment it returns; what the device gets shows when the driver read it. Whether the copy was still
// pending when the call returned says whether the call waited for the stream.
unsigned char readWhen(const Kernels& k, CUstream s, CUmemcpySrcAccessOrder order, unsigned char* src,
                       size_t n, CUdeviceptr dst, bool& returnedFirst) {
  std::memset(src, 1, n);
  CU_CHECK(cuMemsetD8Async(dst, 0, n, s));
  {
    wb::Gate gate(k.gate, s, 3.0);  // gives up after 3 s, should the call wait for the stream
    CU_CHECK(copyOne(dst, addr(src), n, s, order));
    std::memset(src, 2, n);  // the call has returned
    returnedFirst = gate.outcome() == wb::Gate::Waiting && cuStreamQuery(s) == CUDA_ERROR_NOT_READY;
    gate.open();
    CU_CHECK(cuStreamSynchronize(s));
  }
  return download(dst, 1)[0];
}
//! [access-order]

void accessOrder(const Kernels& k, CUstream s) {
  constexpr size_t n = 64u << 10;
  CUdeviceptr dst = 0;
  CU_CHECK(cuMemAlloc(&dst, n));
  //! [access-order-2]
  std::vector<unsigned char> pageable(n);  // a buffer of the caller's, like a stack variable
  bool returnedFirst = false;
  const unsigned char during =
      readWhen(k, s, CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL, pageable.data(), n, dst, returnedFirst);
  std::printf("DURING_API_CALL, pageable source: the call returned %s; the device got %d: %s\n",
              returnedFirst ? "with the copy pending" : "AFTER THE STREAM RAN", during,
              during == 1 ? "read during the call" : "READ LATER");
  wb::expect(during == 1 && returnedFirst, "a pageable source read during the call, the copy left pending",
             during == 1 ? "the call waited for the stream" : "the source was read after the call returned");
  unsigned char* pinned = nullptr;
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&pinned), n));
  const unsigned char inOrder =
      readWhen(k, s, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, pinned, n, dst, returnedFirst);
  std::printf("STREAM, pinned source:            the call returned %s; the device got %d: %s\n",
              returnedFirst ? "with the copy pending" : "AFTER THE STREAM RAN", inOrder,
              inOrder == 2 ? "read when the stream reached the copy" : "READ EARLY");
  wb::expect(inOrder == 2 && returnedFirst, "a pinned source read in stream order",
             "it was read before the gate opened");
  //! [access-order-2]
  CU_CHECK(cuMemFreeHost(pinned));
  CU_CHECK(cuMemFree(dst));
}

//! [streams]
// The same small copy in each kind of stream. The reference: hStream "Must not be legacy NULL
// stream"; CU_STREAM_LEGACY is that stream by another name (lesson 09).
void whichStreams(CUdeviceptr dst, const unsigned char* src, size_t n) {
  CUstream blocking = newStream(CU_STREAM_DEFAULT), nonBlocking = newStream();
  const struct {
    const char* name;
    CUstream s;
  } streams[] = {{"NULL (the legacy stream)", nullptr},        {"CU_STREAM_LEGACY", CU_STREAM_LEGACY},
                 {"CU_STREAM_PER_THREAD", CU_STREAM_PER_THREAD}, {"a created blocking stream", blocking},
                 {"a created non-blocking stream", nonBlocking}};
  CUresult rc[5];
  for (int i = 0; i < 5; ++i) {
    rc[i] = copyOne(dst, addr(src), n, streams[i].s);
    if (rc[i] == CUDA_SUCCESS) CU_CHECK(cuStreamSynchronize(streams[i].s));
    std::printf("  %-30s %s\n", streams[i].name, wb::errorName(rc[i]).c_str());
  }
  wb::expect(rc[0] != CUDA_SUCCESS && rc[1] != CUDA_SUCCESS && rc[3] == CUDA_SUCCESS && rc[4] == CUDA_SUCCESS,
             "the legacy stream refused under both names, created streams taken", "other answers");
  CU_CHECK(cuStreamDestroy(blocking));
  CU_CHECK(cuStreamDestroy(nonBlocking));
}
//! [streams]

//! [capture]
// The reference says nothing about capture. A batch put into a capturing stream:
void underCapture(CUdeviceptr dst, const unsigned char* src, size_t n, CUstream s) {
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  const CUresult rc = copyOne(dst, addr(src), n, s);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_CHECK(cuStreamIsCapturing(s, &status));
  CUgraph graph = nullptr;
  const CUresult ended = cuStreamEndCapture(s, &graph);
  size_t nodes = 0;
  if (graph) CU_CHECK(cuGraphGetNodes(graph, nullptr, &nodes));
  const bool active = status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
  std::printf("  during a capture: %s; the capture then %s; cuStreamEndCapture: %s, a graph of %zu nodes\n",
              wb::errorName(rc).c_str(), active ? "still active" : "INVALIDATED",
              wb::errorName(ended).c_str(), nodes);
  if (graph) CU_CHECK(cuGraphDestroy(graph));
  wb::expect(rc != CUDA_SUCCESS, "the batch refused during a capture", "it was captured");
}
//! [capture]

// A batch of four copies, which each case of step 5 breaks in one place.
struct Batch {
  std::vector<CUdeviceptr> dsts, srcs;
  std::vector<size_t> sizes;
  std::vector<CUmemcpyAttributes> attrs;
  std::vector<size_t> attrsIdxs;
  Batch(CUdeviceptr dst, const unsigned char* src) {
    for (size_t i = 0; i < 4; ++i) dsts.push_back(dst + i * 4096), srcs.push_back(addr(src + i * 4096));
    sizes.assign(4, 4096);
    attrs.assign(2, attributes(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM));
    attrsIdxs = {0, 2};  // attrs[0] for copies 0-1, attrs[1] for copies 2-3
  }
  CUresult submit(CUstream s) {
    return wb::memcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), dsts.size(), attrs.data(),
                                attrsIdxs.data(), attrs.size(), s);
  }
};

// What the reference says of a broken batch: it names the rule, and for one rule the code too.
enum class Says { Rule, InvalidValue, Nothing };

struct Broken {
  const char* rule;
  Says says;
  void (*breakIt)(Batch&);
};

//! [malformed]
// Each case breaks one rule the reference states, or tries what it does not mention.
const Broken kBroken[] = {
    {"attrsIdxs[0] is 1, not 0", Says::Rule, [](Batch& b) { b.attrsIdxs = {1, 2}; }},
    {"attrsIdxs {0, 2, 2}: not increasing", Says::Rule, [](Batch& b) {
       b.attrs.push_back(b.attrs[0]);
       b.attrsIdxs = {0, 2, 2};
     }},
    {"attrsIdxs {0, 4}: the last one is count", Says::Rule, [](Batch& b) { b.attrsIdxs = {0, 4}; }},
    {"numAttrs 0: copies without attributes", Says::Rule, [](Batch& b) { b.attrs = {}, b.attrsIdxs = {}; }},
    {"attrs[1].srcAccessOrder 0 (INVALID)", Says::InvalidValue, [](Batch& b) { b.attrs[1] = {}; }},
    {"attrs[1].srcAccessOrder 7 (no such order)", Says::InvalidValue,
     [](Batch& b) { b.attrs[1].srcAccessOrder = static_cast<CUmemcpySrcAccessOrder>(7); }},
    {"copy 3 of 0 bytes", Says::Nothing, [](Batch& b) { b.sizes[3] = 0; }},
    {"count 0 (and numAttrs 0)", Says::Nothing, [](Batch& b) {
       b.dsts.clear(), b.srcs.clear(), b.sizes.clear();
       b.attrs.clear(), b.attrsIdxs.clear();
     }},
};
//! [malformed]

void malformed(CUdeviceptr dst, const unsigned char* src, CUstream s) {
  bool refused = true;
  for (const Broken& b : kBroken) {
    Batch batch(dst, src);
    b.breakIt(batch);
    CU_CHECK(cuMemsetD8Async(dst, 0xAB, 4 * 4096, s));  // a seed that any copy would overwrite
    const CUresult rc = batch.submit(s);
    CU_CHECK(cuStreamSynchronize(s));
    const std::vector<unsigned char> after = download(dst, 4 * 4096);
    const bool copied = std::any_of(after.begin(), after.end(), [](unsigned char v) { return v != 0xAB; });
    std::printf("  %-44s %s, %s%s\n", b.rule, wb::errorName(rc).c_str(), copied ? "copied" : "nothing copied",
                b.says == Says::Nothing ? " (the reference does not say)" : "");
    if (b.says != Says::Nothing) refused = refused && rc != CUDA_SUCCESS && !copied;
    if (b.says == Says::InvalidValue) refused = refused && rc == CUDA_ERROR_INVALID_VALUE;
  }
  wb::expect(refused, "every batch that breaks a stated rule refused, nothing copied, an invalid srcAccessOrder "
             "with CUDA_ERROR_INVALID_VALUE", "one was accepted, copied or refused with another code");
}

//! [fail-index]
// The 12.8 signature, found by cuGetProcAddress, with its failIdx: where did the batch fail?
using BatchAsOf12080 = CUresult(CUDAAPI*)(CUdeviceptr*, CUdeviceptr*, size_t*, size_t, CUmemcpyAttributes*,
                                          size_t*, size_t, size_t*, CUstream);

void failIndex(CUdeviceptr dst, const unsigned char* src, CUstream s) {
  void* found = nullptr;
  cuGetProcAddress("cuMemcpyBatchAsync", &found, 12080, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  if (!found) return void(std::printf("  this driver has no cuMemcpyBatchAsync of 12.8\n"));
  const auto asOf12080 = reinterpret_cast<BatchAsOf12080>(found);
  for (int which : {4, 0}) {  // a zeroed srcAccessOrder in attrs[1]; attrsIdxs[0] of 1
    Batch b(dst, src);
    kBroken[which].breakIt(b);
    size_t failIdx = 12345;  // not an index of this batch: shows whether the driver wrote it
    const CUresult rc = asOf12080(b.dsts.data(), b.srcs.data(), b.sizes.data(), b.dsts.size(), b.attrs.data(),
                                  b.attrsIdxs.data(), b.attrs.size(), &failIdx, s);
    const std::string where = failIdx == SIZE_MAX ? "SIZE_MAX (no single copy)" : std::to_string(failIdx);
    std::printf("  12.8's entry point, %-38s %s, failIdx %s\n", kBroken[which].rule,
                wb::errorName(rc).c_str(), where.c_str());
  }
}
//! [fail-index]

CUmemcpy3DOperand pointerOperand(CUdeviceptr p, size_t rowLength, size_t layerHeight) {
  CUmemcpy3DOperand o{};
  o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  o.op.ptr.ptr = p;
  o.op.ptr.rowLength = rowLength;      // elements (bytes here) from one row to the next; 0: packed
  o.op.ptr.layerHeight = layerHeight;  // rows from one layer to the next; 0: packed
  return o;
}

CUmemcpy3DOperand arrayOperand(CUarray array) {
  CUmemcpy3DOperand o{};
  o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
  o.op.array.array = array;  // offset {0, 0, 0}
  return o;
}

CUDA_MEMCPY3D_BATCH_OP op3D(CUmemcpy3DOperand src, CUmemcpy3DOperand dst, CUextent3D extent) {
  CUDA_MEMCPY3D_BATCH_OP op{};
  op.src = src;
  op.dst = dst;
  op.extent = extent;
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  return op;
}

constexpr size_t kW = 64, kH = 16, kD = 8;                   // the volume, in bytes
constexpr size_t kX = 5, kY = 3, kZ = 2, kBw = 20, kBh = 7, kBd = 4;  // the box taken out of it

//! [batch-3d]
// A box of a volume in pinned memory, copied packed into device memory and into a CUDA array by one
// batch (both read the same source: no copy depends on another), then the array back by a second.
bool boxes3D(const unsigned char* volume, CUdeviceptr packed, CUarray array, unsigned char* back,
             CUstream s) {
  const CUdeviceptr corner = addr(volume + (kZ * kH + kY) * kW + kX);
  const CUextent3D box = {kBw, kBh, kBd};
  CUDA_MEMCPY3D_BATCH_OP first[2] = {op3D(pointerOperand(corner, kW, kH), pointerOperand(packed, 0, 0), box),
                                     op3D(pointerOperand(corner, kW, kH), arrayOperand(array), box)};
  CU_CHECK(wb::memcpy3DBatchAsync(2, first, 0, s));
  CUDA_MEMCPY3D_BATCH_OP second = op3D(arrayOperand(array), pointerOperand(addr(back), 0, 0), box);
  CU_CHECK(wb::memcpy3DBatchAsync(1, &second, 0, s));  // after the first batch, in stream order
  CU_CHECK(cuStreamSynchronize(s));
  std::vector<unsigned char> expected;
  for (size_t z = 0; z < kBd; ++z)
    for (size_t y = 0; y < kBh; ++y)
      for (size_t x = 0; x < kBw; ++x) expected.push_back(volume[((kZ + z) * kH + kY + y) * kW + kX + x]);
  const bool viaPointer = download(packed, expected.size()) == expected;
  const bool viaArray = std::memcmp(back, expected.data(), expected.size()) == 0;
  std::printf("  box %zux%zux%zu at (%zu,%zu,%zu): packed in device memory %s; through the CUDA array %s\n",
              kBw, kBh, kBd, kX, kY, kZ, viaPointer ? "every byte" : "WRONG",
              viaArray ? "every byte" : "WRONG");
  return viaPointer && viaArray;
}
//! [batch-3d]

void batch3D(CUstream s) {
  unsigned char* pinned = nullptr;  // the volume, then the box read back from the array
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&pinned), kW * kH * kD + kBw * kBh * kBd));
  const std::vector<unsigned char> v = pattern(7, kW * kH * kD);
  std::memcpy(pinned, v.data(), v.size());
  unsigned char* back = pinned + v.size();
  std::memset(back, 0, kBw * kBh * kBd);
  CUdeviceptr packed = 0;
  CU_CHECK(cuMemAlloc(&packed, kBw * kBh * kBd));
  CUDA_ARRAY3D_DESCRIPTOR desc{};
  desc.Width = kBw, desc.Height = kBh, desc.Depth = kBd;
  desc.Format = CU_AD_FORMAT_UNSIGNED_INT8;  // one byte per element, like the pointers' elements
  desc.NumChannels = 1;
  CUarray array = nullptr;
  CU_CHECK(cuArray3DCreate(&array, &desc));
  wb::expect(boxes3D(pinned, packed, array, back, s), "the box through both paths, byte for byte", "wrong bytes");
  //! [refusals-3d]
  // Each rule of the reference's broken once: extents "must not be 0", a rowLength is zero or at
  // least the width, flags "must be zero now", srcAccessOrder valid, and not the NULL stream.
  const CUmemcpy3DOperand from = pointerOperand(addr(pinned), kW, kH), to = pointerOperand(packed, 0, 0);
  const CUextent3D box = {kBw, kBh, kBd};
  CUDA_MEMCPY3D_BATCH_OP fine = op3D(from, to, box), zeroWidth = op3D(from, to, {0, kBh, kBd}),
                         shortRows = op3D(pointerOperand(addr(pinned), 8, kH), to, box), noOrder = fine;
  noOrder.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID;
  const CUresult rcs[5] = {
      wb::memcpy3DBatchAsync(1, &zeroWidth, 0, s), wb::memcpy3DBatchAsync(1, &shortRows, 0, s),
      wb::memcpy3DBatchAsync(1, &fine, 1, s),      wb::memcpy3DBatchAsync(1, &noOrder, 0, s),
      wb::memcpy3DBatchAsync(1, &fine, 0, nullptr)};
  //! [refusals-3d]
  const char* what[5] = {"extent.width 0", "src rowLength 8 < width 20", "flags 1", "srcAccessOrder 0 (INVALID)",
                         "the NULL stream"};
  for (int i = 0; i < 5; ++i) std::printf("  %-30s %s\n", what[i], wb::errorName(rcs[i]).c_str());
  wb::expect(std::none_of(rcs, rcs + 5, [](CUresult rc) { return rc == CUDA_SUCCESS; }) &&
                 rcs[3] == CUDA_ERROR_INVALID_VALUE,
             "every broken rule refused (a zeroed srcAccessOrder with INVALID_VALUE)", "one was accepted");
  CU_CHECK(cuStreamSynchronize(s));
  CU_CHECK(cuArrayDestroy(array));
  CU_CHECK(cuMemFree(packed));
  CU_CHECK(cuMemFreeHost(pinned));
}

struct Rate {
  size_t bytes;
  double batchGBs, loopGBs;          // from the first call until the stream is synchronised
  double batchCallUs, loopCallsUs;   // the host's time until the last call returned
};

struct Timing {
  double seconds, callSeconds;  // until synchronised; until the calls returned
};

constexpr size_t kCopies = 256;       // copies per batch
constexpr size_t kSlot = 1u << 20;    // one block per 1 MiB slot on each side: scattered

//! [cost]
// kCopies blocks of `bytes`, each at the start of its own 1 MiB slot, into device slots in another
// order (slot i * 97 mod 256): one batch, or a loop of cuMemcpyAsync. Timed on the host from the
// first call until the calls returned (what the host pays to enqueue) and until the stream is
// synchronised (what a request waits).
Timing timed(bool batch, CUdeviceptr device, unsigned char* pinned, size_t bytes, CUstream s) {
  std::vector<CUdeviceptr> dsts(kCopies), srcs(kCopies);
  std::vector<size_t> sizes(kCopies, bytes);
  for (size_t i = 0; i < kCopies; ++i)
    dsts[i] = device + (i * 97 % kCopies) * kSlot, srcs[i] = addr(pinned + i * kSlot);
  CUmemcpyAttributes a = attributes(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
  size_t first = 0;
  const wb::Stopwatch clock;
  if (batch)
    CU_CHECK(wb::memcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), kCopies, &a, &first, 1, s));
  else
    for (size_t i = 0; i < kCopies; ++i) CU_CHECK(cuMemcpyAsync(dsts[i], srcs[i], bytes, s));
  const double called = clock.ms();
  CU_CHECK(cuStreamSynchronize(s));
  return {clock.ms() / 1000.0, called / 1000.0};
}
//! [cost]

// The median of 7 after 2 warm-ups: GB/s until synchronised, and microseconds until the calls returned.
std::pair<double, double> medians(bool batch, CUdeviceptr device, unsigned char* pinned, size_t bytes,
                                  CUstream s) {
  constexpr int kWarmup = 2, kRepeats = 7;
  std::vector<double> gbs, us;
  for (int i = 0; i < kWarmup + kRepeats; ++i) {
    const Timing t = timed(batch, device, pinned, bytes, s);
    if (i < kWarmup) continue;
    gbs.push_back(static_cast<double>(kCopies * bytes) / t.seconds / 1e9);
    us.push_back(t.callSeconds * 1e6);
  }
  std::sort(gbs.begin(), gbs.end());
  std::sort(us.begin(), us.end());
  return {gbs[gbs.size() / 2], us[us.size() / 2]};
}

std::optional<wb::nvml::PcieLink> hostLink(CUdevice dev) {
  char busId[32] = {0};
  CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, dev));
  std::string why;
  auto link = wb::nvml::pcieLink(busId, why);
  if (link)
    std::printf("the link, as NVML reports it: %s\n", link->describe().c_str());
  else
    std::printf("NVML did not say what links this device to the host (%s): no limit below\n", why.c_str());
  return link;
}

//! [cost-table]
std::vector<Rate> batchAgainstLoop(CUstream s) {
  CUdeviceptr device = 0;
  unsigned char* pinned = nullptr;
  CU_CHECK(cuMemAlloc(&device, kCopies * kSlot));
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&pinned), kCopies * kSlot));
  std::memset(pinned, 5, kCopies * kSlot);
  std::vector<Rate> rates;
  std::printf("%zu copies host to device (pinned), median of 7: GB/s from the first call to synchronised,\n"
              "and the host's microseconds until the calls returned\n", kCopies);
  std::printf("  %10s  %10s %10s  %12s %12s\n", "each", "batch GB/s", "loop GB/s", "batch call us",
              "loop calls us");
  for (size_t bytes = 4u << 10; bytes <= kSlot; bytes *= 4) {
    const auto [batchGBs, batchUs] = medians(true, device, pinned, bytes, s);
    const auto [loopGBs, loopUs] = medians(false, device, pinned, bytes, s);
    const Rate r{bytes, batchGBs, loopGBs, batchUs, loopUs};
    std::printf("  %10s  %10.2f %10.2f  %12.1f %12.1f\n", wb::bytes(bytes).c_str(), r.batchGBs, r.loopGBs,
                r.batchCallUs, r.loopCallsUs);
    rates.push_back(r);
  }
  CU_CHECK(cuMemFreeHost(pinned));
  CU_CHECK(cuMemFree(device));
  return rates;
}
//! [cost-table]

//! [cost-claims]
// Which way is faster at a few KiB depends on the machine (two H100/H200 hosts disagreed): the run
// says what it measured, and asserts only what no machine can break, the link's ceiling.
void explainCost(const std::vector<Rate>& rates, const std::optional<wb::nvml::PcieLink>& link) {
  const Rate &small = rates.front(), &large = rates.back();
  std::printf("at %s each one batch moved %.2fx what the loop did; at %s, %.2fx\n",
              wb::bytes(small.bytes).c_str(), small.batchGBs / small.loopGBs, wb::bytes(large.bytes).c_str(),
              large.batchGBs / large.loopGBs);
  const double loopUs = kCopies * small.bytes / (small.loopGBs * 1e3);  // the loop's whole time
  std::printf("at %s the loop's calls took %.1f of its %.1f us (%.0f%%); the batch's one call %.1f us\n",
              wb::bytes(small.bytes).c_str(), small.loopCallsUs, loopUs, 100 * small.loopCallsUs / loopUs,
              small.batchCallUs);
  std::printf("  so most of the loop's time went %s\n",
              small.loopCallsUs < loopUs / 2 ? "to the copies after its calls returned, not to the calls"
                                             : "to its calls themselves");
  if (!link || link->bytesPerSecond() <= 0) return;
  const double limit = link->bytesPerSecond() / 1e9;
  std::printf("at %s each: the batch %.2f and the loop %.2f of the link's %.1f GB/s\n",
              wb::bytes(large.bytes).c_str(), large.batchGBs / limit, large.loopGBs / limit, limit);
  wb::expect(large.batchGBs <= limit * 1.01 && large.loopGBs <= limit * 1.01, "no copy faster than the link",
             "a rate above the link NVML reported (misread link, or wrong timing)");
}
//! [cost-claims]

wb::FigureTable tableOf(const std::vector<Rate>& rates, const std::optional<wb::nvml::PcieLink>& link) {
  wb::FigureTable table("bytes,way,GB/s");
  for (const Rate& r : rates) {
    table.row("%zu,one cuMemcpyBatchAsync,%.3f", r.bytes, r.batchGBs);
    table.row("%zu,cuMemcpyAsync loop,%.3f", r.bytes, r.loopGBs);
  }
  // docs/figure_plot.cpp draws a row whose x is 0 and whose name begins "limit: " as a line across.
  if (!rates.empty() && link && link->bytesPerSecond() > 0)
    table.row("0,limit: PCIe Gen%u x%u,%.3f", link->generation, link->width, link->bytesPerSecond() / 1e9);
  return table;
}

// Every step, in order; returns the figure's table.
wb::FigureTable lesson(CUdevice dev, int driver, const Kernels& k) {
  const bool sanitized = wb::underSanitizer();
  CUstream s = newStream();
  constexpr size_t n = 4 * 4096;
  CUdeviceptr dst = 0;
  CU_CHECK(cuMemAlloc(&dst, n));
  const std::vector<unsigned char> src = pattern(9, n);
  wb::step(1, kTitles[0]);
  signatures(driver);
  wb::step(2, kTitles[1]);
  mixedBatch(dev, s);
  wb::step(3, kTitles[2]);
  accessOrder(k, s);
  wb::step(4, kTitles[3]);
  whichStreams(dst, src.data(), n);
  underCapture(dst, src.data(), n, s);
  wb::step(5, kTitles[4]);
  malformed(dst, src.data(), s);
  failIndex(dst, src.data(), s);
  wb::step(6, kTitles[5]);
  batch3D(s);
  wb::step(7, kTitles[6]);
  std::vector<Rate> rates;
  std::optional<wb::nvml::PcieLink> link;
  if (sanitized) {
    std::printf("left out under compute-sanitizer, which slows every call: times mean nothing there\n");
  } else {
    link = hostLink(dev);
    rates = batchAgainstLoop(s);
    explainCost(rates, link);
  }
  CU_CHECK(cuMemFree(dst));
  CU_CHECK(cuStreamDestroy(s));
  return tableOf(rates, link);
}

#endif  // CUDA_VERSION >= 12080

}  // namespace

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson22-figure.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "the gate kernel's launch would wait for the gate, so no copy of step 3 could be pending"},
    });
    // The image is checked before the driver starts: a damaged one stops the program in a moment.
    const std::string image = wb::verifiedImagePath("streams.fatbin");
    CU_CHECK(cuInit(0));
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    wb::FigureTable table("bytes,way,GB/s");
#if CUDA_VERSION >= 12080
    const bool runs = wb::meetsDriver(driver);  // lessons/needs.tsv: 12.8, which introduced the batch calls
#else
    const bool runs = false;
#endif
    if (runs) {
#if CUDA_VERSION >= 12080
      CUlibrary library = nullptr;
      CU_CHECK(cuLibraryLoadFromFile(&library, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      const Kernels k = Kernels::load(library);  // every kernel loaded before any gate closes
      table = lesson(dev, driver, k);
      CU_CHECK(cuLibraryUnload(library));
#endif
    } else {
      (void)image;
      // CUDA 12.8 introduced the batch calls: an older header has neither them nor their types, an
      // older driver does not have them. Every step says so instead.
      const std::string why = CUDA_VERSION < 12080 ? "this program was built with CUDA " + std::to_string(CUDA_VERSION) +
                                                         ", whose cuda.h has no cuMemcpyBatchAsync (CUDA 12.8 introduced it)"
                                                   : "the driver is " + std::to_string(driver) +
                                                         ", older than 12.8, which introduced cuMemcpyBatchAsync";
      for (int i = 0; i < 7; ++i) {
        wb::step(i + 1, kTitles[i]);
        std::printf("left out: %s\n", why.c_str());
      }
    }
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return table.save(paths.csv, 7);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

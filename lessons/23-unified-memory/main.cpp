// Lesson 23: unified memory: advise, prefetch, locations.
//
// What you learn: cuMemAllocManaged gives memory with one address for the host and every device,
// like lesson 08's __managed__ variable but of any size, at run time. Where its pages are is the
// driver's business: they move to the processor that touches them (on a device with concurrent
// managed access), and the device attributes say which kind of unified memory this machine has.
// cuMemAdvise tells the driver what you know (read mostly, a preferred location, who will access
// it); cuMemPrefetchAsync moves pages before they are needed, in stream order; cuMemRangeGetAttribute
// reads back what was advised and where the range was last sent. CUDA 13.0 changed advise and
// prefetch to take a CUmemLocation (a device, the host, a host NUMA node) and added batches that
// prefetch and discard several ranges in one call; common/compat.hpp builds one source with both.
// Then what it costs: a kernel streaming over managed memory whose pages are on the host, after a
// prefetch, and over device memory, against the device's memory bandwidth and the host link.
//
// Sizes stay modest (a few hundred MiB, at most an eighth of the free device memory): managed memory
// can be asked for beyond what the device holds, and the machines this course runs on warn that doing
// so can hang the GPU, not only the process.
//
// APIs: cuMemAllocManaged, cuMemAdvise, cuMemPrefetchAsync, cuMemPrefetchBatchAsync,
//       cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync, cuMemRangeGetAttribute,
//       cuMemRangeGetAttributes, cuLibraryGetManaged, cuPointerGetAttribute, cuDeviceGetAttribute,
//       cuMemGetInfo (and NVML's link query, through common/nvml.hpp)
// Run:  ctest -R lesson23   (or build/lessons/lesson23-unified-memory [--csv lesson23-figure.csv])
#include "figure.hpp"
#include "gate.hpp"
#include "nvml.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

constexpr size_t kBuffer = 64u << 20;  // steps 3 to 5 and 8: moving it takes milliseconds, not microseconds
constexpr size_t kPage = 4096;         // the host's page size here: the unit a host touch moves
constexpr unsigned kThreads = 256;

struct Lab {
  CUdevice dev = 0;
  unsigned blocks = 0;  // 8 blocks of 256 threads per SM: a grid that fills the device
  CUkernel fill = nullptr, add = nullptr, sum = nullptr;
  wb::StreamKernels gates;
  CUstream s = nullptr;
  CUdeviceptr total = 0;  // 8 bytes of device memory the sum kernel adds into
  bool concurrent = false, sanitized = false;
};

size_t freeMemory() {
  size_t free = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&free, &total));
  return free;
}

int attribute(CUdevice dev, CUdevice_attribute what) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, what, dev));
  return value;
}

CUdeviceptr allocManaged(size_t bytes) {
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL));
  return p;
}

unsigned* onHost(CUdeviceptr p) { return reinterpret_cast<unsigned*>(p); }

// The host writes word i = seed + i itself: the pages are the host's after this.
void hostFill(CUdeviceptr p, size_t bytes, unsigned seed) {
  unsigned* words = onHost(p);
  for (size_t i = 0; i < bytes / 4; ++i) words[i] = seed + static_cast<unsigned>(i);
}

// What um_sum gives over words seed, seed + 1, ... (each mod 2^32), computed on the host.
unsigned long long expectedSum(size_t words, unsigned seed) {
  const unsigned long long n = words, first = seed, toWrap = (1ull << 32) - first;
  unsigned long long total = n * first + n * (n - 1) / 2;
  if (n > toWrap) total -= (n - toWrap) << 32;  // each word past the wrap is 2^32 smaller
  return total;
}

void launch(const Lab& lab, CUkernel k, void** args, CUstream s) {
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(k), lab.blocks, 1, 1, kThreads, 1, 1, 0, s, args, nullptr));
}

// um_fill (word i = value + i) or um_add (every word + value) over bytes at p, in s.
void overWords(const Lab& lab, CUkernel k, CUdeviceptr p, size_t bytes, unsigned value, CUstream s) {
  unsigned long long n = bytes / 4;
  void* args[] = {&p, &n, &value};
  launch(lab, k, args, s);
}

// The milliseconds between events recorded in s before and after what work enqueues (lesson 09).
template <class Work>
float timedMs(CUstream s, Work&& work) {
  CUevent start = nullptr, end = nullptr;
  CU_CHECK(cuEventCreate(&start, 0));
  CU_CHECK(cuEventCreate(&end, 0));
  CU_CHECK(cuEventRecord(start, s));
  work();
  CU_CHECK(cuEventRecord(end, s));
  CU_CHECK(cuStreamSynchronize(s));
  float ms = 0;
  CU_CHECK(cuEventElapsedTime(&ms, start, end));
  CU_CHECK(cuEventDestroy(start));
  CU_CHECK(cuEventDestroy(end));
  return ms;
}

// One pass of um_sum over bytes at p in lab.s, timed; returns the sum it read.
unsigned long long sumPass(const Lab& lab, CUdeviceptr p, size_t bytes, float* ms = nullptr) {
  CU_CHECK(cuMemsetD32Async(lab.total, 0, 2, lab.s));
  unsigned long long n4 = bytes / 16;
  CUdeviceptr total = lab.total;
  void* args[] = {&p, &n4, &total};
  const float elapsed = timedMs(lab.s, [&] { launch(lab, lab.sum, args, lab.s); });
  if (ms) *ms = elapsed;
  unsigned long long value = 0;
  CU_CHECK(cuMemcpyDtoH(&value, lab.total, sizeof value));
  return value;
}

double gbps(size_t bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0; }

std::string freeChange(size_t before, size_t after) {
  if (after == before) return "unchanged";
  return wb::bytes(after < before ? before - after : after - before) + (after < before ? " lower" : " higher");
}

std::string nameOf(CUmemLocation where) {
  switch (static_cast<int>(where.type)) {
    case CU_MEM_LOCATION_TYPE_DEVICE: return "device " + std::to_string(where.id);
    case 2: return "the host";
    case 3: return "host NUMA node " + std::to_string(where.id);
    case 4: return "the calling thread's host NUMA node";
    default: return "INVALID (none, or not one for the whole range)";
  }
}

std::string legacyName(int ordinal) {
  if (ordinal == CU_DEVICE_CPU) return "CU_DEVICE_CPU";
  return ordinal == CU_DEVICE_INVALID ? "CU_DEVICE_INVALID" : "device " + std::to_string(ordinal);
}

//! [support]
// Which kind of unified memory this machine has, from the device's attributes (the programming guide,
// "Unified and System Memory", names the four kinds this prints).
struct Support {
  int managed, concurrent, pageable, hostPageTables, directHost, hostAtomics;
};

Support support(CUdevice dev) {
  Support s{attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY),
            attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS),
            attribute(dev, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS),
            attribute(dev, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES),
            attribute(dev, CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST),
            attribute(dev, CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED)};
  std::printf("MANAGED_MEMORY %d: cuMemAllocManaged %s\n", s.managed,
              s.managed ? "works" : "returns NOT_SUPPORTED");
  std::printf("CONCURRENT_MANAGED_ACCESS %d: %s\n", s.concurrent,
              s.concurrent ? "pages move on touch, the host may touch managed memory while kernels run"
                           : "a kernel launch takes all managed memory: no host access until synchronised");
  std::printf("PAGEABLE_MEMORY_ACCESS %d: kernels %s memory from malloc or new\n", s.pageable,
              s.pageable ? "may use" : "may not use");
  std::printf("PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES %d, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST %d, "
              "HOST_NATIVE_ATOMIC_SUPPORTED %d\n", s.hostPageTables, s.directHost, s.hostAtomics);
  const char* kind = !s.managed        ? "no managed memory"
                     : !s.concurrent    ? "limited unified memory support (as on Windows, WSL and Tegra)"
                     : s.hostPageTables ? "full unified memory, hardware coherent (the host's page tables)"
                     : s.pageable       ? "full unified memory, software coherent (Linux HMM)"
                                        : "full CUDA managed memory support; not for malloc'd memory";
  std::printf("This machine: %s.\n", kind);
  return s;
}
//! [support]

// Where the device may use memory from malloc, a kernel sums a std::vector's words directly.
void pageableAccess(const Lab& lab, const Support& s) {
  if (!s.pageable) {
    std::printf("(PAGEABLE_MEMORY_ACCESS 0: a kernel given a pointer from malloc would fault here, as lesson 10 "
                "shows)\n");
    return;
  }
  std::vector<unsigned> words(1u << 20);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 5 + static_cast<unsigned>(i);
  const unsigned long long got = sumPass(lab, reinterpret_cast<CUdeviceptr>(words.data()), words.size() * 4);
  std::printf("a kernel summed a std::vector of %s in place: %s\n", wb::bytes(words.size() * 4).c_str(),
              got == expectedSum(words.size(), 5) ? "the right sum" : "A WRONG SUM");
  wb::expect(got == expectedSum(words.size(), 5), "a kernel reading memory from new", "a wrong sum");
}

//! [alloc-managed]
// cuMemAllocManaged: one address that the host and every device use. The host writes through it
// like any pointer, a kernel adds 1 to every word, and the host reads the result once the stream is done.
void managedBuffer(const Lab& lab) {
  const size_t bytes = 1u << 20;
  const CUdeviceptr p = allocManaged(bytes);
  hostFill(p, bytes, 0);
  overWords(lab, lab.add, p, bytes, 1, lab.s);
  CU_CHECK(cuStreamSynchronize(lab.s));  // the host reads what the kernel wrote only after this
  size_t wrong = 0;
  for (size_t i = 0; i < bytes / 4; ++i) wrong += onHost(p)[i] != i + 1;
  std::printf("cuMemAllocManaged(%s): %s; the host wrote it, a kernel added 1, the host read back: "
              "%zu of %zu words wrong\n", wb::bytes(bytes).c_str(), wb::hex(p).c_str(), wrong, bytes / 4);
  wb::expect(wrong == 0, "one pointer for host and kernel", "wrong words");
  CU_CHECK(cuMemFree(p));  // managed memory is freed like any cuMemAlloc memory
}
//! [alloc-managed]

//! [managed-variable]
// Lesson 08's __managed__ variable is the same kind of memory: the pointer attribute says so for both,
// and not for cuMemAlloc memory. A kernel adds into the variable; the host reads it after the stream.
void managedVariable(const Lab& lab, CUlibrary library) {
  CUdeviceptr variable = 0, plain = 0, managed = allocManaged(1u << 20);
  size_t size = 0;
  CU_CHECK(cuLibraryGetManaged(&variable, &size, library, "managedTotal"));
  CU_CHECK(cuMemAlloc(&plain, 4096));
  const CUdeviceptr asked[3] = {managed, variable, plain};
  int is[3] = {};
  for (int i = 0; i < 3; ++i)
    CU_CHECK(cuPointerGetAttribute(&is[i], CU_POINTER_ATTRIBUTE_IS_MANAGED, asked[i]));
  std::printf("CU_POINTER_ATTRIBUTE_IS_MANAGED: cuMemAllocManaged %d, __managed__ managedTotal %d, "
              "cuMemAlloc %d\n", is[0], is[1], is[2]);
  wb::expect(is[0] == 1 && is[1] == 1 && is[2] == 0, "managed memory marked managed, not device memory",
             "others");
  *reinterpret_cast<unsigned long long*>(variable) = 0;  // the host writes the variable directly
  hostFill(managed, 1u << 20, 3);
  unsigned long long n4 = (1u << 20) / 16;
  void* args[] = {&managed, &n4, &variable};
  launch(lab, lab.sum, args, lab.s);
  CU_CHECK(cuStreamSynchronize(lab.s));
  const bool right = *reinterpret_cast<unsigned long long*>(variable) == expectedSum((1u << 20) / 4, 3);
  std::printf("um_sum added into managedTotal: the host reads %s\n", right ? "the right sum" : "A WRONG SUM");
  wb::expect(right, "a kernel's result read through the variable", "a wrong sum");
  CU_CHECK(cuMemFree(plain));
  CU_CHECK(cuMemFree(managed));
  //! [managed-variable]
  CUdeviceptr none = 0;
  const CUresult zero = cuMemAllocManaged(&none, 0, CU_MEM_ATTACH_GLOBAL);
  std::printf("cuMemAllocManaged of 0 bytes: %s\n", wb::errorName(zero).c_str());
  wb::expect(zero == CUDA_ERROR_INVALID_VALUE, "0 bytes refused with CUDA_ERROR_INVALID_VALUE", wb::errorName(zero));
}

//! [first-touch]
// 64 MiB of managed memory: allocated, written by the host, then read twice by a kernel. The device's
// free memory is read between, and both passes are timed.
void firstTouch(const Lab& lab) {
  const size_t before = freeMemory();
  const CUdeviceptr p = allocManaged(kBuffer);
  const size_t allocated = freeMemory();
  hostFill(p, kBuffer, 7);
  const size_t written = freeMemory();
  float first = 0, second = 0;
  const unsigned long long a = sumPass(lab, p, kBuffer, &first), b = sumPass(lab, p, kBuffer, &second);
  const size_t touched = freeMemory();
  unsigned long long pages = 0;
  for (size_t at = 0; at < kBuffer; at += kPage) pages += onHost(p)[at / 4];  // the host reads every page
  const size_t readBack = freeMemory();
  //! [first-touch]
  std::printf("device free memory: after cuMemAllocManaged %s, after the host wrote it %s, after the kernel "
              "passes %s, after the host read every page %s (each against the line before)\n",
              freeChange(before, allocated).c_str(), freeChange(allocated, written).c_str(),
              freeChange(written, touched).c_str(), freeChange(touched, readBack).c_str());
  const bool right = a == expectedSum(kBuffer / 4, 7) && b == a && pages != 0;
  std::printf("pass 1 (pages on the host): %.3f ms, %.1f GB/s; pass 2 (pages moved): %.3f ms, %.1f GB/s; sums %s\n",
              first, gbps(kBuffer, first), second, gbps(kBuffer, second), right ? "right" : "WRONG");
  wb::expect(right, "both passes reading what the host wrote", "a wrong sum");
  if (lab.sanitized)
    std::printf("(the times mean nothing under compute-sanitizer: not compared)\n");
  else  // the driver's migration policy, not a promise: printed against what driver 580 did
    std::printf("the second pass %s the first (driver 580: faster)\n",
                second < first ? "faster than" : "NOT faster than");
  CU_CHECK(cuMemFree(p));
}

//! [range-state]
// What a range's attributes say, for the whole range: advice and the last prefetch's destination,
// the old int answers (a device ordinal, CU_DEVICE_CPU, CU_DEVICE_INVALID) and, from 12.2, type and id.
struct RangeState {
  int readMostly = 0, preferred = 0, lastPrefetch = 0, accessedBy[2] = {0, 0};
  CUmemLocation preferredAt{}, lastPrefetchAt{};
};

RangeState rangeState(CUdeviceptr p, size_t bytes) {
  RangeState r;
  std::vector<void*> data = {&r.readMostly, &r.preferred, &r.lastPrefetch, r.accessedBy};
  std::vector<size_t> sizes = {4, 4, 4, sizeof r.accessedBy};
  std::vector<CUmem_range_attribute> what = {
      CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
      CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY};
#if CUDA_VERSION >= 12020
  data.insert(data.end(),
              {&r.preferredAt.type, &r.preferredAt.id, &r.lastPrefetchAt.type, &r.lastPrefetchAt.id});
  sizes.insert(sizes.end(), {sizeof(CUmemLocationType), 4, sizeof(CUmemLocationType), 4});
  what.insert(what.end(), {CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                           CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
                           CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                           CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID});
#endif
  CU_CHECK(cuMemRangeGetAttributes(data.data(), sizes.data(), what.data(), what.size(), p, bytes));
  return r;
}
//! [range-state]

void printState(const char* after, const RangeState& r) {
  std::printf("  %-44s read mostly %d, preferred %-17s (%s), accessed by %s\n", after, r.readMostly,
              legacyName(r.preferred).c_str(), nameOf(r.preferredAt).c_str(),
              r.accessedBy[0] == CU_DEVICE_INVALID ? "nobody" : legacyName(r.accessedBy[0]).c_str());
}

//! [advise]
// Each advice on an 8 MiB range, read back for the whole range. wb::memAdvise (common/compat.hpp) takes
// a CUmemLocation, as cuMemAdvise does from CUDA 13.0.
void advise(const Lab& lab) {
  const size_t bytes = 8u << 20;
  const CUdeviceptr p = allocManaged(bytes);
  // READ_MOSTLY and the UNSETs ignore their location (the reference); on driver 580 one of type
  // INVALID was refused all the same (CUDA_ERROR_INVALID_VALUE), so they get the device's.
  const CUmemLocation ignored = wb::deviceLocation(lab.dev);
  std::vector<std::pair<const char*, RangeState>> seen;
  seen.push_back({"fresh:", rangeState(p, bytes)});
  CU_CHECK(wb::memAdvise(p, bytes, CU_MEM_ADVISE_SET_READ_MOSTLY, ignored));
  seen.push_back({"SET_READ_MOSTLY:", rangeState(p, bytes)});
  CU_CHECK(wb::memAdvise(p, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, wb::deviceLocation(lab.dev)));
  seen.push_back({"SET_PREFERRED_LOCATION device 0:", rangeState(p, bytes)});
  CU_CHECK(wb::memAdvise(p, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, wb::hostLocation()));
  seen.push_back({"SET_PREFERRED_LOCATION the host:", rangeState(p, bytes)});
  CU_CHECK(wb::memAdvise(p, bytes / 2, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, wb::deviceLocation(lab.dev)));
  seen.push_back({"the same, first half to device 0:", rangeState(p, bytes)});
  CU_CHECK(wb::memAdvise(p, bytes, CU_MEM_ADVISE_SET_ACCESSED_BY, wb::deviceLocation(lab.dev)));
  seen.push_back({"SET_ACCESSED_BY device 0:", rangeState(p, bytes)});
  for (CUmem_advise undo : {CU_MEM_ADVISE_UNSET_READ_MOSTLY, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION})
    CU_CHECK(wb::memAdvise(p, bytes, undo, ignored));
  CU_CHECK(wb::memAdvise(p, bytes, CU_MEM_ADVISE_UNSET_ACCESSED_BY, wb::deviceLocation(lab.dev)));
  seen.push_back({"UNSET all three:", rangeState(p, bytes)});
  for (const auto& [after, state] : seen) printState(after, state);
  CU_CHECK(cuMemFree(p));
  //! [advise]
  const auto& s = seen;
  const bool asDocumented = s[0].second.readMostly == 0 && s[0].second.preferred == CU_DEVICE_INVALID &&
                            s[1].second.readMostly == 1 && s[2].second.preferred == lab.dev &&
                            s[3].second.preferred == CU_DEVICE_CPU && s[4].second.preferred == CU_DEVICE_INVALID &&
                            s[5].second.accessedBy[0] == lab.dev && s[5].second.accessedBy[1] == CU_DEVICE_INVALID &&
                            s[6].second.readMostly == 0 && s[6].second.preferred == CU_DEVICE_INVALID &&
                            s[6].second.accessedBy[0] == CU_DEVICE_INVALID;
  wb::expect(asDocumented, "each attribute as the reference describes it", "other values (the lines above)");
#if CUDA_VERSION >= 12020
  wb::expect(s[2].second.preferredAt.type == CU_MEM_LOCATION_TYPE_DEVICE && s[2].second.preferredAt.id == lab.dev &&
                 s[3].second.preferredAt.type == CU_MEM_LOCATION_TYPE_HOST &&
                 s[4].second.preferredAt.type == CU_MEM_LOCATION_TYPE_INVALID,
             "PREFERRED_LOCATION_TYPE and _ID agreeing with the old answer", "other values");
#endif
}

//! [read-mostly]
// A kernel reads 64 MiB, the host reads every page of it, and the kernel reads it again: that last
// pass, timed, with SET_READ_MOSTLY and with UNSET_READ_MOSTLY (which also stops the driver from
// duplicating pages on its own).
float passAfterHostRead(const Lab& lab, bool readMostly) {
  const CUdeviceptr p = allocManaged(kBuffer);
  const CUmem_advise advice = readMostly ? CU_MEM_ADVISE_SET_READ_MOSTLY : CU_MEM_ADVISE_UNSET_READ_MOSTLY;
  CU_CHECK(wb::memAdvise(p, kBuffer, advice, wb::deviceLocation(lab.dev)));  // ignored, yet it must be valid
  hostFill(p, kBuffer, 11);
  sumPass(lab, p, kBuffer);
  unsigned long long pages = 0;
  for (size_t at = 0; at < kBuffer; at += kPage) pages += onHost(p)[at / 4];
  float ms = 0;
  const unsigned long long got = sumPass(lab, p, kBuffer, &ms);
  wb::expect(got == expectedSum(kBuffer / 4, 11) && pages != 0, "the passes reading what the host wrote",
             "a wrong sum");
  CU_CHECK(cuMemFree(p));
  return ms;
}
//! [read-mostly]

void readMostlyEffect(const Lab& lab) {
  if (lab.sanitized) return void(std::printf("the timed passes: left out under compute-sanitizer\n"));
  const float plain = passAfterHostRead(lab, false), duplicated = passAfterHostRead(lab, true);
  std::printf("the kernel's pass after the host read every page: %.3f ms with UNSET_READ_MOSTLY, %.3f ms with "
              "SET_READ_MOSTLY\n", plain, duplicated);
  // The driver's policy, not a promise: printed against what driver 580 did.
  std::printf("read duplication %s the kernel's pass (driver 580: shortened)\n",
              duplicated < plain ? "shortened" : "did NOT shorten");
}

//! [prefetch-order]
// A prefetch to the device in a stream held by the gate: the call returns at once, and
// LAST_PREFETCH_LOCATION already names the device although the stream has not reached the prefetch.
void prefetchInOrder(const Lab& lab, CUdeviceptr p) {
  wb::Gate gate(lab.gates.gate, lab.s, 5.0);
  CU_CHECK(wb::memPrefetchAsync(p, kBuffer, wb::deviceLocation(lab.dev), 0, lab.s));
  const bool waiting = gate.outcome() == wb::Gate::Waiting;
  const RangeState r = rangeState(p, kBuffer);
  std::printf("gate closed: cuMemPrefetchAsync to device 0 returned with the gate %s; LAST_PREFETCH_LOCATION "
              "says %s\n", waiting ? "waiting" : "NOT waiting", legacyName(r.lastPrefetch).c_str());
  wb::expect(waiting && r.lastPrefetch == lab.dev, "the call returning, the attribute naming the request",
             waiting ? "another location" : "the call waited for the stream");
  gate.open();
  CU_CHECK(cuStreamSynchronize(lab.s));
}
//! [prefetch-order]

//! [prefetch]
// Then to the host, and to the host NUMA node nearest the device where the system has NUMA nodes.
// The data is the same after every move; memory that is not managed is refused.
void prefetch(const Lab& lab) {
  const CUdeviceptr p = allocManaged(kBuffer);
  hostFill(p, kBuffer, 13);
  if (lab.sanitized)
    std::printf("the gate: left out under compute-sanitizer, which runs nothing beside a waiting kernel\n");
  else
    prefetchInOrder(lab, p);
  CU_CHECK(wb::memPrefetchAsync(p, kBuffer, wb::deviceLocation(lab.dev), 0, lab.s));
  const bool onDevice = sumPass(lab, p, kBuffer) == expectedSum(kBuffer / 4, 13);
  CU_CHECK(wb::memPrefetchAsync(p, kBuffer, wb::hostLocation(), 0, lab.s));
  CU_CHECK(cuStreamSynchronize(lab.s));
  RangeState r = rangeState(p, kBuffer);
  const bool intact = onDevice && onHost(p)[kBuffer / 4 - 1] == static_cast<unsigned>(13 + kBuffer / 4 - 1);
  std::printf("to the host: LAST_PREFETCH_LOCATION %s (%s); the data intact on the device and back: %s\n",
              legacyName(r.lastPrefetch).c_str(), nameOf(r.lastPrefetchAt).c_str(), intact ? "yes" : "NO");
  wb::expect(r.lastPrefetch == CU_DEVICE_CPU && intact, "the host named, the data intact", "otherwise");
  //! [prefetch]
#if CUDA_VERSION >= 12020
  const int node = attribute(lab.dev, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
  if (node < 0) {
    std::printf("HOST_NUMA_ID -1: this system has no NUMA nodes to prefetch to\n");
  } else {
    //! [prefetch-numa]
    CUmemLocation numa{};  // the host NUMA node nearest the device (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID)
    numa.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    numa.id = node;
    CU_CHECK(wb::memPrefetchAsync(p, kBuffer, numa, 0, lab.s));
    CU_CHECK(cuStreamSynchronize(lab.s));
    r = rangeState(p, kBuffer);
    std::printf("to host NUMA node %d: LAST_PREFETCH_LOCATION_TYPE/_ID %s; the old attribute %s\n", node,
                nameOf(r.lastPrefetchAt).c_str(), legacyName(r.lastPrefetch).c_str());
    //! [prefetch-numa]
    wb::expect(r.lastPrefetchAt.type == CU_MEM_LOCATION_TYPE_HOST_NUMA && r.lastPrefetchAt.id == node,
               "the NUMA node named by type and id", nameOf(r.lastPrefetchAt));
  }
#else
  std::printf("host NUMA nodes: left out, CUDA %d's CUmemLocation cannot name one (12.2 added them)\n", CUDA_VERSION);
#endif
  CUdeviceptr plain = 0;
  CU_CHECK(cuMemAlloc(&plain, kPage));
  const CUresult notManaged = wb::memPrefetchAsync(plain, kPage, wb::hostLocation(), 0, lab.s);
  const CUresult flagged = wb::memPrefetchAsync(p, kBuffer, wb::hostLocation(), 1, lab.s);
  std::printf("cuMemPrefetchAsync of cuMemAlloc memory: %s; with flags 1: %s\n", wb::errorName(notManaged).c_str(),
              wb::errorName(flagged).c_str());
  wb::expect(notManaged != CUDA_SUCCESS && flagged != CUDA_SUCCESS, "both refused", "one was accepted");
  CU_CHECK(cuMemFree(plain));
  CU_CHECK(cuMemFree(p));
}

#if CUDA_VERSION >= 13000
//! [batch]
// Three buffers: one call prefetches the first two to the device and the third to the host
// (prefetchLocIdxs {0, 2}: location 0 from operation 0 on, location 1 from operation 2 on).
void batchPrefetch(const Lab& lab, CUdeviceptr (&ptrs)[3], size_t (&sizes)[3]) {
  CUmemLocation to[2] = {wb::deviceLocation(lab.dev), wb::hostLocation()};
  size_t from[2] = {0, 2};
  CU_CHECK(cuMemPrefetchBatchAsync(ptrs, sizes, 3, to, from, 2, 0, lab.s));
  CU_CHECK(cuStreamSynchronize(lab.s));
  std::printf("cuMemPrefetchBatchAsync, LAST_PREFETCH_LOCATION:");
  for (int i = 0; i < 3; ++i)
    std::printf(" buffer %d %s;", i, legacyName(rangeState(ptrs[i], sizes[i]).lastPrefetch).c_str());
  std::printf("\n");
  const bool placed = rangeState(ptrs[0], sizes[0]).lastPrefetch == lab.dev &&
                      rangeState(ptrs[1], sizes[1]).lastPrefetch == lab.dev &&
                      rangeState(ptrs[2], sizes[2]).lastPrefetch == CU_DEVICE_CPU;
  wb::expect(placed, "each range sent where its location says", "another placement");
  const CUresult legacy = cuMemPrefetchBatchAsync(ptrs, sizes, 3, to, from, 2, 0, nullptr);
  std::printf("the same on the NULL stream (the legacy default stream): %s\n", wb::errorName(legacy).c_str());
  wb::expect(legacy != CUDA_SUCCESS, "the legacy stream refused", "it was accepted");
}
//! [batch]

//! [discard]
// Buffer 0's contents are no longer needed: discarded, then written by a kernel before anything reads
// it. Buffer 2 is handed to the device to be overwritten there: discard and prefetch in one call.
void batchDiscard(const Lab& lab, CUdeviceptr (&ptrs)[3], size_t (&sizes)[3]) {
  CU_CHECK(cuMemDiscardBatchAsync(ptrs, sizes, 1, 0, lab.s));
  overWords(lab, lab.fill, ptrs[0], sizes[0], 21, lab.s);
  CUmemLocation to = wb::deviceLocation(lab.dev);
  size_t from = 0;
  CU_CHECK(cuMemDiscardAndPrefetchBatchAsync(ptrs + 2, sizes + 2, 1, &to, &from, 1, 0, lab.s));
  overWords(lab, lab.fill, ptrs[2], sizes[2], 22, lab.s);
  const bool written = sumPass(lab, ptrs[0], sizes[0]) == expectedSum(sizes[0] / 4, 21) &&
                       sumPass(lab, ptrs[2], sizes[2]) == expectedSum(sizes[2] / 4, 22);
  const int last = rangeState(ptrs[2], sizes[2]).lastPrefetch;
  std::printf("discarded, then written by a kernel: %s; after cuMemDiscardAndPrefetchBatchAsync buffer 2's "
              "LAST_PREFETCH_LOCATION is %s\n", written ? "the new values read back" : "WRONG VALUES",
              legacyName(last).c_str());
  wb::expect(written && last == lab.dev, "writes after a discard kept, buffer 2 sent to the device",
             "otherwise");
}
//! [discard]
#endif

void batches(const Lab& lab) {
#if CUDA_VERSION >= 13000
  CUdeviceptr ptrs[3] = {};
  size_t sizes[3] = {16u << 20, 16u << 20, 16u << 20};
  for (int i = 0; i < 3; ++i) {
    ptrs[i] = allocManaged(sizes[i]);
    hostFill(ptrs[i], sizes[i], static_cast<unsigned>(i));
  }
  batchPrefetch(lab, ptrs, sizes);
  batchDiscard(lab, ptrs, sizes);
  for (CUdeviceptr p : ptrs) CU_CHECK(cuMemFree(p));
#else
  (void)lab;
  std::printf("left out: CUDA %d has no cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync or "
              "cuMemDiscardAndPrefetchBatchAsync (13.0 added them)\n", CUDA_VERSION);
#endif
}

// ---------------------------------------------------------------- the figure

struct Rates {
  size_t bytes;
  double faulted, prefetch, prefetched, deviceMemory;  // GB/s, medians of 3
};

double median3(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

//! [figure]
// For one size: a kernel over managed memory whose pages are on the host (it faults them over), the
// prefetch that moves them instead, the kernel after it, and the kernel over cuMemAlloc memory. Each
// round starts with the pages on the host; UNSET_READ_MOSTLY keeps one copy, so every round moves them.
Rates measure(const Lab& lab, size_t bytes) {
  const CUdeviceptr m = allocManaged(bytes);
  CU_CHECK(wb::memAdvise(m, bytes, CU_MEM_ADVISE_UNSET_READ_MOSTLY, wb::deviceLocation(lab.dev)));
  CUdeviceptr d = 0;
  CU_CHECK(cuMemAlloc(&d, bytes));
  overWords(lab, lab.fill, m, bytes, 17, lab.s);
  overWords(lab, lab.fill, d, bytes, 17, lab.s);
  const unsigned long long want = expectedSum(bytes / 4, 17);
  std::vector<double> faulted, prefetch, prefetched, deviceMemory;
  bool right = true;
  for (int round = 0; round < 3; ++round) {
    float ms = 0;
    CU_CHECK(wb::memPrefetchAsync(m, bytes, wb::hostLocation(), 0, lab.s));
    right = right && sumPass(lab, m, bytes, &ms) == want;
    faulted.push_back(gbps(bytes, ms));
    CU_CHECK(wb::memPrefetchAsync(m, bytes, wb::hostLocation(), 0, lab.s));
    const CUmemLocation to = wb::deviceLocation(lab.dev);
    ms = timedMs(lab.s, [&] { CU_CHECK(wb::memPrefetchAsync(m, bytes, to, 0, lab.s)); });
    prefetch.push_back(gbps(bytes, ms));
    right = right && sumPass(lab, m, bytes, &ms) == want;
    prefetched.push_back(gbps(bytes, ms));
    right = right && sumPass(lab, d, bytes, &ms) == want;
    deviceMemory.push_back(gbps(bytes, ms));
  }
  wb::expect(right, "every timed pass reading the bytes it is timed on", "a wrong sum");
  CU_CHECK(cuMemFree(d));
  CU_CHECK(cuMemFree(m));
  return {bytes, median3(faulted), median3(prefetch), median3(prefetched), median3(deviceMemory)};
}
//! [figure]

// The limits, in GB/s. The device's memory: its peak clock (kHz) x its bus width (bits) x 2 transfers
// per clock / 8, from the device's attributes. The host link: NVML's fastest PCIe link for this slot
// (lesson 05), 0 where NVML cannot say.
struct Limits {
  double dram = 0, link = 0;
  bool coherent = false;  // the GPU reads host pages in place (C2C): the PCIe link is not their limit
};

Limits limitsOf(CUdevice dev) {
  Limits l;
  l.dram = 1e3 * attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) *
           attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) * 2.0 / 8 / 1e9;
  char busId[32] = {0};
  CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, dev));
  std::string why;
  const std::optional<wb::nvml::PcieLink> link = wb::nvml::pcieLink(busId, why);
  if (link) l.link = link->bytesPerSecond() / 1e9;
  l.coherent = attribute(dev, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES) != 0;
  if (l.coherent)
    std::printf("hardware-coherent host memory (PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES 1): host pages\n"
                "may be read over NVLink-C2C, so the PCIe link below limits nothing here\n");
  std::printf("limits: the device's memory %.1f GB/s (its attributes); the host link %s\n", l.dram,
              link ? link->describe().c_str() : ("unknown: " + why).c_str());
  return l;
}

// From four times the L2 cache (so the cache cannot hold what a pass reads) up to 1 GiB, and never
// more than an eighth of the free device memory: three sizes at most, each twice the last.
std::vector<size_t> figureSizes(CUdevice dev) {
  size_t smallest = 64u << 20;
  while (smallest < 4 * static_cast<size_t>(attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE))) smallest *= 2;
  const size_t largest = std::min<size_t>(size_t{1} << 30, freeMemory() / 8);
  std::vector<size_t> sizes;
  for (size_t b = smallest; b <= largest && sizes.size() < 3; b *= 2) sizes.push_back(b);
  return sizes;
}

std::string fraction(double rate, double limit) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", rate / limit);
  return limit > 0 ? text : "-";
}

// The table, then the largest size against both limits. What the page claims: nothing crosses the
// host link faster than the link, nothing reads device memory faster than its peak, and the kernel
// after the prefetch is faster than the kernel that faulted the pages over.
void report(const std::vector<Rates>& rates, const Limits& lim) {
  std::printf("GB/s, median of 3:\n  %10s  %26s  %18s  %22s  %14s\n", "size", "managed, pages on the host",
              "the prefetch", "managed, prefetched", "cuMemAlloc");
  for (const Rates& r : rates)
    std::printf("  %10s  %26.2f  %18.2f  %22.2f  %14.2f\n", wb::bytes(r.bytes).c_str(), r.faulted, r.prefetch,
                r.prefetched, r.deviceMemory);
  const Rates& big = rates.back();
  std::printf("at %s, as fractions of the host link and of the device's memory:\n", wb::bytes(big.bytes).c_str());
  std::printf("  pages on the host %s and %s; the prefetch %s and %s; prefetched %s and %s; cuMemAlloc %s and %s\n",
              fraction(big.faulted, lim.link).c_str(), fraction(big.faulted, lim.dram).c_str(),
              fraction(big.prefetch, lim.link).c_str(), fraction(big.prefetch, lim.dram).c_str(),
              fraction(big.prefetched, lim.link).c_str(), fraction(big.prefetched, lim.dram).c_str(),
              fraction(big.deviceMemory, lim.link).c_str(), fraction(big.deviceMemory, lim.dram).c_str());
  const bool linkBound = lim.link == 0 || lim.coherent ||
                         (big.faulted <= lim.link * 1.05 && big.prefetch <= lim.link * 1.05);
  wb::expect(linkBound && big.deviceMemory <= lim.dram * 1.05, "every rate within the limit of what it crosses",
             "a rate above its limit");
  std::printf("the kernel after the prefetch %s the one that faulted (the driver's policy; driver 580: "
              "faster)\n", big.prefetched > big.faulted ? "faster than" : "NOT faster than");
}

wb::FigureTable tableOf(const std::vector<Rates>& rates, const Limits& lim) {
  wb::FigureTable table("bytes,way,GB/s");
  for (const Rates& r : rates) {
    table.row("%zu,managed: pages on the host,%.3f", r.bytes, r.faulted);
    table.row("%zu,the prefetch itself,%.3f", r.bytes, r.prefetch);
    table.row("%zu,managed: after the prefetch,%.3f", r.bytes, r.prefetched);
    table.row("%zu,device memory (cuMemAlloc),%.3f", r.bytes, r.deviceMemory);
  }
  if (rates.empty()) return table;
  table.row("0,limit: the device's memory (its attributes),%.3f", lim.dram);  // dashed lines (docs/figure_plot.cpp)
  if (lim.link > 0) table.row("0,limit: the host link (NVML),%.3f", lim.link);
  return table;
}

wb::FigureTable figure(const Lab& lab) {
  if (lab.sanitized) return std::printf("left out under compute-sanitizer, which slows every call\n"), tableOf({}, {});
  const Limits lim = limitsOf(lab.dev);
  std::vector<Rates> rates;
  for (size_t bytes : figureSizes(lab.dev)) rates.push_back(measure(lab, bytes));
  if (rates.empty()) return std::printf("left out: the device has too little free memory\n"), tableOf({}, {});
  report(rates, lim);
  return tableOf(rates, lim);
}

//! [other-device]
// With two devices: the range prefetched to device 1 in a stream of device 1's context, a kernel there
// adds 1 to every word, and device 0 reads the result; then advice that prefers device 1 and keeps
// device 0's mapping.
void otherDevice(const Lab& lab, CUcontext primary0) {
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  CUdevice dev1 = 0;
  if (count >= 2) CU_CHECK(cuDeviceGet(&dev1, 1));
  if (count < 2 || !lab.concurrent || !attribute(dev1, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)) {
    std::printf("skipped: %s; with two such devices this step prefetches to device 1, adds there, and reads "
                "the result on device 0\n",
                count < 2 ? "this machine has one device" : "a device lacks concurrent managed access");
    return;
  }
  const CUdeviceptr p = allocManaged(kBuffer);
  hostFill(p, kBuffer, 31);
  CUcontext primary1 = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary1, dev1));
  CU_CHECK(cuCtxSetCurrent(primary1));
  CUstream s1 = nullptr;
  CU_CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
  CU_CHECK(wb::memPrefetchAsync(p, kBuffer, wb::deviceLocation(dev1), 0, s1));
  overWords(lab, lab.add, p, kBuffer, 1, s1);
  CU_CHECK(cuStreamSynchronize(s1));
  CU_CHECK(cuStreamDestroy(s1));
  CU_CHECK(cuCtxSetCurrent(primary0));
  //! [other-device]
  const int last = rangeState(p, kBuffer).lastPrefetch;
  const bool right = sumPass(lab, p, kBuffer) == expectedSum(kBuffer / 4, 32);
  CU_CHECK(wb::memAdvise(p, kBuffer, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, wb::deviceLocation(dev1)));
  CU_CHECK(wb::memAdvise(p, kBuffer, CU_MEM_ADVISE_SET_ACCESSED_BY, wb::deviceLocation(lab.dev)));
  const RangeState r = rangeState(p, kBuffer);
  std::printf("LAST_PREFETCH_LOCATION %s; device 0 read what device 1 wrote: %s; preferred %s, accessed by %s\n",
              legacyName(last).c_str(), right ? "yes" : "NO", legacyName(r.preferred).c_str(),
              legacyName(r.accessedBy[0]).c_str());
  wb::expect(last == dev1 && right && r.preferred == dev1 && r.accessedBy[0] == lab.dev,
             "device 1 named, its writes seen by device 0, the advice read back", "otherwise");
  CU_CHECK(cuMemFree(p));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev1));
}

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson23-figure.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "every launch would wait for its kernel: the gate kernel's launch would wait for the gate"},
        {"CUDA_MANAGED_FORCE_DEVICE_ALLOC", wb::Under::Stops,
         "managed memory would be placed in device memory whatever touches it: the lesson shows where the driver "
         "places it by itself"},
    });
    // The images are checked before the driver starts: a damaged one stops the program in a moment.
    const std::string gateImage = wb::verifiedImagePath("streams.fatbin"),
                      image = wb::verifiedImagePath("unified_memory.fatbin");
    CU_CHECK(cuInit(0));
    Lab lab;
    CU_CHECK(cuDeviceGet(&lab.dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, lab.dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary gates = nullptr, library = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&gates, gateImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&library, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    lab.gates = wb::StreamKernels::load(gates);  // every kernel loaded before any gate closes
    CU_CHECK(cuLibraryGetKernel(&lab.fill, library, "um_fill"));
    CU_CHECK(cuLibraryGetKernel(&lab.add, library, "um_add"));
    CU_CHECK(cuLibraryGetKernel(&lab.sum, library, "um_sum"));
    for (CUkernel k : {lab.fill, lab.add, lab.sum}) {
      CUfunction loaded = nullptr;
      CU_CHECK(cuKernelGetFunction(&loaded, k));
    }
    lab.blocks = 8 * static_cast<unsigned>(attribute(lab.dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
    CU_CHECK(cuStreamCreate(&lab.s, CU_STREAM_NON_BLOCKING));
    CU_CHECK(cuMemAlloc(&lab.total, sizeof(unsigned long long)));
    lab.sanitized = wb::underSanitizer();
    const char* limited = "left out: without concurrent managed access the reference allows neither\n";

    wb::step(1, "Managed memory on this machine");
    const Support s = support(lab.dev);
    wb::expect(s.managed == 1, "a device with managed memory", "MANAGED_MEMORY is 0");
    lab.concurrent = s.concurrent == 1;
    std::printf("free device memory %s: this run asks for at most %s of managed memory at once\n",
                wb::bytes(freeMemory()).c_str(),
                wb::bytes(std::min<size_t>(size_t{1} << 30, freeMemory() / 8)).c_str());
    pageableAccess(lab, s);
    wb::step(2, "cuMemAllocManaged beside a managed variable");
    managedBuffer(lab);
    managedVariable(lab, library);
    wb::step(3, "First touch: where the pages go");
    firstTouch(lab);
    wb::step(4, "Advice, and reading it back");
    if (lab.concurrent) {
      advise(lab);
      readMostlyEffect(lab);
    } else {
      std::printf("%s", limited);
    }
    wb::step(5, "Prefetching in stream order");
    lab.concurrent ? prefetch(lab) : void(std::printf("%s", limited));
    wb::step(6, "Batches: prefetch and discard several ranges in one call");
    lab.concurrent ? batches(lab) : void(std::printf("%s", limited));
    wb::step(7, "Streaming over managed memory: faulted, prefetched, device memory");
    const wb::FigureTable table = lab.concurrent ? figure(lab) : (std::printf("%s", limited), tableOf({}, {}));
    wb::step(8, "Prefetching to another device");
    otherDevice(lab, primary);

    CU_CHECK(cuMemFree(lab.total));
    CU_CHECK(cuStreamDestroy(lab.s));
    CU_CHECK(cuLibraryUnload(library));
    CU_CHECK(cuLibraryUnload(gates));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(lab.dev));
    return table.save(paths.csv, 7);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

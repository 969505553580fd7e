// Lesson 14: virtual memory management: reserve, create, map.
//
// What you learn: cuMemAlloc does four things at once, and the virtual memory calls do them one by
// one. cuMemAddressReserve takes a range of addresses and no memory; cuMemCreate takes physical
// memory with no address; cuMemMap puts the memory behind the addresses; cuMemSetAccess lets a
// device use them. The granularity (cuMemGetAllocationGranularity) is the unit of all of it. Taken
// down in the other order, each object keeps what it owns: a mapping keeps its memory after
// cuMemRelease, and the memory goes back only when no mapping and no handle is left. Then what the
// split buys: a buffer that grows by mapping more memory behind the same reservation, so every
// pointer into it stays valid (PyTorch's expandable segments), measured against allocating a bigger
// buffer and copying; one reservation backed by two devices' memory, with access granted per
// device; and memory shared with another process through a POSIX file descriptor passed over a
// Unix socket.
//
// APIs: cuMemGetAllocationGranularity, cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess,
//       cuMemGetAccess, cuMemRelease, cuMemUnmap, cuMemAddressFree, cuMemRetainAllocationHandle,
//       cuMemGetAllocationPropertiesFromHandle, cuMemExportToShareableHandle,
//       cuMemImportFromShareableHandle, cuDeviceGetAttribute, cuDeviceCanAccessPeer, cuMemGetInfo
// Run:  ctest -R lesson14   (or build/lessons/lesson14-virtual-memory [--csv lesson14-figure.csv])
#include "figure.hpp"
#include "channel.hpp"
#include "process.hpp"
#include "workbook.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

constexpr unsigned kChildSeconds = 60;  // the importing child is ended after this: nothing hangs
constexpr unsigned kMark = 0x600DF00Du;  // what the child writes into the shared memory

// fill and scale of kernels/vector_ops.cu, as CUkernels: launched in whichever context is current.
struct Kernels {
  CUfunction fill = nullptr, scale = nullptr;
};

size_t roundUp(size_t bytes, size_t granule) { return (bytes + granule - 1) / granule * granule; }

int attribute(CUdevice dev, CUdevice_attribute what) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, what, dev));
  return value;
}

size_t freeMemory() {
  size_t free = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&free, &total));
  return free;
}

// How the device's free memory moved between two readings, in words.
std::string moved(size_t before, size_t after) {
  if (after == before) return "did not change";
  return after < before ? "fell by " + wb::bytes(before - after) : "rose by " + wb::bytes(after - before);
}

//! [prop]
// What cuMemCreate is to make: memory on device dev that does not migrate while in use (PINNED), and
// the kinds of handle other processes may later import it by (none, unless asked).
CUmemAllocationProp onDevice(CUdevice dev, CUmemAllocationHandleType shareAs = CU_MEM_HANDLE_TYPE_NONE) {
  CUmemAllocationProp prop{};  // zeroed: the fields not set here must be 0
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = shareAs;
  return prop;
}

size_t granularity(CUdevice dev, CUmemAllocationGranularity_flags which = CU_MEM_ALLOC_GRANULARITY_MINIMUM) {
  const CUmemAllocationProp prop = onDevice(dev);
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, which));
  return granule;
}

CUmemAccessDesc readWrite(CUdevice dev) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return access;
}
//! [prop]

// What cuMemGetAccess says device dev may do at p: "read-write", "read", "none", or its error.
std::string accessOf(CUdevice dev, CUdeviceptr p) {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = dev;
  unsigned long long flags = 0;
  const CUresult rc = cuMemGetAccess(&flags, &where, p);
  if (rc != CUDA_SUCCESS) return wb::errorName(rc);
  return flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? "read-write" : flags == CU_MEM_ACCESS_FLAGS_PROT_READ ? "read" : "none";
}

void launch(CUfunction f, void** args, unsigned n) {
  CU_CHECK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
}

void fill(const Kernels& k, CUdeviceptr p, float value, unsigned n) {
  void* args[] = {&p, &value, &n};
  launch(k.fill, args, n);
}

void scale(const Kernels& k, CUdeviceptr p, float factor, float offset, unsigned n) {
  void* args[] = {&p, &factor, &offset, &n};
  launch(k.scale, args, n);
}

std::vector<float> readBack(CUdeviceptr p, size_t n) {
  std::vector<float> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(float)));
  return v;
}

size_t countOf(const std::vector<float>& v, size_t from, size_t to, float value) {
  return static_cast<size_t>(std::count(v.begin() + static_cast<long>(from), v.begin() + static_cast<long>(to), value));
}

//! [support]
// Whether the device has the virtual memory calls and can export memory as a POSIX file
// descriptor; then the granularity: the unit of every size, address and offset that follows.
size_t supportAndGranularity(CUdevice dev) {
  const int vmm = attribute(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
  const int fd = attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
  std::printf("VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED %d, HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED %d\n",
              vmm, fd);
  wb::expect(vmm == 1, "a device with virtual memory management",
             "the attribute is 0: cuMemCreate is not supported");
  const size_t minimum = granularity(dev),
               recommended = granularity(dev, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  std::printf("granularity of device memory: minimum %s, recommended %s\n", wb::bytes(minimum).c_str(),
              wb::bytes(recommended).c_str());
  wb::expect(minimum > 0 && recommended >= minimum, "a granularity, the recommended one at least the minimum",
             "other values");
  return minimum;
}
//! [support]

//! [not-a-multiple]
// cuMemCreate of a size that is not a multiple of the granularity, then of the size rounded up. The
// sizes are printed in bytes: rounded to MiB, the granule + 4 KiB would read as a whole granule.
void notAMultiple(CUdevice dev, size_t granule) {
  const CUmemAllocationProp prop = onDevice(dev);
  const size_t odd = granule + 4096, rounded = roundUp(odd, granule);
  CUmemGenericAllocationHandle handle = 0;
  const CUresult refused = cuMemCreate(&handle, odd, &prop, 0);
  if (refused == CUDA_SUCCESS) CU_CHECK(cuMemRelease(handle));
  const CUresult created = cuMemCreate(&handle, rounded, &prop, 0);
  if (created == CUDA_SUCCESS) CU_CHECK(cuMemRelease(handle));
  std::printf("cuMemCreate of %zu bytes (the granularity + 4 KiB): %s; "
              "rounded up to %zu bytes (%s): %s\n", odd, wb::errorName(refused).c_str(), rounded,
              wb::bytes(rounded).c_str(), wb::errorName(created).c_str());
  wb::expect(refused != CUDA_SUCCESS && created == CUDA_SUCCESS,
             "a size that is not a multiple refused, the size rounded up accepted", "other results");
}
//! [not-a-multiple]

struct Mapped {
  CUdeviceptr base = 0;
  size_t size = 0;
  CUmemGenericAllocationHandle handle = 0;
};

//! [map]
// The four steps cuMemAlloc takes at once, one by one, with the device's free memory read after
// each: only cuMemCreate takes memory. Until cuMemSetAccess, no device may use the addresses.
Mapped reserveCreateMap(CUdevice dev, size_t size, size_t granule) {
  Mapped m;
  m.size = size;
  const size_t free0 = freeMemory();
  CU_CHECK(cuMemAddressReserve(&m.base, size, granule, 0, 0));  // addresses, aligned to the granule
  const size_t free1 = freeMemory();
  const CUmemAllocationProp prop = onDevice(dev);
  CU_CHECK(cuMemCreate(&m.handle, size, &prop, 0));  // memory, at no address yet
  const size_t free2 = freeMemory();
  CU_CHECK(cuMemMap(m.base, size, 0, m.handle, 0));  // the addresses now lead to the memory
  const std::string before = accessOf(dev, m.base);
  const CUmemAccessDesc access = readWrite(dev);
  CU_CHECK(cuMemSetAccess(m.base, size, &access, 1));  // and device dev may use them
  std::printf("cuMemAddressReserve(%s): %s; free memory %s\n", wb::bytes(size).c_str(),
              wb::hex(m.base).c_str(), moved(free0, free1).c_str());
  std::printf("cuMemCreate(%s): free memory %s\n", wb::bytes(size).c_str(), moved(free1, free2).c_str());
  std::printf("cuMemMap: device access %s; after cuMemSetAccess: %s\n", before.c_str(),
              accessOf(dev, m.base).c_str());
  wb::expect(free1 + size / 2 > free0 && free2 + size / 2 <= free1,
             "the reservation taking no memory, cuMemCreate taking the size", "other changes in free memory");
  wb::expect(before != "read-write" && accessOf(dev, m.base) == "read-write",
             "no access after cuMemMap, read-write after cuMemSetAccess", "other access");
  return m;
}
//! [map]

//! [use]
// Mapped and accessible, the range is device memory like any other: a kernel fills it.
void useIt(const Kernels& k, const Mapped& m) {
  const unsigned n = static_cast<unsigned>(m.size / sizeof(float));
  fill(k, m.base, 1.5f, n);
  CU_CHECK(cuCtxSynchronize());
  const size_t right = countOf(readBack(m.base, n), 0, n, 1.5f);
  std::printf("fill(%s, 1.5) in a kernel: %zu of %u values read back as 1.5\n", wb::hex(m.base).c_str(),
              right, n);
  wb::expect(right == n, "the kernel's values in the mapped memory", "wrong values");
}
//! [use]

//! [alias]
// The handle, not the address, owns the memory: map it at a second reservation as well, and each
// address reads what the kernel wrote through the first.
CUdeviceptr mapAgain(CUdevice dev, const Mapped& m, size_t granule) {
  CUdeviceptr alias = 0;
  CU_CHECK(cuMemAddressReserve(&alias, m.size, granule, 0, 0));
  CU_CHECK(cuMemMap(alias, m.size, 0, m.handle, 0));
  const CUmemAccessDesc access = readWrite(dev);
  CU_CHECK(cuMemSetAccess(alias, m.size, &access, 1));
  const std::vector<float> seen = readBack(alias, 4);
  std::printf("the same handle mapped again at %s: it reads %.1f there too\n", wb::hex(alias).c_str(),
              seen[0]);
  wb::expect(seen[0] == 1.5f, "one memory behind two addresses", "the second address read something else");
  return alias;
}
//! [alias]

//! [teardown]
// Released, unmapped, freed: the memory goes back only when neither a handle nor a mapping is left.
// The guide's order is unmap, release, free; releasing first is allowed ("The generic memory handle
// can be freed when there are still outstanding mappings") and shows that the mappings hold the memory.
void teardown(const Mapped& m, CUdeviceptr alias) {
  const size_t free0 = freeMemory();
  CU_CHECK(cuMemRelease(m.handle));  // the handle goes; both mappings still hold the memory
  const size_t free1 = freeMemory();
  const float stillThere = readBack(m.base, 1)[0];
  CU_CHECK(cuMemUnmap(m.base, m.size));  // one mapping left
  const size_t free2 = freeMemory();
  CU_CHECK(cuMemUnmap(alias, m.size));  // none left: the memory goes back
  const size_t free3 = freeMemory();
  CU_CHECK(cuMemAddressFree(alias, m.size));
  CU_CHECK(cuMemAddressFree(m.base, m.size));  // the addresses go back
  std::printf("cuMemRelease: free memory %s, and the first address still reads %.1f\n",
              moved(free0, free1).c_str(), stillThere);
  std::printf("cuMemUnmap of the first mapping: free memory %s\n", moved(free1, free2).c_str());
  std::printf("cuMemUnmap of the second: free memory %s\n", moved(free2, free3).c_str());
  wb::expect(free1 < free0 + m.size / 2 && stillThere == 1.5f && free2 < free1 + m.size / 2 &&
                 free3 >= free2 + m.size / 2,
             "the memory kept by its mappings, and given back with the last one",
             "other changes in free memory");
}
//! [teardown]

//! [growable]
// A buffer that grows in place: one reservation of its whole capacity, and physical memory mapped
// behind it piece by piece. Each piece's handle is released at once: its mapping owns the memory.
struct GrowingBuffer {
  CUdevice dev = 0;
  size_t granule = 0, capacity = 0, size = 0;
  CUdeviceptr base = 0;
  std::vector<std::pair<CUdeviceptr, size_t>> pieces;  // each cuMemMap, unmapped one by one
};

void growTo(GrowingBuffer& b, size_t bytes) {
  const size_t target = roundUp(bytes, b.granule);
  if (target <= b.size) return;
  if (target > b.capacity) throw std::length_error("past the buffer's reservation");
  const size_t more = target - b.size;
  const CUmemAllocationProp prop = onDevice(b.dev);
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, more, &prop, 0));
  CU_CHECK(cuMemMap(b.base + b.size, more, 0, handle, 0));  // right after what is mapped already
  CU_CHECK(cuMemRelease(handle));
  const CUmemAccessDesc access = readWrite(b.dev);
  CU_CHECK(cuMemSetAccess(b.base + b.size, more, &access, 1));
  b.pieces.emplace_back(b.base + b.size, more);
  b.size = target;
}
//! [growable]

void freeBuffer(GrowingBuffer& b) {
  for (const auto& [at, bytes] : b.pieces) CU_CHECK(cuMemUnmap(at, bytes));
  CU_CHECK(cuMemAddressFree(b.base, b.capacity));
}

//! [grow]
// 8 MiB filled with 1.0 by a kernel; grown to 40 MiB, the new part filled with 5.0; then one
// kernel over all of it, at the base address taken before the buffer grew: 1.0 becomes 3.0.
void growInPlace(const Kernels& k, CUdevice dev, size_t granule) {
  GrowingBuffer b;
  b.dev = dev, b.granule = granule, b.capacity = roundUp(1u << 30, granule);
  const size_t free0 = freeMemory();
  CU_CHECK(cuMemAddressReserve(&b.base, b.capacity, granule, 0, 0));
  growTo(b, 8u << 20);
  const CUdeviceptr before = b.base;
  const unsigned first = static_cast<unsigned>(b.size / sizeof(float));
  fill(k, before, 1.0f, first);
  growTo(b, 40u << 20);
  const unsigned all = static_cast<unsigned>(b.size / sizeof(float));
  fill(k, b.base + first * sizeof(float), 5.0f, all - first);
  scale(k, before, 2.0f, 1.0f, all);  // the pointer from before the growth
  CU_CHECK(cuCtxSynchronize());
  const std::vector<float> v = readBack(b.base, all);
  const size_t old = countOf(v, 0, first, 3.0f), added = countOf(v, first, all, 11.0f);
  const size_t freeNow = freeMemory(), held = free0 > freeNow ? free0 - freeNow : 0;
  std::printf("reserved %s at %s; grown to %s, then to %s: base %s, free memory fell by %s\n",
              wb::bytes(b.capacity).c_str(), wb::hex(before).c_str(), wb::bytes(size_t{first} * 4).c_str(),
              wb::bytes(b.size).c_str(), b.base == before ? "unchanged" : "MOVED", wb::bytes(held).c_str());
  std::printf("after scale(x2 + 1) over all of it: %zu of %u old values are 3.0, "
              "%zu of %u new ones are 11.0\n", old, first, added, all - first);
  wb::expect(b.base == before && old == first && added == all - first,
             "the old data at the old addresses, and the new memory after it", "moved or wrong values");
  wb::expect(held < b.capacity / 2, "only the mapped memory taken, not the reservation",
             "the reservation cost memory");
  freeBuffer(b);
}
//! [grow]

struct GrowthCost {
  size_t bytes;
  double mapUs, copyUs;
};

//! [median]
// The median time of grow() in microseconds, 9 after 2 warm-ups; setup and teardown are not timed.
template <class Setup, class Grow, class Teardown>
double medianUs(Setup&& setup, Grow&& grow, Teardown&& teardown) {
  constexpr int kWarmup = 2, kRepeats = 9;
  std::vector<double> us;
  for (int i = 0; i < kWarmup + kRepeats; ++i) {
    setup();
    const wb::Stopwatch clock;
    grow();
    const double t = clock.ms() * 1000.0;
    teardown();
    if (i >= kWarmup) us.push_back(t);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}
//! [median]

//! [cost-map]
// Growing from half to the whole of bytes by mapping the second half behind a reservation of bytes.
double growByMapping(CUdevice dev, size_t bytes, size_t granule) {
  GrowingBuffer b;
  b.dev = dev, b.granule = granule, b.capacity = bytes;
  return medianUs(
      [&] {
        CU_CHECK(cuMemAddressReserve(&b.base, bytes, granule, 0, 0));
        growTo(b, bytes / 2);
      },
      [&] { growTo(b, bytes); },
      [&] {
        freeBuffer(b);
        b.pieces.clear(), b.size = 0;
      });
}
//! [cost-map]

//! [cost-copy]
// The same growth the old way: cuMemAlloc of the new size, a copy of the old half, the old freed.
// cuMemcpyDtoD may return before the copy is done, so the timing waits for it.
double growByCopying(size_t bytes) {
  CUdeviceptr old = 0, bigger = 0;
  return medianUs([&] { CU_CHECK(cuMemAlloc(&old, bytes / 2)); },
                  [&] {
                    CU_CHECK(cuMemAlloc(&bigger, bytes));
                    CU_CHECK(cuMemcpyDtoD(bigger, old, bytes / 2));
                    CU_CHECK(cuCtxSynchronize());
                    CU_CHECK(cuMemFree(old));
                  },
                  [&] { CU_CHECK(cuMemFree(bigger)); });
}
//! [cost-copy]

//! [cost-table]
std::vector<GrowthCost> growthCost(CUdevice dev, size_t granule) {
  std::vector<GrowthCost> costs;
  for (size_t bytes = 8u << 20; bytes <= (size_t{2} << 30); bytes *= 4)
    costs.push_back({bytes, growByMapping(dev, bytes, granule), growByCopying(bytes)});
  std::printf("Growing a buffer from half its size to its size, microseconds "
              "(median of 9 after 2 warm-ups):\n");
  std::printf("  %10s  %22s  %20s  %7s\n", "to size", "map more (cuMemMap)", "cuMemAlloc + copy", "ratio");
  for (const GrowthCost& c : costs)
    std::printf("  %10s  %22.1f  %20.1f  %6.1fx\n", wb::bytes(c.bytes).c_str(), c.mapUs, c.copyUs,
                c.copyUs / c.mapUs);
  const GrowthCost& largest = costs.back();
  wb::expect(largest.mapUs < largest.copyUs,
             "mapping more memory faster than allocating bigger and copying at " + wb::bytes(largest.bytes),
             "it was not faster there");
  return costs;
}
//! [cost-table]

wb::FigureTable tableOf(const std::vector<GrowthCost>& costs) {
  wb::FigureTable table("bytes,way,microseconds");
  for (const GrowthCost& c : costs) {
    table.row("%zu,map more (cuMemMap),%.3f", c.bytes, c.mapUs);
    table.row("%zu,cuMemAlloc + copy,%.3f", c.bytes, c.copyUs);
  }
  return table;
}

// Which device the memory mapped at p lives on: the handle behind an address, and its properties.
int homeOf(CUdeviceptr p) {
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemRetainAllocationHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(p))));
  CUmemAllocationProp prop{};
  const CUresult rc = cuMemGetAllocationPropertiesFromHandle(&prop, handle);
  CU_CHECK(cuMemRelease(handle));  // every retain is paired with a release
  CU_CHECK(rc);
  return prop.location.id;
}

//! [two-devices]
// One reservation: its first half backed by device 0's memory, its second by device 1's. Device 0
// is granted access to all of it first; device 1 has none until it is granted too.
void twoDevices(const Kernels& k, CUdevice dev0, CUcontext primary0) {
  int count = 0, can01 = 0, can10 = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  CUdevice dev1 = 0;
  if (count >= 2) CU_CHECK(cuDeviceGet(&dev1, 1));
  if (count >= 2) CU_CHECK(cuDeviceCanAccessPeer(&can01, dev0, dev1));
  if (count >= 2) CU_CHECK(cuDeviceCanAccessPeer(&can10, dev1, dev0));
  if (!can01 || !can10) {
    std::printf("skipped: %s; with two devices this step maps device 0's and device 1's memory into one "
                "reservation, and kernels on both devices use all of it\n",
                count < 2 ? "this machine has one device"
                          : "the two devices cannot access each other's memory");
    return;
  }
  const size_t granule = std::max(granularity(dev0), granularity(dev1));
  const size_t half = roundUp(16u << 20, granule), size = 2 * half;
  CUdeviceptr base = 0;
  CU_CHECK(cuMemAddressReserve(&base, size, granule, 0, 0));
  for (CUdevice dev : {dev0, dev1}) {
    const CUmemAllocationProp prop = onDevice(dev);
    CUmemGenericAllocationHandle handle = 0;
    CU_CHECK(cuMemCreate(&handle, half, &prop, 0));
    CU_CHECK(cuMemMap(base + (dev == dev0 ? 0 : half), half, 0, handle, 0));
    CU_CHECK(cuMemRelease(handle));
  }
  const CUmemAccessDesc first = readWrite(dev0);
  const CUmemAccessDesc both[] = {readWrite(dev0), readWrite(dev1)};
  CU_CHECK(cuMemSetAccess(base, size, &first, 1));
  const std::string dev1Before = accessOf(dev1, base);
  CU_CHECK(cuMemSetAccess(base, size, both, 2));
  //! [two-devices]
  //! [two-devices-use]
  std::printf("one reservation at %s: the first half on device %d, the second on device %d\n",
              wb::hex(base).c_str(), homeOf(base), homeOf(base + half));
  std::printf("device 1's access: %s after granting device 0, %s after granting both\n", dev1Before.c_str(),
              accessOf(dev1, base).c_str());
  wb::expect(homeOf(base) == dev0 && homeOf(base + half) == dev1 && dev1Before != "read-write" &&
                 accessOf(dev1, base) == "read-write",
             "the halves on their devices, device 1 granted access separately", "other placement or access");
  const unsigned n = static_cast<unsigned>(size / sizeof(float));
  fill(k, base, 1.0f, n);  // device 0 writes both halves
  CU_CHECK(cuCtxSynchronize());
  CUcontext primary1 = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary1, dev1));
  CU_CHECK(cuCtxSetCurrent(primary1));
  scale(k, base, 2.0f, 1.0f, n);  // device 1 reads and writes both halves
  CU_CHECK(cuCtxSynchronize());
  CU_CHECK(cuCtxSetCurrent(primary0));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev1));
  const size_t right = countOf(readBack(base, n), 0, n, 3.0f);
  std::printf("fill(1.0) on device 0, then scale(x2 + 1) on device 1: %zu of %u values are 3.0\n", right, n);
  wb::expect(right == n, "both devices using the whole range", "wrong values");
  CU_CHECK(cuMemUnmap(base, half));
  CU_CHECK(cuMemUnmap(base + half, half));
  CU_CHECK(cuMemAddressFree(base, size));
}
//! [two-devices-use]

// What the parent sends with the descriptor: how much memory it names, and how to check it.
struct ShareMessage {
  uint64_t bytes;
  uint32_t seed;
};

uint32_t patternAt(uint32_t seed, size_t i) { return seed ^ static_cast<uint32_t>(i * 2654435761u); }

//! [child]
// In the child: the descriptor arrives over the socket; imported, it is a handle like one from
// cuMemCreate, mapped and granted here as in step 2. The child checks the parent's data, writes a
// mark into the first word, takes its mapping down and says what it saw.
int childImport(int socket) {
  ShareMessage msg{};
  const int fd = wb::receiveFd(socket, msg);
  if (fd < 0) return std::fprintf(stderr, "no descriptor arrived on socket %d\n", socket), wb::kExitUsage;
  CU_CHECK(cuInit(0));
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxSetCurrent(primary));
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);  // the imported handle holds the memory now
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAddressReserve(&p, msg.bytes, granularity(dev), 0, 0));
  CU_CHECK(cuMemMap(p, msg.bytes, 0, handle, 0));
  CU_CHECK(cuMemRelease(handle));  // the mapping holds it
  const CUmemAccessDesc access = readWrite(dev);
  CU_CHECK(cuMemSetAccess(p, msg.bytes, &access, 1));
  //! [child]
  //! [child-2]
  std::vector<uint32_t> seen(msg.bytes / sizeof(uint32_t));
  CU_CHECK(cuMemcpyDtoH(seen.data(), p, msg.bytes));
  size_t right = 0;
  for (size_t i = 0; i < seen.size(); ++i) right += seen[i] == patternAt(msg.seed, i);
  CU_CHECK(cuMemsetD32(p, kMark, 1));
  CU_CHECK(cuCtxSynchronize());
  CU_CHECK(cuMemUnmap(p, msg.bytes));
  CU_CHECK(cuMemAddressFree(p, msg.bytes));
  CU_CHECK(cuCtxSetCurrent(nullptr));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  std::printf("received descriptor %d, imported and mapped it at %s: %zu of %zu words as the parent "
              "wrote them; wrote 0x%X into the first\n",
              fd, wb::hex(p).c_str(), right, seen.size(), kMark);
  return right == seen.size() ? wb::kExitOk : wb::kExitContradicted;
}
//! [child-2]

//! [share]
// Memory created with a POSIX file descriptor as its shareable handle type, mapped and filled
// here, then exported as a descriptor and sent to a child process over a Unix socket.
void shareWithChild(CUdevice dev, size_t granule) {
  if (attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1) {
    std::printf("skipped: this device cannot export memory as a POSIX file descriptor\n");
    return;
  }
  const size_t size = roundUp(3u << 20, granule);
  const CUmemAllocationProp prop = onDevice(dev, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  Mapped m;
  m.size = size;
  CU_CHECK(cuMemCreate(&m.handle, size, &prop, 0));
  CU_CHECK(cuMemAddressReserve(&m.base, size, granule, 0, 0));
  CU_CHECK(cuMemMap(m.base, size, 0, m.handle, 0));
  const CUmemAccessDesc access = readWrite(dev);
  CU_CHECK(cuMemSetAccess(m.base, size, &access, 1));
  int fd = -1;
  CU_CHECK(cuMemExportToShareableHandle(&fd, m.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_CHECK(cuMemRelease(m.handle));  // the mapping and the descriptor hold the memory
  fcntl(fd, F_SETFD, FD_CLOEXEC);  // the child gets it only through the socket
  const ShareMessage msg{size, 0x5EEDu};
  std::vector<uint32_t> words(size / sizeof(uint32_t));
  for (size_t i = 0; i < words.size(); ++i) words[i] = patternAt(msg.seed, i);
  CU_CHECK(cuMemcpyHtoD(m.base, words.data(), size));
  // From pageable memory the copy may return before the bytes land, and nothing orders another
  // process's reads after this process's work: the host waits for the context before it shares.
  CU_CHECK(cuCtxSynchronize());
  //! [share]
  //! [share-2]
  wb::SocketPair sockets;
  const bool sent = wb::sendFd(sockets.fds[0], fd, msg);  // queued: the child reads it when it starts
  const wb::ProcessEnd end =
      wb::runProcess({wb::selfPath(), "--child", "import", std::to_string(sockets.fds[1])}, {},
                     kChildSeconds, {sockets.fds[1]});  // its end, for it alone
  close(fd);
  std::printf("exported %s as descriptor %d and sent it over a Unix socket: %s\n",
              wb::bytes(size).c_str(), fd, sent ? "sent" : "NOT SENT");
  std::printf("the child: %s%s", end.output.c_str(),
              end.output.empty() || end.output.back() != '\n' ? "\n" : "");
  wb::expect(sent && !end.timedOut && end.signal == 0 && end.code == wb::kExitOk,
             "the child importing the memory and finding the parent's data",
             end.timedOut ? "it hung" : "it ended with code " + std::to_string(end.code));
  CU_CHECK(cuMemcpyDtoH(words.data(), m.base, size));
  size_t kept = 0;
  for (size_t i = 1; i < words.size(); ++i) kept += words[i] == patternAt(msg.seed, i);
  std::printf("back in the parent: the first word is 0x%X, and %zu of %zu others unchanged\n", words[0], kept,
              words.size() - 1);
  wb::expect(words[0] == kMark && kept == words.size() - 1, "the child's write in the parent's memory",
             "other values");
  CU_CHECK(cuMemUnmap(m.base, size));  // the last reference: the memory goes back
  CU_CHECK(cuMemAddressFree(m.base, size));
}
//! [share-2]

int childMain(const std::vector<std::string>& args) {
  if (args.size() == 2 && args[0] == "import") return childImport(std::atoi(args[1].c_str()));
  std::fprintf(stderr, "usage: lesson14-virtual-memory --child import <socket descriptor>\n");
  return wb::kExitUsage;
}

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  wb::FigurePaths paths;
  try {
    if (!args.empty() && args[0] == "--child") return childMain({args.begin() + 1, args.end()});
    if (!wb::parseFigureArgs(argc, argv, paths, "lesson14-figure.csv")) return wb::kExitUsage;
    wb::checkEnvironment({});  // no variable changes what this lesson shows (device choice is noted)
    // The image is checked before the driver starts: a damaged one stops the program in a moment.
    const std::string image = wb::verifiedImagePath("vector_ops.fatbin");
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&library, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUkernel fillKernel = nullptr, scaleKernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&fillKernel, library, "fill"));
    CU_CHECK(cuLibraryGetKernel(&scaleKernel, library, "scale"));
    const Kernels k{reinterpret_cast<CUfunction>(fillKernel), reinterpret_cast<CUfunction>(scaleKernel)};
    // Under compute-sanitizer (WORKBOOK_UNDER_SANITIZER) every call is slowed: times mean nothing there.
    const bool sanitized = wb::underSanitizer();

    wb::step(1, "Support and granularity");
    const size_t granule = supportAndGranularity(dev);
    notAMultiple(dev, granule);
    wb::step(2, "Reserve, create, map, grant access");
    Mapped m = reserveCreateMap(dev, roundUp(64u << 20, granule), granule);
    useIt(k, m);
    wb::step(3, "What each owns: release, unmap, free");
    const CUdeviceptr alias = mapAgain(dev, m, granule);
    teardown(m, alias);
    wb::step(4, "A buffer that grows in place");
    growInPlace(k, dev, granule);
    wb::step(5, "Growing in place against allocating bigger and copying");
    std::vector<GrowthCost> costs;
    if (sanitized)
      std::printf("left out under compute-sanitizer, which slows every call\n");
    else
      costs = growthCost(dev, granule);
    wb::step(6, "One reservation over two devices");
    twoDevices(k, dev, primary);
    wb::step(7, "Sharing memory with another process");
    shareWithChild(dev, granule);

    CU_CHECK(cuLibraryUnload(library));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return tableOf(costs).save(paths.csv, 5);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

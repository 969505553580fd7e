// Lesson 05: device memory, host memory, and moving bytes between them.
//
// What you learn: what cuMemAlloc gives you (alignment, what cuMemGetInfo sees, the range it
// belongs to); pinned host memory from cuMemAllocHost against pageable malloc'd memory; memset
// counts are elements, not bytes; round trips HtoD / DtoD / DtoH checked element by element; what
// the driver knows about a pointer; why a pinned host pointer can stand where a device pointer is
// expected (unified addressing); the errors of a double free and of asking for more than the
// device has; and a measured table of copy bandwidth, pinned against pageable, 4 KiB to 256 MiB,
// against the limit of the PCIe link that NVML reports.
//
// APIs: cuMemAlloc, cuMemFree, cuMemGetInfo, cuMemGetAddressRange, cuMemAllocHost, cuMemFreeHost,
//       cuMemHostGetFlags, cuMemHostGetDevicePointer, cuMemsetD8/D16/D32, cuMemcpyHtoD/DtoH/DtoD,
//       cuPointerGetAttribute, cuEventCreate/Record/Synchronize/ElapsedTime, cuDeviceGetPCIBusId
//       (and NVML's PCIe link queries, through common/nvml.hpp)
// Run:  ctest -R lesson05   (or build/lessons/lesson05-memory [--csv bandwidth.csv])
#include "figure.hpp"
#include "nvml.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

//! [alloc]
// cuMemAlloc returns an address aligned to at least 256 bytes. The allocation's range is exactly the
// size asked for (cuMemGetAddressRange names it from any address inside); cuMemGetInfo counts the
// device pages behind it, at least that much.
void allocation() {
  for (size_t bytes : {size_t{1}, size_t{3}, size_t{1000}, size_t{(1u << 20) + 1}}) {
    CUdeviceptr p = 0;
    CU_CHECK(cuMemAlloc(&p, bytes));
    std::printf("  %8zu bytes at %s: address %% 256 = %llu\n", bytes, wb::hex(p).c_str(),
                static_cast<unsigned long long>(p % 256));
    CU_CHECK(cuMemFree(p));
  }
  size_t freeBefore = 0, freeAfter = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&freeBefore, &total));
  const size_t big = 256u << 20;
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAlloc(&p, big));
  CU_CHECK(cuMemGetInfo(&freeAfter, &total));
  std::printf("  a %s allocation: cuMemGetInfo's free memory fell by %s (of %s)\n", wb::bytes(big).c_str(),
              wb::bytes(freeBefore - freeAfter).c_str(), wb::bytes(total).c_str());
  CUdeviceptr base = 0;
  size_t size = 0;
  CU_CHECK(cuMemGetAddressRange(&base, &size, p + 1000));
  std::printf("  cuMemGetAddressRange(p + 1000) names the whole allocation: base %s, %s\n",
              wb::hex(base).c_str(), wb::bytes(size).c_str());
  CU_CHECK(cuMemFree(p));
}
//! [alloc]

// Pinned host memory comes from the driver; pageable memory from malloc. The driver knows the first
// and not the second. (The reference: cuMemAllocHost memory is page-locked, except that where
// CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES is set it may not be.)
//! [host-memory]
void hostMemory() {
  void* pinned = nullptr;
  CU_CHECK(cuMemAllocHost(&pinned, 1u << 20));
  void* pageable = std::malloc(1u << 20);
  unsigned flags = 0;
  CU_CHECK(cuMemHostGetFlags(&flags, pinned));
  std::printf("  cuMemAllocHost gave %s; cuMemHostGetFlags: 0x%x (portable %s, device-mapped %s)\n",
              wb::hex(pinned).c_str(), flags, flags & CU_MEMHOSTALLOC_PORTABLE ? "yes" : "no",
              flags & CU_MEMHOSTALLOC_DEVICEMAP ? "yes" : "no");
  const CUresult rc = cuMemHostGetFlags(&flags, pageable);
  std::printf("  cuMemHostGetFlags on malloc'd memory: %s: the driver never saw it\n",
              wb::errorName(rc).c_str());
  //! [host-memory]

  //! [host-memory-types]
  // The memory type is asked of the address alone: the driver answers for any address it handed out.
  CUdeviceptr device = 0;
  CU_CHECK(cuMemAlloc(&device, 4096));
  unsigned type = 0;
  CU_CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, device));
  std::printf("  memory type of a cuMemAlloc pointer: %s\n",
              type == CU_MEMORYTYPE_DEVICE ? "device" : "other");
  wb::expect(type == CU_MEMORYTYPE_DEVICE, "cuMemAlloc memory known to the driver as device memory",
             "another type");
  CU_CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 reinterpret_cast<CUdeviceptr>(pinned)));
  std::printf("  memory type of a cuMemAllocHost pointer: %s\n",
              type == CU_MEMORYTYPE_HOST ? "host" : "other");
  wb::expect(type == CU_MEMORYTYPE_HOST, "cuMemAllocHost memory known to the driver as host memory",
             "another type");
  const CUresult pageableRc =
      cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(pageable));
  std::printf("  memory type of a malloc pointer: %s\n", wb::errorName(pageableRc).c_str());
  wb::expect(pageableRc != CUDA_SUCCESS && rc != CUDA_SUCCESS, "malloc'd memory unknown to the driver",
             "the driver answered for it");
  CU_CHECK(cuMemFree(device));
  std::free(pageable);
  CU_CHECK(cuMemFreeHost(pinned));
  //! [host-memory-types]
}

//! [memset]
// cuMemsetD8/D16/D32 take a count of 1-, 2- or 4-byte elements. Fill 64 bytes with 0xFF, then
// set "4" of each size: D8 writes 4 bytes, D16 8, D32 16. The bytes after the count show it.
void memsetCounts() {
  std::printf("cuMemsetD8/D16/D32 with a count of 4, each over 64 bytes of 0xFF:\n");
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAlloc(&p, 64));
  unsigned char bytes[64];
  const auto show = [&](const char* call) {
    CU_CHECK(cuMemcpyDtoH(bytes, p, sizeof bytes));
    const auto written = std::find(bytes, bytes + sizeof bytes, 0xFF) - bytes;
    std::printf("  %-28s wrote %2ld bytes:", call, static_cast<long>(written));
    for (int i = 0; i < 20; ++i) std::printf(" %02x", bytes[i]);
    std::printf(" ...\n");
  };
  CU_CHECK(cuMemsetD8(p, 0xFF, 64));
  CU_CHECK(cuMemsetD8(p, 0x11, 4));
  show("cuMemsetD8(p, 0x11, 4)");
  CU_CHECK(cuMemsetD8(p, 0xFF, 64));
  CU_CHECK(cuMemsetD16(p, 0x2222, 4));
  show("cuMemsetD16(p, 0x2222, 4)");
  CU_CHECK(cuMemsetD8(p, 0xFF, 64));
  CU_CHECK(cuMemsetD32(p, 0x33333333u, 4));
  show("cuMemsetD32(p, 0x33333333, 4)");
  CU_CHECK(cuMemFree(p));
}
//! [memset]

//! [round-trip]
// Random floats to the device, to a second device buffer, and back: compared element by element.
void roundTrip() {
  const size_t n = 1u << 22;
  std::vector<float> source(n), back(n, -1.0f);
  std::mt19937 rng(20261121);
  std::uniform_real_distribution<float> dist(-1e6f, 1e6f);
  for (auto& v : source) v = dist(rng);
  CUdeviceptr a = 0, b = 0;
  CU_CHECK(cuMemAlloc(&a, n * sizeof(float)));
  CU_CHECK(cuMemAlloc(&b, n * sizeof(float)));
  CU_CHECK(cuMemcpyHtoD(a, source.data(), n * sizeof(float)));
  CU_CHECK(cuMemcpyDtoD(b, a, n * sizeof(float)));
  CU_CHECK(cuMemcpyDtoH(back.data(), b, n * sizeof(float)));
  size_t mismatches = 0;
  for (size_t i = 0; i < n; ++i) mismatches += std::memcmp(&source[i], &back[i], sizeof(float)) != 0;
  std::printf("HtoD, DtoD, DtoH round trip of %zu random floats: %zu mismatches\n", n, mismatches);
  wb::expect(mismatches == 0, "an exact round trip", std::to_string(mismatches) + " values changed");
  CU_CHECK(cuMemFree(a));
  CU_CHECK(cuMemFree(b));
}
//! [round-trip]

//! [unified]
// With unified addressing host and device pointers share one address space, so the driver can
// tell from the address alone where memory lives. A pinned host pointer's device address is the
// same number, and it can be passed where a CUdeviceptr is expected. Without unified addressing
// (32-bit, very old GPUs) the two would be different numbers, and this would be an error.
void unifiedAddressing() {
  const size_t n = 1024;
  unsigned* pinned = nullptr;
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&pinned), n * sizeof(unsigned)));
  for (size_t i = 0; i < n; ++i) pinned[i] = static_cast<unsigned>(i * 7);
  CUdeviceptr mapped = 0;
  CU_CHECK(cuMemHostGetDevicePointer(&mapped, pinned, 0));
  std::printf("  pinned host pointer %s, its device pointer %s: %s\n", wb::hex(pinned).c_str(),
              wb::hex(mapped).c_str(),
              mapped == reinterpret_cast<CUdeviceptr>(pinned) ? "the same" : "different");
  wb::expect(mapped == reinterpret_cast<CUdeviceptr>(pinned),
             "one address for host and device (unified addressing)", "the device pointer differs");
  CUdeviceptr device = 0;
  CU_CHECK(cuMemAlloc(&device, n * sizeof(unsigned)));
  CU_CHECK(cuMemcpyDtoD(device, reinterpret_cast<CUdeviceptr>(pinned), n * sizeof(unsigned)));
  std::vector<unsigned> back(n);
  CU_CHECK(cuMemcpyDtoH(back.data(), device, n * sizeof(unsigned)));
  const bool copied = std::equal(back.begin(), back.end(), pinned);
  std::printf("  cuMemcpyDtoD with the host pointer as its source copied %s\n",
              copied ? "every element" : "WRONG data");
  wb::expect(copied, "every element copied from the host pointer", "wrong data");
  CU_CHECK(cuMemFree(device));
  CU_CHECK(cuMemFreeHost(pinned));
}
//! [unified]

//! [errors]
void allocationErrors() {
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAlloc(&p, 4096));
  CU_CHECK(cuMemFree(p));
  // Freed again at once, with nothing allocated in between. Once anything is allocated, the driver
  // may hand the same address out again, and a second cuMemFree would free someone else's memory.
  // The reference does not say what a double free returns: this is what this driver did.
  const CUresult twice = cuMemFree(p);
  std::printf("  cuMemFree of the same pointer twice (nothing allocated between): %s\n",
              wb::errorName(twice).c_str());

  size_t freeBefore = 0, freeAfter = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&freeBefore, &total));
  CUdeviceptr tooBig = 0;
  const CUresult oom = cuMemAlloc(&tooBig, total * 2);
  CU_CHECK(cuMemGetInfo(&freeAfter, &total));
  std::printf("  cuMemAlloc of twice the device's %s: %s; pointer left %s; free memory %s\n",
              wb::bytes(total).c_str(), wb::errorName(oom).c_str(), wb::hex(tooBig).c_str(),
              freeAfter == freeBefore ? "unchanged (nothing leaked)" : "CHANGED");
  wb::expect(oom != CUDA_SUCCESS && freeAfter == freeBefore, "the refused allocation taking nothing",
             wb::errorName(oom) + ", free memory changed by " +
                 std::to_string(static_cast<long long>(freeBefore - freeAfter)) +
                 " bytes (another process on this GPU?)");
}
//! [errors]

struct Sample {
  size_t bytes;
  const char* direction;
  const char* host;
  double medianMs;
  double gbps;
};

//! [time-copy]
// One copy timed with events recorded around it on the default stream; the median of repeats,
// after warm-up copies that take page faults and first-use costs out of the numbers.
double timeCopy(bool toDevice, CUdeviceptr device, void* host, size_t bytes, CUevent start, CUevent stop) {
  constexpr int kWarmup = 2, kRepeats = 7;
  std::vector<float> ms;
  for (int i = 0; i < kWarmup + kRepeats; ++i) {
    CU_CHECK(cuEventRecord(start, nullptr));
    if (toDevice)
      CU_CHECK(cuMemcpyHtoD(device, host, bytes));
    else
      CU_CHECK(cuMemcpyDtoH(host, device, bytes));
    CU_CHECK(cuEventRecord(stop, nullptr));
    CU_CHECK(cuEventSynchronize(stop));
    float elapsed = 0;
    CU_CHECK(cuEventElapsedTime(&elapsed, start, stop));
    if (i >= kWarmup) ms.push_back(elapsed);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
//! [time-copy]

std::vector<Sample> bandwidthTable() {
  const size_t largest = 256u << 20;
  void* pinned = nullptr;
  CU_CHECK(cuMemAllocHost(&pinned, largest));
  std::vector<unsigned char> pageable(largest, 1);  // written once, so its pages exist
  std::memset(pinned, 1, largest);
  CUdeviceptr device = 0;
  CU_CHECK(cuMemAlloc(&device, largest));
  CUevent start = nullptr, stop = nullptr;
  CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));

  //! [bandwidth-table]
  // Every size from 4 KiB to 256 MiB, both directions, pinned and pageable: one row per size.
  std::vector<Sample> samples;
  std::printf("Copy bandwidth, GB/s (median of 7 after 2 warm-ups):\n");
  std::printf("  %10s  %14s %14s  %14s %14s\n", "size", "HtoD pinned", "HtoD pageable", "DtoH pinned",
              "DtoH pageable");
  for (size_t bytes = 4u << 10; bytes <= largest; bytes *= 4) {
    std::printf("  %10s", wb::bytes(bytes).c_str());
    for (bool toDevice : {true, false}) {
      for (bool isPinned : {true, false}) {
        void* host = isPinned ? pinned : static_cast<void*>(pageable.data());
        const double ms = timeCopy(toDevice, device, host, bytes, start, stop);
        const double gbps = static_cast<double>(bytes) / (ms * 1e6);
        samples.push_back({bytes, toDevice ? "HtoD" : "DtoH", isPinned ? "pinned" : "pageable", ms, gbps});
        std::printf(" %14.2f", gbps);
      }
      std::printf(toDevice ? " " : "\n");
    }
  }
  //! [bandwidth-table]
  CU_CHECK(cuEventDestroy(start));
  CU_CHECK(cuEventDestroy(stop));
  CU_CHECK(cuMemFree(device));
  CU_CHECK(cuMemFreeHost(pinned));
  return samples;
}

//! [link-limit]
// The link sets the limit: NVML (opened at run time; it comes with the driver) says which PCIe
// generation and width this device trained to, and the limit is that link's rate after encoding.
// Where NVML cannot say (no NVML, a virtual machine that hides the link), there is no fraction.
std::optional<wb::nvml::PcieLink> hostLink(CUdevice dev) {
  char busId[32] = {0};
  CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, dev));
  std::string why;
  auto link = wb::nvml::pcieLink(busId, why);
  if (link)
    std::printf("The link, as NVML reports it: %s.\n", link->describe().c_str());
  else
    std::printf("NVML did not say what links this device to the host (%s): "
                "no fraction of a limit below.\n", why.c_str());
  return link;
}
//! [link-limit]

void explainBandwidth(const std::vector<Sample>& samples, const std::optional<wb::nvml::PcieLink>& link) {
  const auto at = [&](const char* dir, const char* host) {
    for (auto it = samples.rbegin(); it != samples.rend(); ++it)
      if (std::strcmp(it->direction, dir) == 0 && std::strcmp(it->host, host) == 0) return it->gbps;
    return 0.0;
  };
  std::printf("At 256 MiB pinned memory moves %.1f GB/s to the device and %.1f back; pageable %.1f and %.1f.\n",
              at("HtoD", "pinned"), at("DtoH", "pinned"), at("HtoD", "pageable"), at("DtoH", "pageable"));
  wb::expect(at("HtoD", "pinned") > at("HtoD", "pageable") && at("DtoH", "pinned") > at("DtoH", "pageable"),
             "pinned copies faster than pageable ones at 256 MiB", "a pageable copy was as fast (a busy host?)");
  if (link && link->bytesPerSecond() > 0) {
    const double limit = link->bytesPerSecond() / 1e9;
    std::printf("Pinned, that is %.2f of the link's %.1f GB/s to the device and %.2f back; pageable %.2f and %.2f.\n",
                at("HtoD", "pinned") / limit, limit, at("DtoH", "pinned") / limit, at("HtoD", "pageable") / limit,
                at("DtoH", "pageable") / limit);
    // A copy cannot beat the wire: a fraction above 1 means the link was misread or the timing is wrong.
    wb::expect(at("HtoD", "pinned") <= limit * 1.01 && at("DtoH", "pinned") <= limit * 1.01,
               "pinned copies within the link's limit", "a copy measured faster than the link NVML reported");
  }
  std::printf("These are this host's link and this machine's figures, not the GPU's. Pinned copies are DMA\n"
              "straight from your buffer and approach what the host link carries.\n"
              "Pageable copies first go through a pinned staging buffer of the driver's with a CPU memcpy,\n"
              "so they are bounded by that extra copy. Small copies are bounded by per-call latency instead.\n");
}

wb::FigureTable tableOf(const std::vector<Sample>& samples, const std::optional<wb::nvml::PcieLink>& link) {
  wb::FigureTable table("bytes,direction,host_memory,median_ms,gb_per_s");
  for (const auto& s : samples)
    table.row("%zu,%s,%s,%.6f,%.3f", s.bytes, s.direction, s.host, s.medianMs, s.gbps);
  if (!samples.empty() && link && link->bytesPerSecond() > 0)  // the plot draws it as a line across
    table.row("0,limit,PCIe Gen%u x%u,0,%.3f", link->generation, link->width, link->bytesPerSecond() / 1e9);
  return table;
}

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "bandwidth.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({});  // no variable changes what this lesson shows (device choice and the driver's log are noted)
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    // Memory belongs to a context: this lesson uses the device's primary context, as the runtime would.
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));

    wb::step(1, "Allocating device memory");
    allocation();
    wb::step(2, "Pinned and pageable host memory");
    hostMemory();
    wb::step(3, "memset counts elements");
    memsetCounts();
    wb::step(4, "Round trips");
    roundTrip();
    wb::step(5, "Unified addressing");
    unifiedAddressing();
    wb::step(6, "Errors");
    allocationErrors();
    wb::step(7, "Bandwidth, pinned against pageable");
    const auto link = hostLink(dev);
    const auto samples = bandwidthTable();
    explainBandwidth(samples, link);
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));

    return tableOf(samples, link).save(paths.csv, 7);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

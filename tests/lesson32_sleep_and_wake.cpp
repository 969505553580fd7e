// Lesson 32's claims: after cuMemUnmap and cuMemRelease of a region's memory the device's free memory
// rises by about the region while its reservation stays the region's: memory maps at the same base
// again, a new mapping there has no access until cuMemSetAccess (cuMemUnmap's reference: "all
// mappings start with no accessibility setup"), and the contents saved to pinned memory come back
// whole; an executable graph captured with the region's addresses before the sleep computes the same
// result after the wake, without a new capture; and the program stops in seconds on damaged images.
#include "damaged_images.hpp"
#include "graph_handles.hpp"
#include "support.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// The primary context of device 0, current, and vector_ops' scale, loaded before any capture.
struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
  CUdevice dev = wbt::device(0);
  CUlibrary vec = nullptr;
  CUfunction scale = nullptr;
  bool vmm = false;
  Lab() {
    vmm = wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) != 0;
    CU_CHECK(cuLibraryLoadFromFile(&vec, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    scale = wbt::functionOf(vec, "scale");
  }
  ~Lab() { cuLibraryUnload(vec); }
  bool ready() const {
    if (!vmm) wbt::skipCase("device 0 does not support virtual memory management");
    return vmm;
  }
};

CUmemAllocationProp onDevice(CUdevice dev) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  return prop;
}

bool canReadWrite(CUdevice dev, CUdeviceptr p) {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = dev;
  unsigned long long flags = 0;
  return cuMemGetAccess(&flags, &where, p) == CUDA_SUCCESS && flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

// A reservation with memory mapped behind it while awake; everything given back at the end.
struct Region {
  CUdevice dev;
  CUdeviceptr base = 0;
  size_t size;
  CUmemGenericAllocationHandle handle = 0;
  Region(CUdevice d, size_t bytes) : dev(d), size(bytes) {
    CU_CHECK(cuMemAddressReserve(&base, size, 0, 0, 0));
    map();
    grant();
  }
  ~Region() {
    if (handle) release();
    cuMemAddressFree(base, size);
  }
  void map() {
    const CUmemAllocationProp prop = onDevice(dev);
    CU_CHECK(cuMemCreate(&handle, size, &prop, 0));
    CU_CHECK(cuMemMap(base, size, 0, handle, 0));
  }
  void grant() {
    CUmemAccessDesc access{};
    access.location = onDevice(dev).location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(base, size, &access, 1));
  }
  void release() {
    CU_CHECK(cuMemUnmap(base, size));
    CU_CHECK(cuMemRelease(handle));
    handle = 0;
  }
};

// Pinned host memory of the test's own.
struct Pinned {
  void* p = nullptr;
  explicit Pinned(size_t bytes) { CU_CHECK(cuMemAllocHost(&p, bytes)); }
  ~Pinned() { cuMemFreeHost(p); }
  uint32_t* words() const { return static_cast<uint32_t*>(p); }
};

}  // namespace

TEST_SUITE("sleep-wake") {
  TEST_CASE("unmapped and released, a region's memory goes back to the device with its reservation kept; mapped again at the same base it has no access until cuMemSetAccess, and the saved contents come back whole") {
    Lab lab;
    if (!lab.ready()) return;
    const size_t bytes = 64 * kMiB;
    Region r(lab.dev, bytes);
    Pinned saved(bytes);
    for (size_t i = 0; i < bytes / 4; ++i) saved.words()[i] = wbt::patternAt(17, i);
    CU_CHECK(cuMemcpyHtoD(r.base, saved.p, bytes));
    std::memset(saved.p, 0, bytes);
    CU_CHECK(cuMemcpyDtoH(saved.p, r.base, bytes));  // the sleep's save
    const size_t awake = wbt::freeMemory();
    const CUdeviceptr base = r.base;
    r.release();
    const size_t asleep = wbt::freeMemory();
    INFO("free memory rose by " << (asleep > awake ? asleep - awake : 0) << " bytes for a region of " << bytes);
    CHECK(asleep > awake + bytes / 2);
    r.map();
    CHECK(r.base == base);
    CHECK_FALSE(canReadWrite(lab.dev, r.base));
    r.grant();
    CHECK(canReadWrite(lab.dev, r.base));
    CHECK(canReadWrite(lab.dev, r.base + bytes - 1));
    Pinned back(bytes);
    CU_CHECK(cuMemcpyHtoD(r.base, saved.p, bytes));  // the wake's restore
    CU_CHECK(cuMemcpyDtoH(back.p, r.base, bytes));
    bool same = true;
    for (size_t i = 0; i < bytes / 4 && same; ++i) same = back.words()[i] == wbt::patternAt(17, i);
    CHECK(same);
  }
}

TEST_SUITE("graph-relaunch") {
  TEST_CASE("an executable graph captured with two regions' addresses computes the same result after their memory was released and mapped again, without a new capture") {
    Lab lab;
    if (!lab.ready()) return;
    const size_t bytes = 8 * kMiB;
    const unsigned n = static_cast<unsigned>(bytes / sizeof(float));
    Region weights(lab.dev, bytes), cache(lab.dev, bytes);
    Pinned saved(bytes);
    float* w = static_cast<float*>(saved.p);
    for (unsigned i = 0; i < n; ++i) w[i] = float(i % 512);
    CU_CHECK(cuMemcpyHtoD(weights.base, saved.p, bytes));
    wbt::Stream s;
    wbt::Graph graph;
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_CHECK(cuMemcpyDtoDAsync(cache.base, weights.base, bytes, s.get()));
    CUdeviceptr data = cache.base;
    float factor = 3.0f, offset = 2.0f;
    unsigned count = n;
    void* args[] = {&data, &factor, &offset, &count};
    CU_CHECK(cuLaunchKernel(lab.scale, 64, 1, 1, 256, 1, 1, 0, s.get(), args, nullptr));
    CU_CHECK(cuStreamEndCapture(s.get(), &graph.g));
    wbt::Exec exec(graph.g);
    auto cacheIsRight = [&] {
      std::vector<float> c(n);
      CU_CHECK(cuMemcpyDtoH(c.data(), cache.base, bytes));
      for (unsigned i = 0; i < n; ++i)
        if (c[i] != float(i % 512) * 3.0f + 2.0f) return false;
      return true;
    };
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    REQUIRE(cacheIsRight());
    // Sleep: weights saved (they are already in `saved`), both released; the cache discarded.
    weights.release();
    cache.release();
    // Wake: memory at the same addresses, access again, the weights copied back; the cache is new.
    weights.map();
    weights.grant();
    cache.map();
    cache.grant();
    CU_CHECK(cuMemcpyHtoD(weights.base, saved.p, bytes));
    // Whatever the new memory held, not the old result. In s: a cuMemsetD32 returns before it is done
    // (documented: asynchronous to the host for device memory) and runs in the legacy default stream,
    // which s, a non-blocking stream, does not wait for; the graph would race it (it did, once).
    CU_CHECK(cuMemsetD32Async(cache.base, 0, n, s.get()));
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    CHECK(cacheIsRight());
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}

// Lesson 05's claims about device and host memory, memset and memcpy, and copy bandwidth.
#include "nvml.hpp"
#include "support.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

// The primary context of device 0, current for the test.
struct Primary {
  Primary() : retained(wbt::deviceKeepingPrimary(0)), current(retained.get()) {}
  wbt::RetainedPrimary retained;
  wbt::Pushed current;
};

class PinnedHost {
 public:
  explicit PinnedHost(size_t bytes) { CU_CHECK(cuMemAllocHost(&ptr_, bytes)); }
  ~PinnedHost() { cuMemFreeHost(ptr_); }
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
  void* get() const { return ptr_; }
  CUdeviceptr address() const { return reinterpret_cast<CUdeviceptr>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

std::vector<unsigned char> download(CUdeviceptr p, size_t bytes) {
  std::vector<unsigned char> out(bytes);
  CU_CHECK(cuMemcpyDtoH(out.data(), p, bytes));
  return out;
}

}  // namespace

// cuMemGetInfo is device-wide: the exact equalities below hold only while nothing else allocates on
// the GPU. ctest runs this suite alone (SERIAL_SUITES in lessons/CMakeLists.txt); another process
// using the GPU at the same time can still break them.
TEST_SUITE("allocation") {
  TEST_CASE("cuMemAlloc returns addresses aligned to at least 256 bytes, whatever the size") {
    wbt::initDriver();
    Primary ctx;
    for (size_t bytes : {size_t{1}, size_t{3}, size_t{255}, size_t{257}, size_t{1000}, size_t{(1u << 20) + 1}}) {
      CAPTURE(bytes);
      wbt::DeviceBuffer b(bytes);
      CHECK(b.get() % 256 == 0);
    }
  }

  TEST_CASE("an allocation shows in cuMemGetInfo and cuMemGetAddressRange names it from any address inside") {
    wbt::initDriver();
    Primary ctx;
    const size_t before = wbt::freeMemory();
    const size_t bytes = 256u << 20;
    {
      wbt::DeviceBuffer b(bytes);
      CHECK(before - wbt::freeMemory() >= bytes);
      CUdeviceptr base = 0;
      size_t size = 0;
      CHECK(cuMemGetAddressRange(&base, &size, b.get() + 12345) == CUDA_SUCCESS);
      CHECK(base == b.get());
      CHECK(size == bytes);
    }
    CHECK(wbt::freeMemory() >= before);  // freeing gives it all back (>=: the GPU is shared with whatever just ended)
  }

  TEST_CASE("asking for more than the device has is CUDA_ERROR_OUT_OF_MEMORY and leaks nothing") {
    wbt::initDriver();
    Primary ctx;
    size_t freeBefore = 0, total = 0;
    CU_CHECK(cuMemGetInfo(&freeBefore, &total));
    CUdeviceptr p = 0;
    CHECK(cuMemAlloc(&p, total * 2) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(p == 0);
    CHECK(wbt::freeMemory() >= freeBefore);  // nothing taken (>=: as above)
    wbt::DeviceBuffer stillWorks(1u << 20);  // the context is fine afterwards
    CHECK(stillWorks.get() != 0);
  }
}

// In a child process (see wbt::runInChild): the reference does not say what freeing a pointer twice
// does. Nothing is allocated in between, so the address cannot belong to anyone else yet; once
// something is, a second free could free that. The child exits 10 when the second free failed and
// 11 when it "worked"; it prints what it returned (driver 580: CUDA_ERROR_INVALID_VALUE).
TEST_CASE("child: free the same pointer twice" * doctest::skip(!wbt::inChild())) {
  wbt::initDriver();
  Primary ctx;
  CUdeviceptr p = 0;
  REQUIRE(cuMemAlloc(&p, 4096) == CUDA_SUCCESS);
  REQUIRE(cuMemFree(p) == CUDA_SUCCESS);
  const CUresult twice = cuMemFree(p);
  std::printf("the second cuMemFree returned %s\n", wb::errorName(twice).c_str());
  std::fflush(stdout);
  std::_Exit(twice == CUDA_SUCCESS ? 11 : 10);
}

// Named "unspecified": the sanitize target leaves these suites out, since the child may crash.
TEST_SUITE("unspecified") {
  TEST_CASE("freeing the same pointer twice, nothing allocated in between, does not succeed (or the child dies)") {
    const wbt::ChildEnd end = wbt::runInChild("child: free the same pointer twice");
    MESSAGE("the child " << (end.crashed ? "crashed" : "exited with " + std::to_string(end.code)) << ":\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK((end.crashed || end.code == 10));
  }
}

TEST_SUITE("host-memory") {
  TEST_CASE("the driver knows pinned memory and not malloc'd memory") {
    wbt::initDriver();
    Primary ctx;
    PinnedHost pinned(1u << 20);
    std::vector<unsigned char> pageable(1u << 20);
    unsigned flags = 0xFFFFFFFFu;
    CHECK(cuMemHostGetFlags(&flags, pinned.get()) == CUDA_SUCCESS);
    CHECK((flags & CU_MEMHOSTALLOC_WRITECOMBINED) == 0);  // cuMemAllocHost never asks for write-combining
    CHECK(cuMemHostGetFlags(&flags, pageable.data()) == CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE("cuMemHostAlloc's flags are what cuMemHostGetFlags reads back") {
    wbt::initDriver();
    Primary ctx;
    void* p = nullptr;
    REQUIRE(cuMemHostAlloc(&p, 4096, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS);
    unsigned flags = 0;
    CHECK(cuMemHostGetFlags(&flags, p) == CUDA_SUCCESS);
    CHECK((flags & CU_MEMHOSTALLOC_DEVICEMAP) != 0);
    CHECK((flags & CU_MEMHOSTALLOC_PORTABLE) != 0);
    CHECK(cuMemFreeHost(p) == CUDA_SUCCESS);
  }

  TEST_CASE("cuPointerGetAttribute tells device memory from pinned host memory and does not know malloc'd memory") {
    wbt::initDriver();
    Primary ctx;
    wbt::DeviceBuffer device(4096);
    PinnedHost pinned(4096);
    std::vector<unsigned char> pageable(4096);
    unsigned type = 0;
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, device.get()) == CUDA_SUCCESS);
    CHECK(type == CU_MEMORYTYPE_DEVICE);
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, pinned.address()) == CUDA_SUCCESS);
    CHECK(type == CU_MEMORYTYPE_HOST);
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                reinterpret_cast<CUdeviceptr>(pageable.data())) == CUDA_ERROR_INVALID_VALUE);
  }

  TEST_CASE("with unified addressing a pinned host pointer is its own device pointer and works as one") {
    wbt::initDriver();
    Primary ctx;
    REQUIRE(wbt::attribute(wbt::device(0), CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) == 1);
    const size_t n = 4096;
    PinnedHost pinned(n * sizeof(unsigned));
    auto* values = static_cast<unsigned*>(pinned.get());
    for (size_t i = 0; i < n; ++i) values[i] = static_cast<unsigned>(i * 2654435761u);
    CUdeviceptr mapped = 0;
    CHECK(cuMemHostGetDevicePointer(&mapped, pinned.get(), 0) == CUDA_SUCCESS);
    CHECK(mapped == pinned.address());
    wbt::DeviceBuffer device(n * sizeof(unsigned));
    CHECK(cuMemcpyDtoD(device.get(), pinned.address(), n * sizeof(unsigned)) == CUDA_SUCCESS);
    const auto back = download(device.get(), n * sizeof(unsigned));
    CHECK(std::memcmp(back.data(), values, n * sizeof(unsigned)) == 0);
  }
}

TEST_SUITE("memset-memcpy") {
  TEST_CASE("cuMemsetD8/D16/D32 counts are elements: 4 of them set 4, 8 and 16 bytes") {
    wbt::initDriver();
    Primary ctx;
    wbt::DeviceBuffer b(64);
    struct Case { int elementSize; size_t written; };
    for (Case c : {Case{1, 4}, Case{2, 8}, Case{4, 16}}) {
      CAPTURE(c.elementSize);
      CHECK(cuMemsetD8(b.get(), 0xFF, 64) == CUDA_SUCCESS);
      if (c.elementSize == 1) CHECK(cuMemsetD8(b.get(), 0x11, 4) == CUDA_SUCCESS);
      if (c.elementSize == 2) CHECK(cuMemsetD16(b.get(), 0x1111, 4) == CUDA_SUCCESS);
      if (c.elementSize == 4) CHECK(cuMemsetD32(b.get(), 0x11111111u, 4) == CUDA_SUCCESS);
      const auto bytes = download(b.get(), 64);
      for (size_t i = 0; i < bytes.size(); ++i) {
        CAPTURE(i);
        CHECK(bytes[i] == (i < c.written ? 0x11 : 0xFF));
      }
    }
  }

  TEST_CASE("HtoD, DtoD and DtoH round trips return random data bit for bit") {
    wbt::initDriver();
    Primary ctx;
    std::mt19937 rng(std::random_device{}());
    std::uniform_int_distribution<unsigned> dist;
    for (size_t n : {size_t{1}, size_t{1000}, size_t{(1u << 20) + 3}}) {
      CAPTURE(n);
      std::vector<unsigned> source(n), back(n, 0);
      for (auto& v : source) v = dist(rng);
      wbt::DeviceBuffer a(n * sizeof(unsigned)), b(n * sizeof(unsigned));
      CHECK(cuMemcpyHtoD(a.get(), source.data(), n * sizeof(unsigned)) == CUDA_SUCCESS);
      CHECK(cuMemcpyDtoD(b.get(), a.get(), n * sizeof(unsigned)) == CUDA_SUCCESS);
      CHECK(cuMemcpyDtoH(back.data(), b.get(), n * sizeof(unsigned)) == CUDA_SUCCESS);
      size_t mismatches = 0;
      for (size_t i = 0; i < n; ++i) mismatches += source[i] != back[i];
      CHECK(mismatches == 0);
    }
  }
}

TEST_SUITE("bandwidth") {
  // Median of repeated copies timed with events: pinned memory is DMA'd directly, pageable memory
  // takes an extra CPU copy through a staging buffer. At 64 MiB the gap is several times, so the
  // relation holds on a busy machine too.
  TEST_CASE("pinned host memory copies faster than pageable, in both directions, at 64 MiB") {
    wbt::initDriver();
    Primary ctx;
    const size_t bytes = 64u << 20;
    PinnedHost pinned(bytes);
    std::vector<unsigned char> pageable(bytes, 1);
    std::memset(pinned.get(), 1, bytes);
    wbt::DeviceBuffer device(bytes);
    CUevent start = nullptr, stop = nullptr;
    CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    const auto medianMs = [&](bool toDevice, void* host) {
      std::vector<float> ms;
      for (int i = 0; i < 7; ++i) {
        CU_CHECK(cuEventRecord(start, nullptr));
        if (toDevice)
          CU_CHECK(cuMemcpyHtoD(device.get(), host, bytes));
        else
          CU_CHECK(cuMemcpyDtoH(host, device.get(), bytes));
        CU_CHECK(cuEventRecord(stop, nullptr));
        CU_CHECK(cuEventSynchronize(stop));
        float elapsed = 0;
        CU_CHECK(cuEventElapsedTime(&elapsed, start, stop));
        if (i >= 2) ms.push_back(elapsed);  // the first two warm up
      }
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    // The link NVML reports bounds every copy: none may move bytes faster than the wire carries.
    char busId[32] = {0};
    CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, wbt::device(0)));
    std::string why;
    const auto link = wb::nvml::pcieLink(busId, why);
    if (!link) MESSAGE("no link limit to compare with: " << why);
    for (bool toDevice : {true, false}) {
      CAPTURE(toDevice);
      const float pinnedMs = medianMs(toDevice, pinned.get());
      const float pageableMs = medianMs(toDevice, pageable.data());
      MESSAGE((toDevice ? "HtoD" : "DtoH") << " 64 MiB: pinned " << pinnedMs << " ms, pageable " << pageableMs << " ms");
      CHECK(pinnedMs < pageableMs);
      if (link && link->bytesPerSecond() > 0) {
        const double pinnedBytesPerSecond = bytes / (pinnedMs * 1e-3);
        CAPTURE(link->describe());
        CHECK(pinnedBytesPerSecond <= link->bytesPerSecond() * 1.01);
      }
    }
    cuEventDestroy(start);
    cuEventDestroy(stop);
  }
}

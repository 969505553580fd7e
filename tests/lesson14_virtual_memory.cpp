// Lesson 14's claims: the device supports virtual memory management and reports a granularity;
// cuMemCreate refuses a size that is not a multiple of it; a reservation takes no memory and
// cuMemCreate does; a mapping has no access until cuMemSetAccess; memory goes back only when no
// handle and no mapping is left, one handle mapped at two addresses is one memory; a buffer grown by
// mapping more keeps its base address and its data, and growing it so is faster than allocating
// bigger and copying; one reservation holds two devices' memory, each device granted access on its
// own; memory exported as a POSIX file descriptor and sent over a Unix socket is mapped by a child
// process, which sees the parent's data (skipped where the device cannot export such descriptors).
// What the reference leaves open, and a fault that would poison the process, run in child processes.
#include "channel.hpp"
#include "damaged_images.hpp"
#include "lesson14_virtual_memory.hpp"
#include "support.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using l14::canReadWrite;
using l14::granularity;
using l14::kMark;
using l14::onDevice;
using l14::roundUp;
using l14::ShareMessage;
using wbt::patternAt;

CUmemAccessDesc readWrite(CUdevice dev) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return access;
}

// The primary context of device 0, current, and fill and scale of vector_ops.fatbin as CUkernels.
struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
  CUlibrary library = nullptr;
  CUfunction fill = nullptr, scale = nullptr;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CUkernel f = nullptr, s = nullptr;
    CU_CHECK(cuLibraryGetKernel(&f, library, "fill"));
    CU_CHECK(cuLibraryGetKernel(&s, library, "scale"));
    fill = reinterpret_cast<CUfunction>(f);
    scale = reinterpret_cast<CUfunction>(s);
  }
  ~Lab() { cuLibraryUnload(library); }
  CUdevice dev() const { return primary.device(); }
  void launchFill(CUdeviceptr p, float value, unsigned n) const {
    void* args[] = {&p, &value, &n};
    CU_CHECK(cuLaunchKernel(fill, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  }
  void launchScale(CUdeviceptr p, float factor, float offset, unsigned n) const {
    void* args[] = {&p, &factor, &offset, &n};
    CU_CHECK(cuLaunchKernel(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  }
};

// A range of addresses from cuMemAddressReserve, freed at scope exit. Declare it before the
// mappings in it, so they are unmapped first.
class Reservation {
 public:
  Reservation(size_t size, size_t alignment) : size_(size) { CU_CHECK(cuMemAddressReserve(&p_, size, alignment, 0, 0)); }
  ~Reservation() { cuMemAddressFree(p_, size_); }
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  CUdeviceptr get() const { return p_; }

 private:
  CUdeviceptr p_ = 0;
  size_t size_;
};

// Physical memory from cuMemCreate, released at scope exit unless release() came first.
class Physical {
 public:
  Physical(const CUmemAllocationProp& prop, size_t size) { CU_CHECK(cuMemCreate(&h_, size, &prop, 0)); }
  ~Physical() {
    if (h_) cuMemRelease(h_);
  }
  Physical(const Physical&) = delete;
  Physical& operator=(const Physical&) = delete;
  CUmemGenericAllocationHandle get() const { return h_; }
  CUresult release() {
    const CUresult rc = cuMemRelease(h_);
    h_ = 0;
    return rc;
  }

 private:
  CUmemGenericAllocationHandle h_ = 0;
};

// A mapping of a handle at p, unmapped at scope exit unless unmap() came first.
class Mapping {
 public:
  Mapping(CUdeviceptr p, size_t size, CUmemGenericAllocationHandle h) : p_(p), size_(size) {
    CU_CHECK(cuMemMap(p, size, 0, h, 0));
  }
  ~Mapping() {
    if (p_) cuMemUnmap(p_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  CUresult unmap() {
    const CUresult rc = cuMemUnmap(p_, size_);
    p_ = 0;
    return rc;
  }
  CUresult grant(CUdevice dev) const {
    const CUmemAccessDesc access = readWrite(dev);
    return cuMemSetAccess(p_, size_, &access, 1);
  }

 private:
  CUdeviceptr p_;
  size_t size_;
};

std::vector<float> readBack(CUdeviceptr p, size_t n) {
  std::vector<float> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(float)));
  return v;
}

bool allEqual(const std::vector<float>& v, size_t from, size_t to, float value) {
  return std::all_of(v.begin() + static_cast<long>(from), v.begin() + static_cast<long>(to),
                     [&](float x) { return x == value; });
}

template <class Work>
double medianUs(Work&& setupGrowTeardown) {
  std::vector<double> us;
  for (int i = 0; i < 9; ++i) {
    const double t = setupGrowTeardown();
    if (i >= 2) us.push_back(t);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

TEST_SUITE("support") {
  // Whether the device exports POSIX file descriptors is its configuration, not a claim: the ipc
  // suite skips where it does not, as the program's step 7 does.
  TEST_CASE("device 0 supports virtual memory management and reports a granularity, the recommended one at least the minimum") {
    Lab lab;
    CHECK(wbt::attribute(lab.dev(), CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) == 1);
    MESSAGE("HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: "
            << wbt::attribute(lab.dev(), CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED));
    const size_t minimum = granularity(lab.dev()), recommended = granularity(lab.dev(), CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    MESSAGE("granularity: minimum " << minimum << " B, recommended " << recommended << " B");
    CHECK(minimum > 0);
    CHECK(recommended >= minimum);
  }
}

TEST_SUITE("granularity") {
  TEST_CASE("cuMemCreate refuses a size that is not a multiple of the granularity and accepts it rounded up; cuMemMap refuses an address that is not a multiple") {
    Lab lab;
    const size_t g = granularity(lab.dev());
    const CUmemAllocationProp prop = onDevice(lab.dev());
    CUmemGenericAllocationHandle h = 0;
    const CUresult odd = cuMemCreate(&h, g + 4096, &prop, 0);
    if (odd == CUDA_SUCCESS) cuMemRelease(h);
    MESSAGE("cuMemCreate of the granularity + 4 KiB: " << wb::errorName(odd));
    CHECK(odd != CUDA_SUCCESS);
    Physical two(prop, roundUp(g + 4096, g));  // 2 granules: accepted
    Reservation r(3 * g, g);
    const CUresult misaligned = cuMemMap(r.get() + 4096, g, 0, two.get(), 0);
    if (misaligned == CUDA_SUCCESS) cuMemUnmap(r.get() + 4096, g);
    MESSAGE("cuMemMap at the reservation + 4 KiB: " << wb::errorName(misaligned));
    CHECK(misaligned != CUDA_SUCCESS);
  }
}

TEST_SUITE("lifecycle") {
  TEST_CASE("a reservation takes no device memory, cuMemCreate takes it; a mapping has no access until cuMemSetAccess; then a kernel's values read back") {
    Lab lab;
    const size_t g = granularity(lab.dev()), size = roundUp(64u << 20, g);
    const size_t free0 = wbt::freeMemory();
    Reservation r(size, g);
    const size_t free1 = wbt::freeMemory();
    Physical memory(onDevice(lab.dev()), size);
    const size_t free2 = wbt::freeMemory();
    MESSAGE("free memory: " << free0 << " B, after the reservation " << free1 << " B, after cuMemCreate " << free2 << " B");
    CHECK(free1 + size / 2 > free0);
    CHECK(free2 + size / 2 <= free1);
    Mapping mapped(r.get(), size, memory.get());
    CHECK_FALSE(canReadWrite(lab.dev(), r.get()));
    CHECK(mapped.grant(lab.dev()) == CUDA_SUCCESS);
    CHECK(canReadWrite(lab.dev(), r.get()));
    const unsigned n = static_cast<unsigned>(size / sizeof(float));
    lab.launchFill(r.get(), 1.5f, n);
    CU_CHECK(cuCtxSynchronize());
    CHECK(allEqual(readBack(r.get(), n), 0, n, 1.5f));
  }
}

TEST_SUITE("ownership") {
  TEST_CASE("released, the handle's memory stays while a mapping is left, even one of two; the last unmap gives it back") {
    Lab lab;
    const size_t g = granularity(lab.dev()), size = roundUp(64u << 20, g);
    Reservation first(size, g), second(size, g);
    Physical memory(onDevice(lab.dev()), size);
    Mapping one(first.get(), size, memory.get()), two(second.get(), size, memory.get());
    REQUIRE(one.grant(lab.dev()) == CUDA_SUCCESS);
    REQUIRE(two.grant(lab.dev()) == CUDA_SUCCESS);
    const unsigned n = static_cast<unsigned>(size / sizeof(float));
    lab.launchFill(first.get(), 2.5f, n);
    CU_CHECK(cuCtxSynchronize());
    CHECK(allEqual(readBack(second.get(), n), 0, n, 2.5f));  // one memory behind two addresses
    const size_t free0 = wbt::freeMemory();
    CHECK(memory.release() == CUDA_SUCCESS);
    const size_t free1 = wbt::freeMemory();
    CHECK(readBack(first.get(), 1)[0] == 2.5f);
    CHECK(one.unmap() == CUDA_SUCCESS);
    const size_t free2 = wbt::freeMemory();
    CHECK(readBack(second.get(), 1)[0] == 2.5f);
    CHECK(two.unmap() == CUDA_SUCCESS);
    const size_t free3 = wbt::freeMemory();
    MESSAGE("free memory: " << free0 << " B, after cuMemRelease " << free1 << " B, after one unmap " << free2
                            << " B, after both " << free3 << " B");
    CHECK(free1 < free0 + size / 2);
    CHECK(free2 < free1 + size / 2);
    CHECK(free3 >= free2 + size / 2);
  }
}

TEST_SUITE("grow-in-place") {
  TEST_CASE("grown by mapping more behind its reservation, a buffer keeps its base address and its data, and takes only what is mapped") {
    Lab lab;
    const size_t g = granularity(lab.dev()), capacity = roundUp(1u << 30, g);
    const size_t first = roundUp(8u << 20, g), total = roundUp(40u << 20, g);
    const size_t free0 = wbt::freeMemory();
    Reservation r(capacity, g);
    Physical a(onDevice(lab.dev()), first);
    Mapping mapA(r.get(), first, a.get());
    REQUIRE(mapA.grant(lab.dev()) == CUDA_SUCCESS);
    const unsigned n1 = static_cast<unsigned>(first / sizeof(float)), n = static_cast<unsigned>(total / sizeof(float));
    lab.launchFill(r.get(), 1.0f, n1);
    Physical b(onDevice(lab.dev()), total - first);
    Mapping mapB(r.get() + first, total - first, b.get());
    REQUIRE(mapB.grant(lab.dev()) == CUDA_SUCCESS);
    lab.launchFill(r.get() + first, 5.0f, n - n1);
    lab.launchScale(r.get(), 2.0f, 1.0f, n);  // one kernel over both pieces, from the same base
    CU_CHECK(cuCtxSynchronize());
    const std::vector<float> v = readBack(r.get(), n);
    CHECK(allEqual(v, 0, n1, 3.0f));
    CHECK(allEqual(v, n1, n, 11.0f));
    const size_t freeNow = wbt::freeMemory(), held = free0 > freeNow ? free0 - freeNow : 0;
    MESSAGE("mapped " << total << " B of a " << capacity << " B reservation: free memory fell by " << held << " B");
    CHECK(held < capacity / 2);
    CHECK(held + total / 2 >= total);
  }
}

TEST_SUITE("growth-cost") {
  TEST_CASE("from 512 MiB to 1 GiB, mapping more behind the reservation is faster than cuMemAlloc of 1 GiB, a copy and a free") {
    Lab lab;
    const CUdevice dev = lab.dev();
    const size_t g = granularity(dev), bytes = roundUp(1u << 30, 2 * g), half = bytes / 2;
    const double mapped = medianUs([&] {
      Reservation r(bytes, g);
      Physical a(onDevice(dev), half);
      Mapping first(r.get(), half, a.get());
      REQUIRE(first.grant(dev) == CUDA_SUCCESS);
      const wb::Stopwatch clock;
      Physical b(onDevice(dev), half);
      Mapping second(r.get() + half, half, b.get());
      b.release();
      REQUIRE(second.grant(dev) == CUDA_SUCCESS);
      return clock.ms() * 1000.0;
    });
    const double copied = medianUs([&] {
      CUdeviceptr old = 0, bigger = 0;
      CU_CHECK(cuMemAlloc(&old, half));
      const wb::Stopwatch clock;
      CUresult rc = cuMemAlloc(&bigger, bytes);
      if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoD(bigger, old, half);
      if (rc == CUDA_SUCCESS) rc = cuCtxSynchronize();
      const CUresult freed = cuMemFree(old);
      const double us = clock.ms() * 1000.0;
      if (bigger) cuMemFree(bigger);  // given back before a failure is reported
      CU_CHECK(rc);
      CU_CHECK(freed);
      return us;
    });
    MESSAGE("map more " << mapped << " us, cuMemAlloc + copy " << copied << " us");
    CHECK(mapped < copied);
  }
}

TEST_SUITE("multi-device") {
  TEST_CASE("one reservation holds device 0's and device 1's memory; device 1 has no access until granted; then kernels on both devices use all of it") {
    Lab lab;
    const int count = wbt::initDriver();
    REQUIRE(count >= 2);
    const CUdevice dev0 = lab.dev(), dev1 = wbt::device(1);
    int can01 = 0, can10 = 0;
    CU_CHECK(cuDeviceCanAccessPeer(&can01, dev0, dev1));
    CU_CHECK(cuDeviceCanAccessPeer(&can10, dev1, dev0));
    if (can01 != 1 || can10 != 1)
      return wbt::skipCase("devices 0 and 1 cannot access each other's memory (cuDeviceCanAccessPeer 0)");
    const size_t g = std::max(granularity(dev0), granularity(dev1)), half = roundUp(16u << 20, g), size = 2 * half;
    Reservation r(size, g);
    Physical on0(onDevice(dev0), half), on1(onDevice(dev1), half);
    Mapping m0(r.get(), half, on0.get()), m1(r.get() + half, half, on1.get());
    const CUmemAccessDesc first = readWrite(dev0);
    const CUmemAccessDesc both[] = {readWrite(dev0), readWrite(dev1)};
    REQUIRE(cuMemSetAccess(r.get(), size, &first, 1) == CUDA_SUCCESS);
    CHECK(canReadWrite(dev0, r.get() + half));
    CHECK_FALSE(canReadWrite(dev1, r.get()));
    REQUIRE(cuMemSetAccess(r.get(), size, both, 2) == CUDA_SUCCESS);
    CHECK(canReadWrite(dev1, r.get()));
    for (int i = 0; i < 2; ++i) {  // where each half lives
      CAPTURE(i);
      CUmemGenericAllocationHandle h = 0;
      REQUIRE(cuMemRetainAllocationHandle(&h, reinterpret_cast<void*>(static_cast<uintptr_t>(r.get() + i * half))) ==
              CUDA_SUCCESS);
      CHECK(h == (i == 0 ? on0.get() : on1.get()));
      CUmemAllocationProp prop{};
      CHECK(cuMemGetAllocationPropertiesFromHandle(&prop, h) == CUDA_SUCCESS);
      CHECK(prop.location.id == (i == 0 ? dev0 : dev1));
      CHECK(cuMemRelease(h) == CUDA_SUCCESS);
    }
    const unsigned n = static_cast<unsigned>(size / sizeof(float));
    lab.launchFill(r.get(), 1.0f, n);
    CU_CHECK(cuCtxSynchronize());
    {
      wbt::RetainedPrimary primary1(dev1);
      wbt::Pushed current(primary1.get());
      lab.launchScale(r.get(), 2.0f, 1.0f, n);
      CU_CHECK(cuCtxSynchronize());
    }
    CHECK(allEqual(readBack(r.get(), n), 0, n, 3.0f));
  }
}

// In a child process: receives a descriptor over the socket named by WORKBOOK_SHARE_SOCKET, imports
// and maps it, checks the parent's pattern and writes kMark into the first word. Exits 10 when the
// data was the parent's, 11 when it was not.
TEST_CASE("child: import what the parent sent" * doctest::skip(!wbt::inChild())) {
  const char* socket = std::getenv("WORKBOOK_SHARE_SOCKET");
  REQUIRE(socket != nullptr);
  ShareMessage msg{};
  FileDescriptor received{wb::receiveFd(std::atoi(socket), msg)};
  REQUIRE(received.fd >= 0);
  bool same = false;
  {
    Lab lab;
    CUmemGenericAllocationHandle h = 0;
    REQUIRE(cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<uintptr_t>(received.fd)),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == CUDA_SUCCESS);
    Reservation r(msg.bytes, granularity(lab.dev()));
    Mapping m(r.get(), msg.bytes, h);
    CHECK(cuMemRelease(h) == CUDA_SUCCESS);
    REQUIRE(m.grant(lab.dev()) == CUDA_SUCCESS);
    std::vector<uint32_t> words(msg.bytes / sizeof(uint32_t));
    CU_CHECK(cuMemcpyDtoH(words.data(), r.get(), msg.bytes));
    same = true;
    for (size_t i = 0; i < words.size(); ++i) same = same && words[i] == patternAt(msg.seed, i);
    wbt::setWords(r.get(), kMark, 1);
  }
  std::_Exit(same ? 10 : 11);
}

TEST_SUITE("ipc") {
  TEST_CASE("memory exported as a POSIX file descriptor and sent over a Unix socket is mapped by a child process, which sees the parent's data; the child's write is seen by the parent") {
    Lab lab;
    if (wbt::attribute(lab.dev(), CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1)
      return wbt::skipCase("this device cannot export memory as a POSIX file descriptor "
                           "(HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED 0)");
    const size_t g = granularity(lab.dev()), size = roundUp(3u << 20, g);
    Reservation r(size, g);
    Physical memory(onDevice(lab.dev(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), size);
    Mapping m(r.get(), size, memory.get());
    REQUIRE(m.grant(lab.dev()) == CUDA_SUCCESS);
    FileDescriptor exported;
    REQUIRE(cuMemExportToShareableHandle(&exported.fd, memory.get(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) ==
            CUDA_SUCCESS);
    fcntl(exported.fd, F_SETFD, FD_CLOEXEC);  // the child gets it through the socket only
    const ShareMessage msg{size, 0xC0DEu};
    std::vector<uint32_t> words(size / sizeof(uint32_t));
    for (size_t i = 0; i < words.size(); ++i) words[i] = patternAt(msg.seed, i);
    CU_CHECK(cuMemcpyHtoD(r.get(), words.data(), size));
    CU_CHECK(cuCtxSynchronize());  // from pageable memory: landed before the child, another process, reads it
    wb::SocketPair sockets;
    REQUIRE(wb::sendFd(sockets.fds[0], exported.fd, msg));
    const wb::ProcessEnd end = wb::runProcess(
        {wb::selfPath(), "--test-case=child: import what the parent sent", "--no-version"},
        {"WORKBOOK_CHILD=1", "WORKBOOK_SHARE_SOCKET=" + std::to_string(sockets.fds[1])}, 60, {sockets.fds[1]});
    MESSAGE("the child: signal " << end.signal << ", exit code " << end.code << "\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK(end.signal == 0);
    CHECK(end.code == 10);
    CU_CHECK(cuMemcpyDtoH(words.data(), r.get(), size));
    CHECK(words[0] == kMark);
    bool rest = true;
    for (size_t i = 1; i < words.size(); ++i) rest = rest && words[i] == patternAt(msg.seed, i);
    CHECK(rest);
  }
}

// In a child process: a kernel writes a mapped range that no cuMemSetAccess opened. The reference
// says cuMemMap "does not make the address accessible", and the programming guide (Access Rights)
// that such an access "would result in a program crash": a fault, which is sticky and would poison
// this process (lesson 10), hence the child. Which error, or whether the process dies, the guide does
// not say: exit 10 when cuCtxSynchronize returned an error, 11 when it succeeded.
TEST_CASE("child: a kernel writes a mapped range before cuMemSetAccess" * doctest::skip(!wbt::inChild())) {
  Lab lab;
  const size_t g = granularity(lab.dev());
  Reservation r(g, g);
  Physical memory(onDevice(lab.dev()), g);
  Mapping m(r.get(), g, memory.get());
  lab.launchFill(r.get(), 1.0f, static_cast<unsigned>(g / sizeof(float)));
  std::_Exit(cuCtxSynchronize() == CUDA_SUCCESS ? 11 : 10);
}

// In a child process: cuMemUnmap of half of one mapping. The reference says cuMemUnmap "cannot
// unmap a sub-range"; the child exits 10 when it was refused, 11 when it returned success.
TEST_CASE("child: unmap half of a mapping" * doctest::skip(!wbt::inChild())) {
  Lab lab;
  const size_t g = granularity(lab.dev());
  Reservation r(2 * g, g);
  Physical memory(onDevice(lab.dev()), 2 * g);
  Mapping m(r.get(), 2 * g, memory.get());
  std::_Exit(cuMemUnmap(r.get(), g) == CUDA_SUCCESS ? 11 : 10);
}

// Named "unspecified" (the sanitize target leaves suites of that name out, since a child may crash):
// how each call fails is not specified, only that it does not succeed.
TEST_SUITE("unspecified") {
  TEST_CASE("a kernel writing a mapped range before cuMemSetAccess does not succeed: the synchronize fails or the child dies") {
    const wbt::ChildEnd end = wbt::runInChild("child: a kernel writes a mapped range before cuMemSetAccess");
    MESSAGE("the child " << (end.crashed ? "crashed" : "exited with " + std::to_string(end.code)) << ":\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK((end.crashed || end.code == 10));
    CHECK(end.code != 11);
  }
  TEST_CASE("cuMemUnmap of half of a mapping does not succeed: it is refused or the child dies") {
    const wbt::ChildEnd end = wbt::runInChild("child: unmap half of a mapping");
    MESSAGE("the child " << (end.crashed ? "crashed" : "exited with " + std::to_string(end.code)) << ":\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK((end.crashed || end.code == 10));
    CHECK(end.code != 11);
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}

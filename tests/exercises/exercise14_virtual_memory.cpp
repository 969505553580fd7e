// The checks of lesson 14's exercises (lessons/14-virtual-memory/exercises.cpp). The device's free
// memory is read before and after each, so these checks run with the GPU to themselves.
#include "check.hpp"
#include "channel.hpp"
#include "lesson14_virtual_memory.hpp"
#include "14-virtual-memory/exercises.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
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

// The primary context of device 0, current.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUdevice dev() const { return primary.device(); }
};

// What allocate() handed out, unmapped and freed here at scope exit, as the task says the caller does.
struct Allocations {
  std::vector<ex14::Allocation> all;
  ~Allocations() {
    for (const ex14::Allocation& a : all) {
      cuMemUnmap(a.ptr, a.size);
      cuMemAddressFree(a.ptr, a.size);
    }
  }
};

// Memory of the check's own, created for sharing, mapped here and exported as a descriptor; all of
// it given back at scope exit.
class Exported {
 public:
  Exported(CUdevice dev, size_t size) : size_(size) {
    const CUmemAllocationProp prop = onDevice(dev, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CU_CHECK(cuMemCreate(&handle_, size, &prop, 0));
    CU_CHECK(cuMemAddressReserve(&ptr_, size, granularity(dev), 0, 0));
    CU_CHECK(cuMemMap(ptr_, size, 0, handle_, 0));
    mapped_ = true;
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(ptr_, size, &access, 1));
    CU_CHECK(cuMemExportToShareableHandle(&fd_, handle_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    fcntl(fd_, F_SETFD, FD_CLOEXEC);  // the child gets it through the socket only
  }
  ~Exported() {
    if (fd_ >= 0) close(fd_);
    if (mapped_) cuMemUnmap(ptr_, size_);
    if (ptr_) cuMemAddressFree(ptr_, size_);
    if (handle_) cuMemRelease(handle_);
  }
  Exported(const Exported&) = delete;
  Exported& operator=(const Exported&) = delete;
  CUdeviceptr ptr() const { return ptr_; }
  int fd() const { return fd_; }

 private:
  size_t size_;
  CUmemGenericAllocationHandle handle_ = 0;
  CUdeviceptr ptr_ = 0;
  bool mapped_ = false;
  int fd_ = -1;
};

}  // namespace

EXERCISE("growable-buffer", "A growable device buffer whose base address never changes",
         "Constructor: cuMemGetAllocationGranularity (CU_MEM_ALLOC_GRANULARITY_MINIMUM), then cuMemAddressReserve "
         "of the capacity rounded up. grow: cuMemCreate the difference, cuMemMap it at base + size(), cuMemRelease "
         "the handle, cuMemSetAccess the new piece. Never cuMemAlloc a bigger buffer and copy: that moves the "
         "base. Destructor: cuMemUnmap each piece as it was mapped, then cuMemAddressFree.") {
  TEST_CASE("grown three times, the buffer keeps its base address and its data, maps whole granules, refuses to pass its capacity, and gives all its memory back") {
    Lab lab;
    const size_t g = granularity(lab.dev()), capacity = size_t{1} << 30;
    const size_t freeBefore = wbt::freeMemory();
    {
      ex14::GrowableBuffer buf(lab.dev(), capacity);
      const CUdeviceptr base = buf.data();
      CHECK(buf.size() == 0);
      std::vector<uint32_t> written;  // what the check wrote from the base on, word by word
      for (size_t bytes : {size_t{1} << 20, 3 * g + 1, size_t{100} << 20}) {
        CAPTURE(bytes);
        buf.grow(bytes);
        CHECK_MESSAGE(buf.data() == base, "the base address changed: grow must map more behind the same reservation");
        CHECK(buf.size() == roundUp(bytes, g));
        if (!written.empty()) {
          std::vector<uint32_t> back(written.size());
          CU_CHECK(cuMemcpyDtoH(back.data(), buf.data(), back.size() * sizeof(uint32_t)));
          CHECK_MESSAGE(back == written, "the contents did not survive the growth");
        }
        const size_t from = written.size();
        if (buf.size() / sizeof(uint32_t) <= from) continue;
        for (size_t i = from; i < buf.size() / sizeof(uint32_t); ++i) written.push_back(patternAt(1, i));
        CHECK(cuMemcpyHtoD(buf.data() + from * sizeof(uint32_t), written.data() + from,
                           (written.size() - from) * sizeof(uint32_t)) == CUDA_SUCCESS);
      }
      const size_t mapped = buf.size();
      buf.grow(g);
      CHECK(buf.size() == mapped);
      CHECK_THROWS_AS(buf.grow(capacity + 1), std::length_error);
      CHECK(buf.size() == mapped);
      CHECK(buf.data() == base);
      std::vector<uint32_t> back(written.size());
      CU_CHECK(cuMemcpyDtoH(back.data(), buf.data(), back.size() * sizeof(uint32_t)));
      CHECK(back == written);
      const size_t freeNow = wbt::freeMemory(), held = freeBefore > freeNow ? freeBefore - freeNow : 0;
      CAPTURE(held);
      CHECK_MESSAGE(held < mapped + (size_t{64} << 20), "the buffer took far more memory than it mapped");
    }
    const size_t freeAfter = wbt::freeMemory();
    CAPTURE(freeBefore);
    CAPTURE(freeAfter);
    CHECK_MESSAGE(freeAfter + (size_t{16} << 20) >= freeBefore, "memory was left behind after destruction");
  }
}

EXERCISE("granular-alloc", "A cuMemAlloc replacement that maps whole granules and no more",
         "g from cuMemGetAllocationGranularity with CU_MEM_ALLOC_GRANULARITY_MINIMUM; size = (bytes + g - 1) / g * g, "
         "which adds no granule to a size that is a multiple already. cuMemAddressReserve(&ptr, size, g, 0, 0), "
         "cuMemCreate, cuMemMap, cuMemRelease (the mapping keeps the memory), cuMemSetAccess for dev.") {
  TEST_CASE("each size is the request rounded up to the granularity, mapped read-write at a multiple of it, writable throughout, and unmapping gives the memory back") {
    Lab lab;
    const size_t g = granularity(lab.dev());
    const size_t requests[] = {1, g - 1, g, g + 1, 3 * g, (size_t{64} << 20) + 1};
    const size_t freeBefore = wbt::freeMemory();
    {
      Allocations taken;
      for (size_t bytes : requests) {
        CAPTURE(bytes);
        taken.all.push_back(ex14::allocate(lab.dev(), bytes));
        const ex14::Allocation a = taken.all.back();
        CHECK_MESSAGE(a.size == roundUp(bytes, g), "not the request rounded up to the granularity");
        CHECK(a.ptr % g == 0);
        const bool rw = canReadWrite(lab.dev(), a.ptr);
        CHECK_MESSAGE(rw, "cuMemGetAccess does not say read-write for dev");
        if (!rw || a.size == 0) continue;  // touching memory without access would fault
        CHECK(cuMemsetD8(a.ptr, 0xA5, a.size) == CUDA_SUCCESS);
        CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
        unsigned char last = 0;
        CHECK(cuMemcpyDtoH(&last, a.ptr + a.size - 1, 1) == CUDA_SUCCESS);
        CHECK(last == 0xA5);
      }
    }
    const size_t freeAfter = wbt::freeMemory();
    CAPTURE(freeBefore);
    CAPTURE(freeAfter);
    CHECK_MESSAGE(freeAfter + (size_t{16} << 20) >= freeBefore,
                  "cuMemUnmap did not give the memory back: was the handle released after mapping?");
  }
}

EXERCISE("share-handle", "Mapping memory another process exported as a file descriptor",
         "cuMemImportFromShareableHandle(&handle, (void*)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR); "
         "then as for your own memory: cuMemAddressReserve, cuMemMap, cuMemRelease of the imported handle, and "
         "cuMemSetAccess. The exporter's access does not carry over: a new mapping starts with none.") {
  // In the child: the descriptor arrives on the socket WORKBOOK_SHARE_SOCKET names; the learner's
  // mapShared maps it; the child checks access and data, writes the mark, and takes its mapping down.
  TEST_CASE("child: mapShared in the receiving process" * doctest::skip(!wbt::inChild())) {
    const char* socket = std::getenv("WORKBOOK_SHARE_SOCKET");
    REQUIRE(socket != nullptr);
    ShareMessage msg{};
    const int fd = wb::receiveFd(std::atoi(socket), msg);
    REQUIRE(fd >= 0);
    Lab lab;
    const CUdeviceptr p = ex14::mapShared(fd, msg.bytes, lab.dev());
    close(fd);
    const bool rw = canReadWrite(lab.dev(), p);
    CHECK_MESSAGE(rw, "cuMemGetAccess does not say read-write: the importer must grant access itself");
    if (rw) {
      std::vector<uint32_t> words(msg.bytes / sizeof(uint32_t));
      CHECK(cuMemcpyDtoH(words.data(), p, msg.bytes) == CUDA_SUCCESS);
      size_t wrong = 0;
      for (size_t i = 0; i < words.size(); ++i) wrong += words[i] != patternAt(msg.seed, i);
      CHECK_MESSAGE(wrong == 0, "the child did not read what the parent wrote");
      CHECK(cuMemsetD32(p, kMark, 1) == CUDA_SUCCESS);
      CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
    }
    CHECK(cuMemUnmap(p, msg.bytes) == CUDA_SUCCESS);
    CHECK(cuMemAddressFree(p, msg.bytes) == CUDA_SUCCESS);
  }

  TEST_CASE("a child process maps what this process exported, reads its data and writes into it") {
    Lab lab;
    if (wbt::attribute(lab.dev(), CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1)
      throw wbx::Skipped("device 0 cannot export memory as a POSIX file descriptor");
    const size_t size = roundUp(3u << 20, granularity(lab.dev()));
    Exported memory(lab.dev(), size);
    const ShareMessage msg{size, 0xBEEFu};
    std::vector<uint32_t> words(size / sizeof(uint32_t));
    for (size_t i = 0; i < words.size(); ++i) words[i] = patternAt(msg.seed, i);
    CU_CHECK(cuMemcpyHtoD(memory.ptr(), words.data(), size));
    wb::SocketPair sockets;
    if (!wb::sendFd(sockets.fds[0], memory.fd(), msg)) throw std::runtime_error("sendmsg failed");
    const wb::ProcessEnd end = wb::runProcess(
        {wb::selfPath(), "--test-case=child: mapShared in the receiving process", "--no-version"},
        {"WORKBOOK_CHILD=1", "WORKBOOK_EXERCISE_RESULTS", "WORKBOOK_SHARE_SOCKET=" + std::to_string(sockets.fds[1])},
        60, {sockets.fds[1]});
    const size_t notDone = end.output.find("NOT DONE: ");
    if (notDone != std::string::npos) {  // the child reached a starting body: so is this check
      const size_t from = notDone + 10;
      throw wb::NotDone(end.output.substr(from, end.output.find(' ', from) - from));
    }
    const std::string output = end.output;
    CAPTURE(output);
    CHECK_FALSE(end.timedOut);
    CHECK(end.signal == 0);
    CHECK_MESSAGE(end.code == 0, "the child's checks failed (its output is above)");
    uint32_t first = 0;
    CU_CHECK(cuMemcpyDtoH(&first, memory.ptr(), sizeof first));
    CHECK_MESSAGE(first == kMark, "the child's write did not arrive in the parent's memory");
  }
}

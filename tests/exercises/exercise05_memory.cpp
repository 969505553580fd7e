// The checks of lesson 05's exercises (lessons/05-memory/exercises.cpp). Pending copies come from
// the gate kernel of lesson 09: nothing sleeps, and every gate gives up at its deadline.
#include "check.hpp"
#include "gate.hpp"
#include "05-memory/exercises.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

// The primary context of device 0, current for the test.
struct Primary {
  wbt::RetainedPrimary retained{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{retained.get()};
};

// The primary context, current, and the kernels of streams.fatbin (the gate) loaded into it.
struct Lab : Primary {
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);
  }
  ~Lab() { cuLibraryUnload(library); }
};

using wbt::Stream;

std::vector<unsigned> pattern(size_t n, unsigned seed) {
  std::vector<unsigned> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned>(i * 2654435761u) ^ (seed * 0x9E3779B9u);
  return v;
}

template <typename T>
std::vector<T> download(CUdeviceptr p, size_t n) {
  std::vector<T> out(n);
  CU_CHECK(cuMemcpyDtoH(out.data(), p, n * sizeof(T)));
  return out;
}

const void* address(CUdeviceptr p) { return reinterpret_cast<const void*>(p); }

// Host memory from cuMemAllocHost (flags 0) or cuMemHostAlloc (other flags), freed at scope exit.
class PinnedHost {
 public:
  explicit PinnedHost(size_t bytes, unsigned flags = 0) {
    if (flags)
      CU_CHECK(cuMemHostAlloc(&p_, bytes, flags));
    else
      CU_CHECK(cuMemAllocHost(&p_, bytes));
  }
  ~PinnedHost() { cuMemFreeHost(p_); }
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
  unsigned char* get() const { return static_cast<unsigned char*>(p_); }

 private:
  void* p_ = nullptr;
};

// Whole pages of malloc'd memory, and whether they are registered with cuMemHostRegister now.
class Pages {
 public:
  explicit Pages(size_t bytes) : bytes_(bytes), p_(static_cast<unsigned char*>(std::aligned_alloc(4096, bytes))) {
    REQUIRE(p_ != nullptr);
  }
  ~Pages() {
    unregister();
    std::free(p_);
  }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  unsigned char* get() const { return p_; }
  void registerPinned() {
    CU_CHECK(cuMemHostRegister(p_, bytes_, 0));
    registered_ = true;
  }
  void unregister() {
    if (registered_) cuMemHostUnregister(p_);
    registered_ = false;
  }

 private:
  size_t bytes_;
  unsigned char* p_;
  bool registered_ = false;
};

// A buffer in a context of the check's own (current while it is made), freed in it at scope exit.
class OtherContextBuffer {
 public:
  OtherContextBuffer() : ctx_(wbt::device(0)) {
    CU_CHECK(cuMemAlloc(&p_, 4096));
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));  // whatever was current before is current again
  }
  ~OtherContextBuffer() {
    wbt::Pushed in(ctx_.get());
    cuMemFree(p_);
  }
  OtherContextBuffer(const OtherContextBuffer&) = delete;
  OtherContextBuffer& operator=(const OtherContextBuffer&) = delete;
  CUdeviceptr get() const { return p_; }

 private:
  wbt::OwnedContext ctx_;
  CUdeviceptr p_ = 0;
};

}  // namespace

EXERCISE("staging-copy", "A pinned staging copy that returns before the copy has run",
         "memcpy the source into a cuMemAllocHost buffer, cuMemcpyHtoDAsync from that buffer, then cuEventRecord "
         "the buffer's event in the stream. Before using a buffer, cuEventQuery its event: CUDA_ERROR_NOT_READY "
         "means its copy has not read it yet, so take another (never synchronise); an event never recorded is "
         "CUDA_SUCCESS. Being large enough does not make a buffer free.") {
  // Both staging buffers are made before the gate closes: nothing the uploads do while it is closed
  // has to allocate pinned memory.
  TEST_CASE("two uploads return while the stream is held, and each destination gets the batch its source held at the call") {
    Lab lab;
    const size_t n = (8u << 20) / sizeof(unsigned), bytes = n * sizeof(unsigned);
    const std::vector<unsigned> first = pattern(n, 1), second = pattern(n, 2);
    std::vector<unsigned> source = first;  // the loader's one buffer, refilled as soon as upload returns
    wbt::DeviceBuffer dstFirst(bytes), dstSecond(bytes);
    CU_CHECK(cuMemsetD8(dstFirst.get(), 0, bytes));
    CU_CHECK(cuMemsetD8(dstSecond.get(), 0, bytes));
    Stream s;
    ex05::StagingUploader uploader;  // declared before the gate: destroyed once the gate is open
    uploader.reserve(2, bytes);
    const size_t reserved = uploader.stagingBuffers();
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, s.get(), 2.0);  // an upload that waits for the stream waits 2 s at most
      uploader.upload(dstFirst.get(), source.data(), bytes, s.get());
      source = second;
      uploader.upload(dstSecond.get(), source.data(), bytes, s.get());
      std::fill(source.begin(), source.end(), 0u);
      seen = gate.outcome();
      gate.open();
      s.sync();
    }
    CHECK_MESSAGE(reserved == 2, "reserve(2, bytes) on a new uploader must leave it holding two buffers");
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "upload waited for the stream: it must only enqueue the copy");
    CHECK_MESSAGE(download<unsigned>(dstFirst.get(), n) == first,
                  "the first destination did not get the first batch: its staging buffer was refilled before its copy ran, or the copy read the source late");
    CHECK_MESSAGE(download<unsigned>(dstSecond.get(), n) == second, "the second destination did not get the second batch");
  }

  TEST_CASE("after uploads that were each waited for, one staging buffer is held: a buffer whose copy has run is used again") {
    Primary ctx;
    const size_t n = (1u << 20) / sizeof(unsigned), bytes = n * sizeof(unsigned);
    wbt::DeviceBuffer dst(bytes);
    Stream s;
    ex05::StagingUploader uploader;
    int arrived = 0;
    for (unsigned i = 0; i < 4; ++i) {
      const std::vector<unsigned> batch = pattern(n, 10 + i);
      uploader.upload(dst.get(), batch.data(), bytes, s.get());
      s.sync();
      arrived += download<unsigned>(dst.get(), n) == batch;
    }
    const size_t held = uploader.stagingBuffers();
    CHECK(arrived == 4);
    CAPTURE(held);
    CHECK_MESSAGE(held == 1, "each upload took a new staging buffer although the last one's copy had run");
  }
}

EXERCISE("fill-elements", "Fill a buffer with a value of any element size, without a kernel",
         "cuMemsetD8/D16/D32(dst, v, count): the count is elements, not bytes; copy the value's bytes into an "
         "unsigned char/short/int with std::memcpy. For 8 bytes, cuMemsetD2D32(dst, 8, low, 1, count) and "
         "cuMemsetD2D32(dst + 4, 8, high, 1, count): one 4-byte word per 8-byte row.") {
  TEST_CASE("every element size and count: exactly count elements hold the value, and no byte around them changes") {
    Primary ctx;
    const unsigned char value[8] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF};
    const unsigned char untouched = 0x5A;
    for (size_t size : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
      for (size_t count : {size_t{1}, size_t{3}, size_t{4099}}) {
        CAPTURE(size);
        CAPTURE(count);
        // Room for a count mistaken for bytes (size times too many elements), so that one stays
        // inside the buffer and shows as changed bytes rather than a fault.
        const size_t filled = size * count, total = size + filled * size + 4096;
        wbt::DeviceBuffer buffer(total);
        CU_CHECK(cuMemsetD8(buffer.get(), untouched, total));
        ex05::fillElements(buffer.get() + size, value, size, count);  // one element in: not 256-byte aligned
        const std::vector<unsigned char> bytes = download<unsigned char>(buffer.get(), total);
        size_t wrongInside = 0, changedOutside = 0;
        for (size_t i = 0; i < total; ++i) {
          if (i >= size && i < size + filled)
            wrongInside += bytes[i] != value[(i - size) % size];
          else
            changedOutside += bytes[i] != untouched;
        }
        CHECK(wrongInside == 0);
        CHECK_MESSAGE(changedOutside == 0, "bytes outside the elements changed: a count is elements, not bytes");
      }
    }
  }
}

EXERCISE("pointer-kind", "Tell device, pinned and pageable memory apart from a bare pointer",
         "cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) gives CU_MEMORYTYPE_DEVICE "
         "or CU_MEMORYTYPE_HOST for memory the driver knows, from any context; for memory it never saw it returns "
         "CUDA_ERROR_INVALID_VALUE, which means pageable here: do not CU_CHECK it. That the driver knows a pointer "
         "does not make it device memory: pinned host memory belongs to a context too.") {
  TEST_CASE("device memory is Device from any address inside, whichever context allocated it") {
    Primary ctx;
    wbt::DeviceBuffer device(1u << 20);
    const ex05::MemoryKind atStart = ex05::memoryKind(address(device.get()));
    const ex05::MemoryKind inside = ex05::memoryKind(address(device.get() + 12345));
    OtherContextBuffer theirs;  // asked about while the primary context is current
    const ex05::MemoryKind ofOtherContext = ex05::memoryKind(address(theirs.get()));
    CHECK(atStart == ex05::MemoryKind::Device);
    CHECK(inside == ex05::MemoryKind::Device);
    CHECK(ofOtherContext == ex05::MemoryKind::Device);
  }

  TEST_CASE("cuMemAllocHost and cuMemHostAlloc memory is PinnedHost from any address inside") {
    Primary ctx;
    PinnedHost allocHost(1u << 20), hostAlloc(1u << 16, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    const ex05::MemoryKind atStart = ex05::memoryKind(allocHost.get());
    const ex05::MemoryKind inside = ex05::memoryKind(allocHost.get() + 4321);
    const ex05::MemoryKind mapped = ex05::memoryKind(hostAlloc.get() + 100);
    CHECK_MESSAGE(atStart == ex05::MemoryKind::PinnedHost, "cuMemAllocHost memory is pinned host memory");
    CHECK(inside == ex05::MemoryKind::PinnedHost);
    CHECK(mapped == ex05::MemoryKind::PinnedHost);
  }

  TEST_CASE("malloc'd and stack memory is PageableHost; a range is PinnedHost only while registered with cuMemHostRegister") {
    Primary ctx;
    std::vector<unsigned char> heap(1u << 20);
    int onStack = 0;
    const ex05::MemoryKind ofHeap = ex05::memoryKind(heap.data() + 1000);
    const ex05::MemoryKind ofStack = ex05::memoryKind(&onStack);
    Pages pages(2 * 4096);
    const ex05::MemoryKind before = ex05::memoryKind(pages.get());
    pages.registerPinned();
    const ex05::MemoryKind registered = ex05::memoryKind(pages.get() + 100);
    pages.unregister();
    const ex05::MemoryKind after = ex05::memoryKind(pages.get());
    CHECK(ofHeap == ex05::MemoryKind::PageableHost);
    CHECK(ofStack == ex05::MemoryKind::PageableHost);
    CHECK(before == ex05::MemoryKind::PageableHost);
    CHECK_MESSAGE(registered == ex05::MemoryKind::PinnedHost, "memory registered with cuMemHostRegister is pinned");
    CHECK(after == ex05::MemoryKind::PageableHost);
  }
}

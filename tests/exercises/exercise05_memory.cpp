// The checks of lesson 05's exercises (lessons/05-memory/exercises.cpp). Everything here is
// synchronous: each check calls the learner's function, then reads back what it did. A failure the
// driver would not give on demand (a failed memset, copy or pointer query) is made by the ledger
// (ledger.hpp); cuMemsetD2D32, cuPointerGetAttribute and cuMemGetAddressRange, which the ledger does
// not stand before, are interposed here. Each case's name begins with the requirements it verifies.
#include "check.hpp"
#include "05-memory/exercises.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

// Failures on demand for the two calls the ledger does not cover (wbx::FailCall names them).
WBX_INTERPOSE(cuMemsetD2D32, (CUdeviceptr dst, size_t pitch, unsigned int value, size_t width, size_t height),
              (dst, pitch, value, width, height))
WBX_INTERPOSE(cuPointerGetAttribute, (void* data, CUpointer_attribute attribute, CUdeviceptr ptr),
              (data, attribute, ptr))
WBX_INTERPOSE(cuMemGetAddressRange, (CUdeviceptr* base, size_t* size, CUdeviceptr ptr), (base, size, ptr))

namespace {

// The primary context of device 0, current for the test. The process keeps it retained, so that
// each case does not build the context again.
struct Primary {
  wbt::RetainedPrimary retained{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{retained.get()};
};

template <typename T>
std::vector<T> download(CUdeviceptr p, size_t n) {
  std::vector<T> out(n);
  CU_CHECK(cuMemcpyDtoH(out.data(), p, n * sizeof(T)));
  return out;
}

const void* address(CUdeviceptr p) { return reinterpret_cast<const void*>(p); }

const unsigned char kSeed = 0x5A;  // what a buffer holds before the code under check writes to it

// n bytes that differ from their neighbours and from kSeed.
std::vector<unsigned char> bytePattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<unsigned char>((i * 131 + seed * 29 + 1) & 0xFF);
    if (v[i] == kSeed) v[i] = 0xA5;
  }
  return v;
}

// Where two byte strings differ: how many bytes, and the first (or a.size() when none).
struct Differences {
  size_t count = 0, first = 0;
};
Differences compare(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  Differences d;
  d.first = a.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] != b[i] && d.count++ == 0) d.first = i;
  return d;
}

// What a call of the code under check did: "returned", the exception the task names by its type, or
// "other: " and another exception's text. wb::NotDone passes through, so that a starting body is
// reported as not done. Never call the learner's code inside CHECK(): doctest would catch NotDone.
template <typename Call>
std::string outcomeOf(Call&& call) {
  try {
    call();
    return "returned";
  } catch (const wb::NotDone&) {
    throw;
  } catch (const std::out_of_range&) {
    return "std::out_of_range";
  } catch (const std::invalid_argument&) {
    return "std::invalid_argument";
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
}

// A cuMemAlloc allocation larger than 4 GiB, freed at scope exit; skipped where the device has no
// room for it.
class LargeAllocation {
 public:
  explicit LargeAllocation(size_t bytes) {
    const CUresult rc = cuMemAlloc(&p_, bytes);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY)
      throw wbx::Skipped("this check needs " + wb::bytes(bytes) + " of free device memory");
    CU_CHECK(rc);
  }
  ~LargeAllocation() { cuMemFree(p_); }
  LargeAllocation(const LargeAllocation&) = delete;
  LargeAllocation& operator=(const LargeAllocation&) = delete;
  CUdeviceptr get() const { return p_; }

 private:
  CUdeviceptr p_ = 0;
};

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

EXERCISE("bounded-upload", "An upload that refuses to write past the end of its allocation",
         "cuMemGetAddressRange(&base, &size, dst): CUDA_ERROR_NOT_FOUND or CUDA_ERROR_INVALID_VALUE means dst is in "
         "no allocation (throw std::invalid_argument; do not CU_CHECK those two). The room left is "
         "size - (dst - base), a size_t; refuse with std::out_of_range when bytes > room. Never compute dst + bytes: "
         "a huge bytes wraps it round. Then CU_CHECK(cuMemcpyHtoD(dst, src, bytes)).") {
  TEST_CASE("R1 R4 R6: copies that fit land where they were aimed, in a context of the caller's own, and leave its context stack as it was") {
    wbt::initDriver();
    wbt::OwnedContext own(wbt::device(0));  // current: the caller's context, not the primary one
    const size_t total = 64u << 10;
    wbt::DeviceBuffer buffer(total);
    CU_CHECK(cuMemsetD8(buffer.get(), kSeed, total));
    const std::vector<unsigned char> source = bytePattern(total, 1);
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    ex05::uploadWithin(buffer.get(), source.data(), 100);                     // at the start
    ex05::uploadWithin(buffer.get() + 1000, source.data() + 7, total - 1000);  // up to the last byte
    ex05::uploadWithin(buffer.get(), source.data() + 9, 0);                   // nothing, at the start
    const std::vector<CUcontext> stackAfter = wbx::contextStack();
    std::vector<unsigned char> want(total, kSeed);
    std::copy(source.begin(), source.begin() + 100, want.begin());
    std::copy(source.begin() + 7, source.begin() + 7 + (total - 1000), want.begin() + 1000);
    const Differences d = compare(download<unsigned char>(buffer.get(), total), want);
    CAPTURE(d.count);
    CAPTURE(d.first);
    CHECK_MESSAGE(d.count == 0, "bytes of the allocation are not what the three uploads and the seed make them");
    CHECK_MESSAGE(stackAfter == stackBefore, "uploadWithin changed the caller's context stack");
  }

  TEST_CASE("R2: copies that would run past the end of the allocation are refused with std::out_of_range, and no byte changes") {
    Primary ctx;
    const size_t total = 64u << 10;
    wbt::DeviceBuffer buffer(total);
    CU_CHECK(cuMemsetD8(buffer.get(), kSeed, total));
    const std::vector<unsigned char> source = bytePattern(2 * total, 2);  // a source with more than the asks read
    const CUdeviceptr base = buffer.get();
    struct Ask {
      const char* what;
      CUdeviceptr dst;
      size_t bytes;
    };
    // The last two would read far past the source if let through: they come last.
    const Ask asks[] = {
        {"one byte more than the allocation, at its start", base, total + 1},
        {"from 1000 bytes in, one byte past the end", base + 1000, total - 1000 + 1},
        {"2^32 + 16 bytes from 4 KiB in (16 when cut to 32 bits)", base + 4096, (size_t{1} << 32) + 16},
        {"(size_t)-64 bytes from 4 KiB in (dst + bytes wraps to 64 bytes before dst)", base + 4096,
         static_cast<size_t>(-64)},
    };
    for (const Ask& ask : asks) {
      const std::string outcome = outcomeOf([&] { ex05::uploadWithin(ask.dst, source.data(), ask.bytes); });
      const std::string what = ask.what;
      CAPTURE(what);
      CHECK(outcome == "std::out_of_range");
    }
    const std::vector<unsigned char> want(total, kSeed);
    const Differences d = compare(download<unsigned char>(base, total), want);
    CAPTURE(d.first);
    CHECK_MESSAGE(d.count == 0, "a refused upload wrote to the allocation: refuse before copying anything");
  }

  TEST_CASE("R3: an address in no allocation is refused with std::invalid_argument, for 16 bytes and for none") {
    Primary ctx;
    const std::vector<unsigned char> source = bytePattern(64, 3);
    std::vector<unsigned char> host(4096, kSeed);
    for (size_t bytes : {size_t{16}, size_t{0}}) {
      CAPTURE(bytes);
      const std::string atZero = outcomeOf([&] { ex05::uploadWithin(0, source.data(), bytes); });
      const std::string atHost =
          outcomeOf([&] { ex05::uploadWithin(reinterpret_cast<CUdeviceptr>(host.data()), source.data(), bytes); });
      CHECK_MESSAGE(atZero == "std::invalid_argument", "an address in no allocation is refused whatever the size");
      CHECK_MESSAGE(atHost == "std::invalid_argument", "a pageable host address is in no allocation of the driver's");
    }
    CHECK(std::all_of(host.begin(), host.end(), [](unsigned char b) { return b == kSeed; }));
  }

  TEST_CASE("R5: a lookup or a copy the driver fails is thrown, not ignored, and a failed lookup is no 'no allocation'") {
    Primary ctx;
    wbt::DeviceBuffer buffer(4096);
    const std::vector<unsigned char> source = bytePattern(4096, 4);
    std::string lookup;
    bool looked = false;
    {
      wbx::FailCall fail("cuMemGetAddressRange", CUDA_ERROR_INVALID_CONTEXT);  // as with no current context
      lookup = outcomeOf([&] { ex05::uploadWithin(buffer.get(), source.data(), 64); });
      looked = fail.fired();
    }
    CAPTURE(lookup);
    REQUIRE_MESSAGE(looked, "uploadWithin made no cuMemGetAddressRange call: the task asks for one");
    CHECK_MESSAGE(lookup != "returned", "cuMemGetAddressRange failed and uploadWithin went on as if it had answered");
    CHECK_MESSAGE(lookup != "std::invalid_argument",
                  "CUDA_ERROR_INVALID_CONTEXT is a failure, not the answer 'dst lies in no allocation'");
    std::string outcome;
    bool fired = false;
    {
      wbx::FailCall fail("cuMemcpyHtoD", CUDA_ERROR_OUT_OF_MEMORY);  // the copy fails without reaching the driver
      outcome = outcomeOf([&] { ex05::uploadWithin(buffer.get(), source.data(), 4096); });
      fired = fail.fired();
    }
    CAPTURE(outcome);
    REQUIRE_MESSAGE(fired, "uploadWithin made no cuMemcpyHtoD for a copy that fits: the task asks for one");
    CHECK_MESSAGE(outcome != "returned", "cuMemcpyHtoD failed and uploadWithin returned as if the bytes had arrived");
  }

  TEST_CASE("R1 R2: past 4 GiB: in an allocation of 4 GiB + 64 KiB, a 1 MiB copy near its start and a copy that ends at its end land, and one byte more is refused") {
    Primary ctx;
    const size_t fourGiB = size_t{4} << 30, total = fourGiB + (64u << 10), mib = 1u << 20;
    LargeAllocation big(total);
    const CUdeviceptr base = big.get(), nearEnd = base + fourGiB + 4096;
    const size_t tail = total - (fourGiB + 4096);  // 60 KiB from nearEnd to the end
    const size_t head = 2 * mib;                   // the first 2 MiB and the last 64 KiB are looked at
    CU_CHECK(cuMemsetD8(base, kSeed, head));
    CU_CHECK(cuMemsetD8(base + fourGiB, kSeed, total - fourGiB));
    const std::vector<unsigned char> source = bytePattern(2 * mib, 5);
    ex05::uploadWithin(base + 4096, source.data(), mib);     // 4 GiB + 60 KiB of room: 32 bits cannot hold it
    ex05::uploadWithin(nearEnd, source.data() + 3, tail);    // ends at the last byte
    const std::string oneMore = outcomeOf([&] { ex05::uploadWithin(nearEnd, source.data(), tail + 1); });
    const std::string aMiB = outcomeOf([&] { ex05::uploadWithin(nearEnd, source.data(), mib); });
    std::vector<unsigned char> wantHead(head, kSeed), wantTail(total - fourGiB, kSeed);
    std::copy(source.begin(), source.begin() + mib, wantHead.begin() + 4096);
    std::copy(source.begin() + 3, source.begin() + 3 + tail, wantTail.begin() + 4096);
    const Differences atHead = compare(download<unsigned char>(base, head), wantHead);
    const Differences atTail = compare(download<unsigned char>(base + fourGiB, total - fourGiB), wantTail);
    CAPTURE(atHead.first);
    CAPTURE(atTail.first);
    CHECK_MESSAGE(atHead.count == 0, "the 1 MiB copy 4 KiB into the allocation did not land as it should");
    CHECK_MESSAGE(atTail.count == 0, "the last 64 KiB are not what the copy up to the end and the seed make them");
    CHECK_MESSAGE(oneMore == "std::out_of_range", "one byte past the end of a 4 GiB + 64 KiB allocation was let through");
    CHECK_MESSAGE(aMiB == "std::out_of_range", "1 MiB from 60 KiB before the end was let through: is the offset cut to 32 bits?");
  }
}

EXERCISE("fill-elements", "Fill a buffer with a value of any element size, without a kernel",
         "cuMemsetD8/D16/D32(dst, v, count): the count is elements, not bytes; copy the value's bytes into an "
         "unsigned char/short/int with std::memcpy. For 8 bytes, cuMemsetD2D32(dst, 8, low, 1, count) and "
         "cuMemsetD2D32(dst + 4, 8, high, 1, count): one 4-byte word per 8-byte row, the low half (the value's "
         "first four bytes) at the lower address. Keep every count a size_t; refuse another size before any "
         "memset; CU_CHECK each memset.") {
  // A value whose bytes all differ, so that an element with its bytes in another order shows.
  static const unsigned char value[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF,
                                          0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};

  TEST_CASE("R1 R2: every element size and count: exactly count elements hold the value, and no byte around them changes") {
    Primary ctx;
    for (size_t size : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{3}, size_t{4099}}) {
        CAPTURE(size);
        CAPTURE(count);
        // Room for a count mistaken for bytes (size times too many elements), so that one stays
        // inside the buffer and shows as changed bytes rather than a fault.
        const size_t filled = size * count, total = size + filled * size + 4096;
        wbt::DeviceBuffer buffer(total);
        CU_CHECK(cuMemsetD8(buffer.get(), kSeed, total));
        ex05::fillElements(buffer.get() + size, value, size, count);  // one element in: not 256-byte aligned
        const std::vector<unsigned char> bytes = download<unsigned char>(buffer.get(), total);
        size_t wrongInside = 0, changedOutside = 0;
        for (size_t i = 0; i < total; ++i) {
          if (i >= size && i < size + filled)
            wrongInside += bytes[i] != value[(i - size) % size];
          else
            changedOutside += bytes[i] != kSeed;
        }
        CHECK_MESSAGE(wrongInside == 0, "elements do not hold the value's bytes in order");
        CHECK_MESSAGE(changedOutside == 0, "bytes outside the elements changed: a count is elements, not bytes");
      }
    }
  }

  TEST_CASE("R3: any other element size is refused with std::invalid_argument, for 3 elements and for none, and nothing is written") {
    Primary ctx;
    const size_t total = 4096;
    wbt::DeviceBuffer buffer(total);
    CU_CHECK(cuMemsetD8(buffer.get(), kSeed, total));
    for (size_t size : {size_t{0}, size_t{3}, size_t{16}})
      for (size_t count : {size_t{3}, size_t{0}}) {
        const std::string outcome = outcomeOf([&] { ex05::fillElements(buffer.get() + 16, value, size, count); });
        CAPTURE(size);
        CAPTURE(count);
        CHECK_MESSAGE(outcome == "std::invalid_argument", "an element size is refused before anything else, whatever the count");
      }
    const std::vector<unsigned char> bytes = download<unsigned char>(buffer.get(), total);
    CHECK_MESSAGE(std::all_of(bytes.begin(), bytes.end(), [](unsigned char b) { return b == kSeed; }),
                  "a refused element size wrote to the buffer");
  }

  TEST_CASE("R4: a memset the driver fails is thrown, not ignored, for every size and for either half of 8 bytes") {
    Primary ctx;
    wbt::DeviceBuffer buffer(4096);
    struct Failing {
      size_t size;
      const char* call;  // the memset the task names for that size
      unsigned nth;      // which of its calls fails: 8 bytes take two, the low half and the high half
    };
    const Failing plan[] = {{1, "cuMemsetD8", 1}, {2, "cuMemsetD16", 1}, {4, "cuMemsetD32", 1},
                            {8, "cuMemsetD2D32", 1}, {8, "cuMemsetD2D32", 2}};
    bool anyFired = false;
    for (const Failing& f : plan) {
      std::string outcome;
      bool fired = false;
      {
        wbx::FailCall fail(f.call, CUDA_ERROR_INVALID_VALUE, f.nth);  // fails without reaching the driver
        outcome = outcomeOf([&] { ex05::fillElements(buffer.get() + 8, value, f.size, 3); });
        fired = fail.fired();
      }
      anyFired = anyFired || fired;
      const std::string call = f.call;
      CAPTURE(call);
      CAPTURE(f.nth);
      CAPTURE(outcome);
      if (fired) CHECK_MESSAGE(outcome != "returned", "the memset failed and fillElements returned as if it had set the elements");
    }
    CHECK_MESSAGE(anyFired, "fillElements used none of cuMemsetD8, cuMemsetD16, cuMemsetD32 and cuMemsetD2D32");
  }

  TEST_CASE("R2: a count past 2^32: 2^32 + 5 one-byte elements end where they should") {
    Primary ctx;
    const size_t count = (size_t{1} << 32) + 5, total = count + 4096, edge = 8192;
    LargeAllocation big(total);
    CU_CHECK(cuMemsetD8(big.get(), kSeed, edge));  // only the two ends are looked at
    CU_CHECK(cuMemsetD8(big.get() + total - edge, kSeed, edge));
    ex05::fillElements(big.get() + 1, value, 1, count);  // bytes 1 to 2^32 + 5
    const std::vector<unsigned char> head = download<unsigned char>(big.get(), edge);
    const std::vector<unsigned char> tail = download<unsigned char>(big.get() + total - edge, edge);
    size_t wrongAtStart = 0, wrongAtEnd = 0;
    for (size_t k = 0; k < edge; ++k) {
      wrongAtStart += head[k] != (k >= 1 ? value[0] : kSeed);
      const size_t i = total - edge + k;
      wrongAtEnd += tail[k] != (i >= 1 && i < 1 + count ? value[0] : kSeed);
    }
    CHECK(wrongAtStart == 0);
    CHECK_MESSAGE(wrongAtEnd == 0, "the far end of 2^32 + 5 elements is wrong: is the count cut to 32 bits?");
  }
}

EXERCISE("pointer-kind", "Tell device, pinned and pageable memory apart from a bare pointer",
         "cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) gives CU_MEMORYTYPE_DEVICE "
         "or CU_MEMORYTYPE_HOST for memory the driver knows, from any context; for memory it never saw it returns "
         "CUDA_ERROR_INVALID_VALUE, which means pageable here: do not CU_CHECK it. That the driver knows a pointer "
         "does not make it device memory: pinned host memory belongs to a context too. Ask every time: what an "
         "address is changes when a range is registered or unregistered. Any other error: CU_CHECK it.") {
  // The order matters to the proofs, which count only a variant's first failed case. Pinned memory
  // first, then registration: a variant that caches each address's answer is wrong in the second case
  // and nowhere earlier (each address asked once), where after the device-memory cases it can meet a
  // stale answer at an address the allocator reused.
  TEST_CASE("R2: cuMemAllocHost and cuMemHostAlloc memory is PinnedHost from any address inside") {
    Primary ctx;
    PinnedHost allocHost(1u << 20), hostAlloc(1u << 16, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    const ex05::MemoryKind atStart = ex05::memoryKind(allocHost.get());
    const ex05::MemoryKind inside = ex05::memoryKind(allocHost.get() + 4321);
    const ex05::MemoryKind mapped = ex05::memoryKind(hostAlloc.get() + 100);
    CHECK_MESSAGE(atStart == ex05::MemoryKind::PinnedHost, "cuMemAllocHost memory is pinned host memory");
    CHECK(inside == ex05::MemoryKind::PinnedHost);
    CHECK(mapped == ex05::MemoryKind::PinnedHost);
  }

  TEST_CASE("R3 R4: malloc'd and stack memory is PageableHost; a range is PinnedHost only while registered with cuMemHostRegister") {
    Primary ctx;
    std::vector<unsigned char> heap(1u << 20);
    int onStack = 0;
    const ex05::MemoryKind ofHeap = ex05::memoryKind(heap.data() + 1000);
    const ex05::MemoryKind ofStack = ex05::memoryKind(&onStack);
    Pages pages(2 * 4096);
    const unsigned char* asked = pages.get() + 100;  // one address, asked about three times
    const ex05::MemoryKind before = ex05::memoryKind(asked);
    pages.registerPinned();
    const ex05::MemoryKind registered = ex05::memoryKind(asked);
    pages.unregister();
    const ex05::MemoryKind after = ex05::memoryKind(asked);
    CHECK(ofHeap == ex05::MemoryKind::PageableHost);
    CHECK(ofStack == ex05::MemoryKind::PageableHost);
    CHECK(before == ex05::MemoryKind::PageableHost);
    CHECK_MESSAGE(registered == ex05::MemoryKind::PinnedHost, "memory registered with cuMemHostRegister is pinned");
    CHECK_MESSAGE(after == ex05::MemoryKind::PageableHost, "an unregistered range is pageable again");
  }

  TEST_CASE("R1: device memory is Device from any address inside, whichever context allocated it") {
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

  TEST_CASE("R1: device 1's memory is Device, asked while device 0's context is current") {
    wbx::needDevices(2);  // one GPU: this case reports itself skipped, the rest still count
    Primary ctx;
    std::unique_ptr<wbt::DeviceBuffer> onSecond;
    wbt::RetainedPrimary second(wbt::device(1));
    {
      wbt::Pushed in(second.get());
      onSecond = std::make_unique<wbt::DeviceBuffer>(4096);
    }
    const ex05::MemoryKind ofSecondDevice = ex05::memoryKind(address(onSecond->get() + 100));
    CHECK_MESSAGE(ofSecondDevice == ex05::MemoryKind::Device, "device 1's memory is device memory too");
    wbt::Pushed in(second.get());
    onSecond.reset();  // freed in its own context, before the context is released
  }

  TEST_CASE("R5: an error other than CUDA_ERROR_INVALID_VALUE is thrown, not taken for pageable memory") {
    Primary ctx;
    wbt::DeviceBuffer device(4096);
    std::string outcome;
    bool fired = false;
    {
      // No current context, or a context that faulted, makes the query fail for any pointer.
      wbx::FailCall fail("cuPointerGetAttribute", CUDA_ERROR_INVALID_CONTEXT);
      outcome = outcomeOf([&] { ex05::memoryKind(address(device.get() + 64)); });
      fired = fail.fired();
    }
    CAPTURE(outcome);
    if (!fired)
      MESSAGE("memoryKind made no cuPointerGetAttribute call for this pointer: the failure could not be shown");
    else
      CHECK_MESSAGE(outcome != "returned", "cuPointerGetAttribute failed and memoryKind answered as if it had not");
  }
}

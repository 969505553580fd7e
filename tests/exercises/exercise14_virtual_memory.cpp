// The checks of lesson 14's exercises (lessons/14-virtual-memory/exercises.cpp). The code under
// check runs in a context the check created. What it leaves held (handles, mappings, reservations)
// the ledger counts (ledger.hpp), which also fails the driver call a case names; the device's free
// memory is read only to see that a buffer took little more than it mapped, so these checks run
// with the GPU to themselves.
#include "check.hpp"
#include "channel.hpp"
#include "lesson14_virtual_memory.hpp"
#include "14-virtual-memory/exercises.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

// Granting access is a call the ledger does not stand before: counted here, and failed on demand.
WBX_INTERPOSE(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count),
              (ptr, size, desc, count))

namespace {

using l14::canReadWrite;
using l14::granularity;
using l14::kMark;
using l14::onDevice;
using l14::roundUp;
using l14::ShareMessage;
using wbt::patternAt;

// A context of the check's own on a device (0 unless asked), current for the test.
struct Ctx {
  CUdevice dev;
  wbt::OwnedContext ctx;
  explicit Ctx(int ordinal = 0) : dev((wbt::initDriver(), wbt::device(ordinal))), ctx(dev) {}
};

// The device whose memory is mapped at p, as the allocation's properties say.
int homeOf(CUdeviceptr p) {
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemRetainAllocationHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(p))));
  CUmemAllocationProp prop{};
  const CUresult rc = cuMemGetAllocationPropertiesFromHandle(&prop, handle);
  CU_CHECK(cuMemRelease(handle));  // every retain is paired with a release
  CU_CHECK(rc);
  return prop.location.id;
}

// True when dev may read and write every granule of [p, p + bytes).
bool readWriteThroughout(CUdevice dev, CUdeviceptr p, size_t bytes, size_t granule) {
  for (size_t at = 0; at < bytes; at += granule)
    if (!canReadWrite(dev, p + at)) return false;
  return bytes > 0;
}

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

// What a call did when the nth call of one driver entry point failed.
struct Failed {
  bool fired = false, threw = false;
};

// Runs call with the nth call of function failing. wb::NotDone goes on (the exercise is not done).
template <typename Call>
Failed withFailing(const char* function, unsigned nth, Call&& call) {
  wbx::FailCall fail(function, CUDA_ERROR_INVALID_VALUE, nth);
  Failed f;
  try {
    call();
  } catch (const wb::NotDone&) {
    throw;
  } catch (const std::exception&) {
    f.threw = true;
  }
  f.fired = fail.fired();
  return f;
}

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

// The open file a descriptor names: closed, or its number reused for another file, shows.
struct OpenFile {
  bool open = false;
  dev_t device = 0;
  ino_t inode = 0;
  explicit OpenFile(int fd) {
    struct stat st {};
    open = fstat(fd, &st) == 0;
    device = st.st_dev, inode = st.st_ino;
  }
  bool operator==(const OpenFile& o) const { return open && o.open && device == o.device && inode == o.inode; }
};

// Grows a buffer of 1 GiB on dev four times and checks what the task promises of each growth.
void growFourTimes(CUdevice dev) {
  const size_t g = granularity(dev), capacity = size_t{1} << 30;
  const wbx::Holdings before = wbx::holdings();
  const size_t freeBefore = wbt::freeMemory();
  {
    ex14::GrowableBuffer buf(dev, capacity);
    const CUdeviceptr base = buf.data();
    CHECK(buf.size() == 0);
    const wbx::Holdings empty = wbx::holdings();
    buf.grow(0);
    CHECK(buf.size() == 0);
    CHECK_MESSAGE(wbx::holdings().differenceFrom(empty).empty(), "grow(0) took something");
    std::vector<uint32_t> written;  // what the check wrote from the base on, word by word
    for (size_t bytes : {size_t{1} << 20, 3 * g + 1, size_t{100} << 20, size_t{128} << 20}) {
      CAPTURE(bytes);
      buf.grow(bytes);
      CHECK_MESSAGE(buf.data() == base, "the base address changed: grow must map more behind the same reservation");
      CHECK(buf.size() == roundUp(bytes, g));
      // Touching a granule dev may not access would fault: the check stops first.
      REQUIRE_MESSAGE(readWriteThroughout(dev, buf.data(), buf.size(), g),
                      "cuMemGetAccess does not say read-write for dev everywhere in size(): grant each new piece");
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
    const wbx::Holdings grown = wbx::holdings();
    buf.grow(g);
    CHECK(buf.size() == mapped);
    CHECK_THROWS_AS(buf.grow(capacity + 1), std::length_error);
    CHECK(buf.size() == mapped);
    CHECK(buf.data() == base);
    CHECK_MESSAGE(wbx::holdings().differenceFrom(grown).empty(), "a grow that changes nothing took something");
    std::vector<uint32_t> back(written.size());
    CU_CHECK(cuMemcpyDtoH(back.data(), buf.data(), back.size() * sizeof(uint32_t)));
    CHECK(back == written);
    const size_t freeNow = wbt::freeMemory(), held = freeBefore > freeNow ? freeBefore - freeNow : 0;
    CAPTURE(held);
    CHECK_MESSAGE(held < mapped + (size_t{64} << 20), "the buffer took far more memory than it mapped");
  }
  const std::string left = wbx::holdings().differenceFrom(before);
  CAPTURE(left);
  CHECK_MESSAGE(left.empty(), "the destructor left something held");
}

// The child's side of share-handle: the descriptor arrives on the socket, mapShared maps it.
void mapInChild() {
  const char* socket = std::getenv("WORKBOOK_SHARE_SOCKET");
  const char* device = std::getenv("WORKBOOK_SHARE_DEVICE");
  REQUIRE(socket != nullptr);
  REQUIRE(device != nullptr);
  ShareMessage msg{};
  const int fd = wb::receiveFd(std::atoi(socket), msg);
  REQUIRE(fd >= 0);
  struct Closed {
    int fd;
    ~Closed() { close(fd); }
  } closed{fd};
  Ctx ctx(std::atoi(device));
  const OpenFile file(fd);
  const std::vector<CUcontext> stackBefore = wbx::contextStack();
  for (const char* function : {"cuMemAddressReserve", "cuMemMap", "cuMemSetAccess"}) {
    CAPTURE(function);
    const wbx::Holdings before = wbx::holdings();
    CUdeviceptr got = 0;
    const Failed f = withFailing(function, 1, [&] { got = ex14::mapShared(fd, msg.bytes, ctx.dev); });
    const std::string left = wbx::holdings().differenceFrom(before);
    if (got) {
      cuMemUnmap(got, msg.bytes);
      cuMemAddressFree(got, msg.bytes);
    }
    CAPTURE(left);
    CHECK_MESSAGE(f.fired, "mapShared did not call it");
    CHECK_MESSAGE(f.threw, "mapShared did not throw when it failed");
    CHECK_MESSAGE(left.empty(), "a failed mapShared left something held: release the import, free the addresses");
    CHECK_MESSAGE(wbx::contextStack() == stackBefore, "a mapShared that threw left the context stack changed");
    REQUIRE_MESSAGE(OpenFile(fd) == file, "mapShared closed the descriptor: it is the caller's");
  }
  const wbx::Holdings before = wbx::holdings();
  const CUdeviceptr p = ex14::mapShared(fd, msg.bytes, ctx.dev);
  const long handles = wbx::holdings()[wbx::Held::MemHandles] - before[wbx::Held::MemHandles];
  CHECK_MESSAGE(OpenFile(fd) == file, "mapShared closed the descriptor: it is the caller's");
  CHECK_MESSAGE(handles == 0, "the imported handle is still held: cuMemRelease it once mapped");
  CHECK_MESSAGE(wbx::contextStack() == stackBefore, "the context stack changed");
  const bool rw = canReadWrite(ctx.dev, p);
  CHECK_MESSAGE(rw, "cuMemGetAccess does not say read-write for dev: the importer must grant access itself");
  if (rw) {  // touching memory without access would fault
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
  const std::string left = wbx::holdings().differenceFrom(before);
  CAPTURE(left);
  CHECK_MESSAGE(left.empty(), "after cuMemUnmap and cuMemAddressFree something is still held");
}

// The parent's side: memory on device `ordinal`, exported, filled, and sent to a child that maps it.
void shareWithChild(int ordinal) {
  const CUdevice dev = wbt::device(ordinal);
  if (wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1)
    throw wbx::Skipped("device " + std::to_string(ordinal) + " cannot export memory as a POSIX file descriptor");
  wbt::RetainedPrimary primary(dev);  // the copies into the memory run on its device
  wbt::Pushed current(primary.get());
  const size_t size = roundUp(3u << 20, granularity(dev));
  Exported memory(dev, size);
  const ShareMessage msg{size, 0xBEEFu + static_cast<uint32_t>(ordinal)};
  std::vector<uint32_t> words(size / sizeof(uint32_t));
  for (size_t i = 0; i < words.size(); ++i) words[i] = patternAt(msg.seed, i);
  CU_CHECK(cuMemcpyHtoD(memory.ptr(), words.data(), size));
  CU_CHECK(cuCtxSynchronize());  // from pageable memory: landed before the child, another process, reads it
  wb::SocketPair sockets;
  if (!wb::sendFd(sockets.fds[0], memory.fd(), msg)) throw std::runtime_error("sendmsg failed");
  const wb::ProcessEnd end = wb::runProcess(
      {wb::selfPath(), "--test-case=child: mapShared in the receiving process", "--no-version"},
      {"WORKBOOK_CHILD=1", "WORKBOOK_EXERCISE_RESULTS", "WORKBOOK_SHARE_SOCKET=" + std::to_string(sockets.fds[1]),
       "WORKBOOK_SHARE_DEVICE=" + std::to_string(ordinal)},
      60, {sockets.fds[1]});
  const size_t notDone = end.output.find("NOT DONE: ");
  if (notDone != std::string::npos) {  // the child reached a starting body: so is this check
    const size_t from = notDone + 10;
    throw wb::NotDone(end.output.substr(from, end.output.find(' ', from) - from));
  }
  const std::string output = end.output;
  CAPTURE(ordinal);
  CAPTURE(output);
  CHECK_FALSE(end.timedOut);
  CHECK(end.signal == 0);
  CHECK_MESSAGE(end.code == 0, "the child's checks failed (its output is above)");
  uint32_t first = 0;
  CU_CHECK(cuMemcpyDtoH(&first, memory.ptr(), sizeof first));
  CHECK_MESSAGE(first == kMark, "the child's write did not arrive in the parent's memory");
}

}  // namespace

EXERCISE("growable-buffer", "A growable device buffer whose base address never changes",
         "Constructor: cuMemGetAllocationGranularity (CU_MEM_ALLOC_GRANULARITY_MINIMUM), then cuMemAddressReserve "
         "of the capacity rounded up; keep that rounded capacity. grow: cuMemCreate the difference, cuMemMap it at "
         "base + size(), cuMemRelease the handle, cuMemSetAccess the new piece for dev; where the map or the access "
         "fails, give back what this grow took before you throw. Never cuMemAlloc a bigger buffer and copy: that "
         "moves the base. Destructor: cuMemUnmap each piece as it was mapped, then cuMemAddressFree.") {
  TEST_CASE("R1 R2 R3 R4 R5 R7 R8 R9: grown four times, the buffer keeps its base address and its data, maps whole granules read-write, refuses to pass its capacity, gives everything back, and leaves the context stack as it was") {
    Ctx ctx;
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    growFourTimes(ctx.dev);
    CHECK_MESSAGE(wbx::contextStack() == stackBefore, "the context stack changed");
  }

  // The memory is dev's, not device 0's and not the current context's device's.
  TEST_CASE("R2 R3: a buffer for device 1, grown while device 0's context is current, is device 1's memory, read-write for device 1") {
    wbx::needDevices(2);  // one GPU: this case reports itself skipped, the rest still count
    Ctx ctx;
    const CUdevice dev1 = wbt::device(1);
    const size_t g1 = granularity(dev1);
    const wbx::Holdings before = wbx::holdings();
    {
      ex14::GrowableBuffer buf(dev1, size_t{64} << 20);
      buf.grow(g1 + 1);
      CHECK(buf.size() == 2 * g1);
      CHECK_MESSAGE(readWriteThroughout(dev1, buf.data(), buf.size(), g1), "device 1 may not read and write its buffer");
      CHECK_MESSAGE(homeOf(buf.data()) == 1, "the buffer for device 1 is not on device 1");
      CHECK(homeOf(buf.data() + g1) == 1);
    }
    CHECK(wbx::holdings().differenceFrom(before).empty());
  }

  TEST_CASE("R1 R5: a capacity that is not whole granules is rounded up, and the buffer may use all of it and no more") {
    Ctx ctx;
    const size_t g = granularity(ctx.dev);
    const wbx::Holdings before = wbx::holdings();
    {
      ex14::GrowableBuffer buf(ctx.dev, 3 * g + 1);
      buf.grow(2 * g);
      CHECK_NOTHROW(buf.grow(4 * g));  // the capacity rounded up: the buffer's to use
      CHECK(buf.size() == 4 * g);
      CHECK(readWriteThroughout(ctx.dev, buf.data(), buf.size(), g));
      const wbx::Holdings full = wbx::holdings();
      CHECK_THROWS_AS(buf.grow(4 * g + 1), std::length_error);
      CHECK(buf.size() == 4 * g);
      CHECK(wbx::holdings().differenceFrom(full).empty());
    }
    CHECK(wbx::holdings().differenceFrom(before).empty());
  }

  TEST_CASE("R6 R9: when cuMemCreate, cuMemMap or cuMemSetAccess fails in a grow, grow throws and the buffer and the context stack are as they were; the next grow works") {
    Ctx ctx;
    const size_t g = granularity(ctx.dev);
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    const wbx::Holdings start = wbx::holdings();
    {
      ex14::GrowableBuffer buf(ctx.dev, size_t{64} << 20);
      buf.grow(g);
      REQUIRE(readWriteThroughout(ctx.dev, buf.data(), buf.size(), g));
      CU_CHECK(cuMemsetD32(buf.data(), kMark, g / sizeof(uint32_t)));
      int failures = 0;
      for (const char* function : {"cuMemCreate", "cuMemMap", "cuMemSetAccess"}) {
        for (unsigned nth : {1u, 2u}) {  // a grow may create and map more than one piece
          CAPTURE(function);
          CAPTURE(nth);
          const size_t sizeBefore = buf.size();
          const wbx::Holdings before = wbx::holdings();
          // Two granules more each time: a grow the failure did not reach has grown the buffer.
          const Failed f = withFailing(function, nth, [&] { buf.grow(sizeBefore + 2 * g); });
          if (!f.fired) {
            CHECK_MESSAGE(nth > 1, "grow did not call it");
            continue;
          }
          ++failures;
          const std::string left = wbx::holdings().differenceFrom(before);
          CAPTURE(left);
          CHECK_MESSAGE(f.threw, "grow did not throw when the call failed");
          CHECK_MESSAGE(buf.size() == sizeBefore, "a failed grow changed size()");
          CHECK_MESSAGE(left.empty(), "a failed grow left something held: give back what it took before you throw");
          CHECK_MESSAGE(wbx::contextStack() == stackBefore, "a grow that threw left the context stack changed");
        }
      }
      CHECK(failures >= 3);
      const size_t sizeBefore = buf.size();
      buf.grow(sizeBefore + 2 * g);
      CHECK_MESSAGE(buf.size() == sizeBefore + 2 * g, "the grow after a failed one did not work");
      REQUIRE(readWriteThroughout(ctx.dev, buf.data(), buf.size(), g));
      uint32_t first = 0;
      CU_CHECK(cuMemcpyDtoH(&first, buf.data(), sizeof first));
      CHECK_MESSAGE(first == kMark, "the contents did not survive");
    }
    CHECK(wbx::holdings().differenceFrom(start).empty());
  }
}

EXERCISE("granular-alloc", "A cuMemAlloc replacement that maps whole granules and no more",
         "g from cuMemGetAllocationGranularity with CU_MEM_ALLOC_GRANULARITY_MINIMUM; size = (bytes + g - 1) / g * g "
         "in size_t, which adds no granule to a size that is a multiple already. cuMemAddressReserve(&ptr, size, g, 0, "
         "0), cuMemCreate, cuMemMap, cuMemRelease (the mapping keeps the memory), cuMemSetAccess for dev. Where a "
         "call fails, undo the ones before it (cuMemUnmap, cuMemRelease, cuMemAddressFree) and throw.") {
  TEST_CASE("R1 R2 R3 R4 R6: each size is the request rounded up to the granularity, on dev, mapped read-write at a multiple of it, held by the mapping only, and unmapping gives everything back") {
    Ctx ctx;
    const size_t g = granularity(ctx.dev);
    const size_t requests[] = {1, g - 1, g, g + 1, 3 * g, (size_t{64} << 20) + 1, (size_t{4} << 30) + 1};
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    const wbx::Holdings before = wbx::holdings();
    {
      Allocations taken;
      for (size_t bytes : requests) {
        CAPTURE(bytes);
        const wbx::Holdings pre = wbx::holdings();
        taken.all.push_back(ex14::allocate(ctx.dev, bytes));
        const ex14::Allocation a = taken.all.back();
        const long handles = wbx::holdings()[wbx::Held::MemHandles] - pre[wbx::Held::MemHandles];
        CHECK_MESSAGE(a.size == roundUp(bytes, g), "not the request rounded up to the granularity");
        CHECK(a.ptr % g == 0);
        CHECK_MESSAGE(handles == 0, "the allocation handle is still held: cuMemRelease it once mapped");
        const bool rw = canReadWrite(ctx.dev, a.ptr);
        CHECK_MESSAGE(rw, "cuMemGetAccess does not say read-write for dev");
        if (!rw || a.size == 0) continue;  // touching memory without access would fault
        CHECK(homeOf(a.ptr) == static_cast<int>(ctx.dev));
        CHECK(cuMemsetD8(a.ptr, 0xA5, a.size) == CUDA_SUCCESS);
        CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
        unsigned char ends[2] = {0, 0};
        CHECK(cuMemcpyDtoH(&ends[0], a.ptr, 1) == CUDA_SUCCESS);
        CHECK(cuMemcpyDtoH(&ends[1], a.ptr + a.size - 1, 1) == CUDA_SUCCESS);
        CHECK(ends[0] == 0xA5);
        CHECK(ends[1] == 0xA5);
      }
    }
    const std::string left = wbx::holdings().differenceFrom(before);
    CAPTURE(left);
    CHECK_MESSAGE(left.empty(), "after cuMemUnmap and cuMemAddressFree something is still held: release the handle once mapped");
    CHECK_MESSAGE(wbx::contextStack() == stackBefore, "the context stack changed");
  }

  // The memory is dev's, not device 0's and not the current context's device's.
  TEST_CASE("R2 R3: an allocation for device 1, made while device 0's context is current, is device 1's memory, read-write for device 1") {
    wbx::needDevices(2);  // one GPU: this case reports itself skipped, the rest still count
    Ctx ctx;
    const CUdevice dev1 = wbt::device(1);
    const size_t g1 = granularity(dev1);
    const wbx::Holdings before1 = wbx::holdings();
    {
      Allocations taken;
      taken.all.push_back(ex14::allocate(dev1, g1 + 1));
      const ex14::Allocation a = taken.all.back();
      CHECK(a.size == 2 * g1);
      CHECK_MESSAGE(canReadWrite(dev1, a.ptr), "device 1 may not read and write its allocation");
      CHECK_MESSAGE(homeOf(a.ptr) == 1, "the allocation for device 1 is not on device 1");
    }
    CHECK(wbx::holdings().differenceFrom(before1).empty());
  }

  TEST_CASE("R5 R6: when the device has not the memory, or cuMemCreate, cuMemMap or cuMemSetAccess fails, allocate throws, leaves nothing held and the context stack as it was") {
    Ctx ctx;
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    size_t total = 0;
    CU_CHECK(cuDeviceTotalMem(&total, ctx.dev));
    const size_t g = granularity(ctx.dev);
    {
      INFO("asked for twice the device's memory");
      const wbx::Holdings before = wbx::holdings();
      Allocations taken;
      bool threw = false;
      try {
        taken.all.push_back(ex14::allocate(ctx.dev, 2 * total + 1));
      } catch (const wb::NotDone&) {
        throw;
      } catch (const std::exception&) {
        threw = true;
      }
      const std::string left = wbx::holdings().differenceFrom(before);
      CAPTURE(left);
      CHECK_MESSAGE(threw, "allocate did not throw although the memory could not be created");
      CHECK_MESSAGE(left.empty(), "a failed allocate left something held (the reservation?)");
      CHECK_MESSAGE(wbx::contextStack() == stackBefore, "an allocate that threw left the context stack changed");
    }
    for (const char* function : {"cuMemCreate", "cuMemMap", "cuMemSetAccess"}) {
      CAPTURE(function);
      const wbx::Holdings before = wbx::holdings();
      Allocations taken;
      const Failed f = withFailing(function, 1, [&] { taken.all.push_back(ex14::allocate(ctx.dev, 3 * g)); });
      const std::string left = wbx::holdings().differenceFrom(before);
      CAPTURE(left);
      CHECK_MESSAGE(f.fired, "allocate did not call it");
      CHECK_MESSAGE(f.threw, "allocate did not throw when it failed");
      CHECK_MESSAGE(left.empty(), "a failed allocate left something held: undo what came before the failure");
      CHECK_MESSAGE(wbx::contextStack() == stackBefore, "an allocate that threw left the context stack changed");
    }
  }
}

EXERCISE("share-handle", "Mapping memory another process exported as a file descriptor",
         "cuMemImportFromShareableHandle(&handle, (void*)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR); "
         "then as for your own memory: cuMemAddressReserve, cuMemMap, cuMemRelease of the imported handle, and "
         "cuMemSetAccess for dev (the exporter's access does not carry over: a new mapping starts with none). Do not "
         "close fd. Where a call fails, release the import and free the addresses before you throw.") {
  // In the child: the descriptor arrives on the socket WORKBOOK_SHARE_SOCKET names; the learner's
  // mapShared maps it for the device WORKBOOK_SHARE_DEVICE names.
  TEST_CASE("child: mapShared in the receiving process" * doctest::skip(!wbt::inChild())) { mapInChild(); }

  TEST_CASE("R1 R2 R3 R4 R5 R6: a child process maps what this process exported, reads its data and writes into it; with memory on device 1 too") {
    wbt::initDriver();
    shareWithChild(0);
    wbx::needDevices(2);
    shareWithChild(1);
  }
}

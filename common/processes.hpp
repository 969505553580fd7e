// What lesson 17's programs (lessons/17-processes/main.cpp and deeper.cpp, the program of its
// optional page), its tests (tests/lesson17_processes.hpp) and its exercise checks share: the
// messages a parent and its child exchange over a channel (common/channel.hpp), the gate kernel
// that says when it runs, memory shared between processes as a POSIX file descriptor, patterns in
// device memory, and whether the device lets several processes share it. wb::talk holds the
// programs' side of the talk, which stops the lesson with what went wrong (the tests REQUIRE).
#pragma once

#include "channel.hpp"
#include "gate.hpp"
#include "workbook.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace wb {

// ---- What parent and children say to each other -------------------------------------------------

//! [talk]
// One datagram: a word for what it is, up to four numbers, and room for an IPC memory handle and an
// IPC event handle (64 bytes each).
struct Note {
  char what[16] = {};
  int64_t v[4] = {};
  unsigned char mem[CU_IPC_HANDLE_SIZE] = {};
  unsigned char event[CU_IPC_HANDLE_SIZE] = {};
};
//! [talk]

inline Note note(const char* what, int64_t a = 0, int64_t b = 0, int64_t c = 0, int64_t d = 0) {
  Note n;
  std::snprintf(n.what, sizeof n.what, "%s", what);
  n.v[0] = a, n.v[1] = b, n.v[2] = c, n.v[3] = d;
  return n;
}

inline bool said(const Note& n, const char* what) { return std::strncmp(n.what, what, sizeof n.what) == 0; }

inline std::string wordOf(const Note& n) { return std::string(n.what, strnlen(n.what, sizeof n.what)); }

// The programs' side (a nested namespace: a test's own await and tell stay unambiguous).
namespace talk {

constexpr double kReplySeconds = 10;  // how long one side waits for the other's next message

// Thrown in a child whose parent says "quit" instead of its next command: it ends, exit code 0.
struct Quit {};

//! [await]
// In a child: the parent's next message, which must be `what`, waited for at most kReplySeconds;
// and a message to the parent, with a descriptor where fd is one.
inline Note await(int parent, const char* what, int* fd = nullptr) {
  Note n;
  if (receiveMessage(parent, &n, sizeof n, fd, kReplySeconds) != Received::Message)
    throw std::runtime_error(std::string("no \"") + what + "\" from the parent within its time");
  if (said(n, "quit")) throw Quit{};
  if (!said(n, what))
    throw std::runtime_error(std::string("expected \"") + what + "\", the parent said \"" + wordOf(n) + "\"");
  return n;
}

inline void tell(int parent, const Note& n, int fd = -1) {
  if (!sendMessage(parent, &n, sizeof n, fd)) throw std::runtime_error("cannot send to the parent");
}
//! [await]

inline std::string howItEnded(const ProcessEnd& end, unsigned limit) {
  if (end.timedOut) return "it hung and was ended after " + std::to_string(limit) + " s";
  if (end.signal) return "it was killed by signal " + std::to_string(end.signal);
  return "it exited with code " + std::to_string(end.code);
}

// In the parent: the child's next message, which must be `what`; otherwise the lesson stops and says
// what the child did instead, and how it ended (its last line of output).
inline Note hear(ChildChannel& child, const char* who, const char* what, unsigned limit,
                 int* fd = nullptr) {
  Note n;
  const bool got = child.receive(n, kReplySeconds, fd);
  if (got && said(n, what)) return n;
  std::string instead =
      got ? "it said \"" + wordOf(n) + "\"" : std::string("it said nothing within its time");
  child.send(note("quit"));  // a child still waiting for its next word ends now
  const ProcessEnd& end = child.end();
  instead += "; " + howItEnded(end, limit);
  const std::string& out = end.output;
  const size_t last = out.size() > 1 ? out.find_last_of('\n', out.size() - 2) : std::string::npos;
  if (!out.empty()) instead += ": " + out.substr(last == std::string::npos ? 0 : last + 1);
  expect(false, std::string(who) + " saying \"" + what + "\"", instead);
  return n;
}

// The primary context of device 0, current in this thread, released at scope exit.
struct Primary {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  Primary() {
    CU_CHECK(cuInit(0));
    CU_CHECK(cuDeviceGet(&dev, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU_CHECK(cuCtxSetCurrent(ctx));
  }
  ~Primary() {
    cuCtxSetCurrent(nullptr);
    cuDevicePrimaryCtxRelease(dev);
  }
  Primary(const Primary&) = delete;
  Primary& operator=(const Primary&) = delete;
};

}  // namespace talk

// ---- A gate that says when it runs --------------------------------------------------------------

//! [start-gate]
// announced_gate (kernels/processes.cu) launched in a stream over words of its own ([0] it runs,
// [1] the gate, [2] its outcome, 0 while it waits). The constructor returns once the GPU says the
// kernel runs: from then on it surely waits. Like wb::Gate, it is opened, and waited for, at scope
// exit.
class AnnouncedGate {
 public:
  AnnouncedGate(CUfunction kernel, CUstream stream, double deadlineSeconds) : stream_(stream) {
    CUdeviceptr running = words_.device(0), gate = words_.device(1), outcome = words_.device(2);
    unsigned long long deadlineNs = static_cast<unsigned long long>(deadlineSeconds * 1e9);
    void* args[] = {&running, &gate, &deadlineNs, &outcome};
    CU_CHECK(cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr));
    const Stopwatch clock;
    while (words_.read(0) == 0 && clock.ms() < deadlineSeconds * 1000) std::this_thread::yield();
    if (words_.read(0) == 0) {
      open();
      cuStreamSynchronize(stream_);  // its words must outlive it
      throw std::runtime_error("the gate kernel did not start within its deadline");
    }
  }
  ~AnnouncedGate() {
    open();
    cuStreamSynchronize(stream_);
  }
  AnnouncedGate(const AnnouncedGate&) = delete;
  AnnouncedGate& operator=(const AnnouncedGate&) = delete;
  void open() { words_.write(1, 1); }
  unsigned outcome() const { return words_.read(2); }

 private:
  PinnedWords words_{3};
  CUstream stream_;
};
//! [start-gate]

// ---- Whether several processes may share device 0 -----------------------------------------------

// Whether several processes may share device 0, and how. The compute mode may allow one process
// only, or none; under MPS, "exclusive-mode restrictions are applied to the MPS server, not MPS
// clients" (NVIDIA's MPS documentation), so clients share even an EXCLUSIVE_PROCESS device, and their
// kernels may run side by side. Without MPS, whether a kernel that never ends can be switched out
// for another process's depends on compute preemption, which the device reports.
struct Sharing {
  int mode = -1, mps = 0, preemption = 0;
  bool severalProcesses() const {
    return mode == CU_COMPUTEMODE_DEFAULT || (mode == CU_COMPUTEMODE_EXCLUSIVE_PROCESS && mps);
  }
};

inline Sharing sharingOf(CUdevice dev) {
  Sharing s;
  CU_CHECK(cuDeviceGetAttribute(&s.mode, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, dev));
  CU_CHECK(cuDeviceGetAttribute(&s.mps, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, dev));
  CU_CHECK(cuDeviceGetAttribute(&s.preemption, CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, dev));
  return s;
}

inline const char* computeModeName(int mode) {
  switch (mode) {
    case CU_COMPUTEMODE_DEFAULT: return "CU_COMPUTEMODE_DEFAULT";
    case CU_COMPUTEMODE_PROHIBITED: return "CU_COMPUTEMODE_PROHIBITED";
    case CU_COMPUTEMODE_EXCLUSIVE_PROCESS: return "CU_COMPUTEMODE_EXCLUSIVE_PROCESS";
  }
  return "an unknown mode";
}

// A device that takes one process only stops the program before it begins, naming the mode.
inline Sharing expectSeveralProcesses(CUdevice dev0) {
  const Sharing s = sharingOf(dev0);
  expect(s.severalProcesses(), "a device on which several processes may each have a context",
         std::string("device 0's compute mode is ") + computeModeName(s.mode) +
             (s.mps ? ", under MPS" : ", and MPS is not enabled"));
  return s;
}

// ---- Patterns in device memory --------------------------------------------------------------------

inline uint32_t patternAt(uint32_t seed, size_t i) { return seed ^ static_cast<uint32_t>(i * 2654435761u); }

inline std::vector<uint32_t> pattern(uint32_t seed, size_t words) {
  std::vector<uint32_t> v(words);
  for (size_t i = 0; i < words; ++i) v[i] = patternAt(seed, i);
  return v;
}

// How many of the words at p are the pattern of seed.
inline size_t wordsOfPattern(CUdeviceptr p, size_t words, uint32_t seed) {
  std::vector<uint32_t> v(words);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, words * sizeof(uint32_t)));
  size_t right = 0;
  for (size_t i = 0; i < words; ++i) right += v[i] == patternAt(seed, i);
  return right;
}

inline unsigned firstWord(CUdeviceptr p) {
  unsigned w = 0;
  CU_CHECK(cuMemcpyDtoH(&w, p, sizeof w));
  return w;
}

// ---- Memory shared as a POSIX file descriptor ---------------------------------------------------

inline size_t granularity(CUdevice dev,
                          CUmemAllocationHandleType type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = type;
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  return granule;
}

struct Mapped {
  CUdeviceptr ptr = 0;
  size_t size = 0;
};

inline Mapped mapHere(CUmemGenericAllocationHandle handle, size_t size, CUdevice dev) {
  Mapped m{0, size};
  CU_CHECK(cuMemAddressReserve(&m.ptr, size, granularity(dev, CU_MEM_HANDLE_TYPE_NONE), 0, 0));
  CU_CHECK(cuMemMap(m.ptr, size, 0, handle, 0));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemSetAccess(m.ptr, size, &access, 1));
  return m;
}

inline void unmap(const Mapped& m) {
  CU_CHECK(cuMemUnmap(m.ptr, m.size));
  CU_CHECK(cuMemAddressFree(m.ptr, m.size));
}

// Memory shared by descriptor needs virtual memory management and the POSIX file descriptor handle
// type: a device without either names the reason ("" where it has both) instead of failing in
// cuMemCreate.
inline std::string fdSharingMissing(CUdevice dev) {
  int vmm = 0, fd = 0;
  CU_CHECK(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
  CU_CHECK(cuDeviceGetAttribute(&fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, dev));
  if (vmm != 1)
    return "device 0 has no virtual memory management (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)";
  if (fd != 1)
    return "device 0 cannot export memory as a POSIX file descriptor "
           "(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)";
  return "";
}

//! [export]
// The exporter's side: memory made for sharing as a POSIX file descriptor, mapped here, and the
// descriptor. The handle is released at once: the mapping and the descriptor hold the memory.
struct Shared {
  Mapped mapped;
  int fd = -1;
};

inline Shared createShared(CUdevice dev, size_t bytes) {
  const size_t granule = granularity(dev, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  const size_t size = (bytes + granule - 1) / granule * granule;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, size, &prop, 0));
  Shared s;
  s.mapped = mapHere(handle, size, dev);
  CU_CHECK(cuMemExportToShareableHandle(&s.fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  CU_CHECK(cuMemRelease(handle));
  return s;
}
//! [export]

//! [import]
// The importer's side: the descriptor the message carried becomes a handle of this process, mapped
// at addresses of its own and granted to the device; both go at once: the mapping holds the memory.
inline Mapped importShared(int fd, size_t size, CUdevice dev) {
  expect(fd >= 0, "a descriptor arriving with the message", "the message carried none");
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
  const Mapped m = mapHere(handle, size, dev);
  CU_CHECK(cuMemRelease(handle));
  return m;
}
//! [import]

}  // namespace wb

// Helpers for the doctest suites: driver set-up, and owners that give every handle back even when
// an assertion ends a test early (REQUIRE throws, and the destructors still run).
#pragma once

#include <doctest/doctest.h>

#include "device_contexts.hpp"
#include "process.hpp"
#include "vector_ops.hpp"
#include "workbook.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace wbt {

namespace detail {
inline std::string& skipReason() {
  static std::string reason;
  return reason;
}
}  // namespace detail

// Marks the running case skipped, with the reason (a device without the feature it needs): the
// case is then not counted as passed, the [suites] lines say why, and a process whose cases were
// all skipped exits 77, which ctest shows as skipped. Return from the case after calling it.
inline void skipCase(const std::string& why) {
  detail::skipReason() = why;
  MESSAGE("skipped: " << why);
}

inline int initDriver() {
  CU_CHECK(cuInit(0));
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  REQUIRE(count > 0);
  return count;
}

inline CUdevice device(int ordinal) {
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, ordinal));
  return dev;
}

inline int attribute(CUdevice dev, CUdevice_attribute attr) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, attr, dev));
  return value;
}

// The current context, or nullptr.
inline CUcontext current() {
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxGetCurrent(&ctx));
  return ctx;
}

// Free device memory as the current context's device reports it.
inline size_t freeMemory() {
  size_t free = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&free, &total));
  return free;
}

// A context made with cuCtxCreate (pushed, so current), destroyed at scope exit.
class OwnedContext {
 public:
  explicit OwnedContext(CUdevice dev, unsigned flags = 0) { CU_CHECK(wb::createContext(&ctx_, flags, dev)); }
  ~OwnedContext() {
    if (ctx_) cuCtxDestroy(ctx_);
  }
  OwnedContext(const OwnedContext&) = delete;
  OwnedContext& operator=(const OwnedContext&) = delete;
  CUcontext get() const { return ctx_; }
  // Destroys now, for tests about what destruction gives back.
  void destroy() {
    CU_CHECK(cuCtxDestroy(ctx_));
    ctx_ = nullptr;
  }

 private:
  CUcontext ctx_ = nullptr;
};

// A retain of a device's primary context, released at scope exit.
class RetainedPrimary {
 public:
  explicit RetainedPrimary(CUdevice dev) : dev_(dev) { CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev)); }
  ~RetainedPrimary() {
    if (ctx_) cuDevicePrimaryCtxRelease(dev_);
  }
  RetainedPrimary(const RetainedPrimary&) = delete;
  RetainedPrimary& operator=(const RetainedPrimary&) = delete;
  CUcontext get() const { return ctx_; }
  CUdevice device() const { return dev_; }

 private:
  CUdevice dev_;
  CUcontext ctx_ = nullptr;
};

// Initialises the driver and returns device `ordinal`, whose primary context this process then
// keeps retained until it exits. Building a context and tearing it down costs about 0.15 s (on an
// H200, driver 580): when every test case's last release ended the primary context, the next case
// built it again, and a lesson's suites took seconds. Suites whose claims are not about a
// context's start or end (lessons 03 and 04 are) use this, so a case's own retain and release
// only count; a case that needs a fresh context creates one (OwnedContext).
inline CUdevice deviceKeepingPrimary(int ordinal = 0) {
  initDriver();
  const CUdevice dev = device(ordinal);
  struct Kept {
    std::vector<CUdevice> devices;
    ~Kept() {  // at exit: the last release, which gives the primary contexts back
      for (CUdevice d : devices) cuDevicePrimaryCtxRelease(d);
    }
  };
  static Kept kept;
  for (CUdevice d : kept.devices)
    if (d == dev) return dev;
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  kept.devices.push_back(dev);
  return dev;
}

// A pattern of 32-bit words that no two seeds share: word i of seed s.
inline uint32_t patternAt(uint32_t seed, size_t i) { return seed ^ static_cast<uint32_t>(i * 2654435761u); }

// The kernel `name` of a library as a CUfunction of the current context (which loads it there).
inline CUfunction functionOf(CUlibrary library, const char* name) {
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library, name));
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
  return f;
}

// Pushes a context for the scope, so a test leaves the thread's stack as it found it: the one lesson
// 18's program uses (common/device_contexts.hpp).
using Pushed = wb::On;

// Device memory from cuMemAlloc in the current context, freed at scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { CU_CHECK(cuMemAlloc(&ptr_, bytes)); }
  ~DeviceBuffer() {
    if (ptr_) cuMemFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_;
};

// Memory set, and landed: cuMemsetD8/D32 run in the legacy stream and may return before they land,
// and what reads the memory next (a non-blocking stream, which does not wait for the legacy stream;
// another process; another device) sees the bytes only once the context has been waited for.
inline void setBytes(CUdeviceptr at, unsigned char value, size_t bytes) {
  CU_CHECK(cuMemsetD8(at, value, bytes));
  CU_CHECK(cuCtxSynchronize());
}
inline void setWords(CUdeviceptr at, unsigned value, size_t words) {
  CU_CHECK(cuMemsetD32(at, value, words));
  CU_CHECK(cuCtxSynchronize());
}

// A stream of the current context, non-blocking unless flags say otherwise. At scope exit it ends a
// capture left open (an assertion may end a test mid-capture), waits for its work and is
// destroyed: declare gates after it, so that they are opened first.
class Stream {
 public:
  explicit Stream(unsigned flags = CU_STREAM_NON_BLOCKING) { CU_CHECK(cuStreamCreate(&s_, flags)); }
  ~Stream() {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (cuStreamIsCapturing(s_, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE) {
      CUgraph left = nullptr;
      cuStreamEndCapture(s_, &left);
      if (left) cuGraphDestroy(left);
    }
    cuStreamSynchronize(s_);
    cuStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return s_; }
  void sync() const { CU_CHECK(cuStreamSynchronize(s_)); }

 private:
  CUstream s_ = nullptr;
};

// Behaviour the reference leaves undefined or unspecified (a handle used after cuLibraryUnload or
// cuCtxDestroy) may crash the process, so tests that provoke it run it in a child: this binary again, running one
// test case with WORKBOOK_CHILD=1 set. Such cases carry * doctest::skip(!wbt::inChild()).
inline bool inChild() { return std::getenv("WORKBOOK_CHILD") != nullptr; }

struct ChildEnd {
  bool crashed = false;   // ended by a signal (the time limit's SIGALRM included)
  bool timedOut = false;  // ended by the time limit: it hung
  int code = -1;          // exit code otherwise
  std::string output;
};

// Runs one test case of this binary in a child process, ended after limitSeconds if it hangs.
inline ChildEnd runInChild(const std::string& testCase, unsigned limitSeconds = 60) {
  const wb::ProcessEnd end = wb::runProcess({wb::selfPath(), "--test-case=" + testCase, "--no-version"},
                                            {"WORKBOOK_CHILD=1"}, limitSeconds);
  ChildEnd child;
  child.crashed = end.signal != 0;
  child.timedOut = end.timedOut;
  child.code = end.code;
  child.output = end.output;
  return child;
}

}  // namespace wbt

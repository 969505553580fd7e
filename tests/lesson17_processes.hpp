// What lesson 17's suites (tests/lesson17_processes.cpp) and its exercise checks
// (tests/exercises/exercise17_processes.cpp) both stand on: the messages a test and its child
// process exchange over a channel (common/channel.hpp), each wait with a deadline; the lab; pinned
// host memory; patterns in device memory; the granularity of shareable memory. The messages and the
// granularity are the lesson's programs' own (common/processes.hpp).
#pragma once

#include "channel.hpp"
#include "gate.hpp"
#include "processes.hpp"
#include "support.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace l17 {

constexpr double kReplySeconds = 10, kGateSeconds = 5;
constexpr uint32_t kStale = 0xDEADBEEFu, kFresh = 0x600DDA7Au, kUnread = 0xFFFFFFFFu;

// What a test and a child of the same binary say to each other: one datagram each, with up to four
// numbers and room for an IPC memory handle and an IPC event handle (the programs' own messages).
using wb::granularity;  // of memory shareable as a POSIX file descriptor
using wb::note;
using wb::Note;
using wb::said;

// In a child: its end of the channel, the parent's next message (which must be `what`), and a reply.
inline int parentChannel() {
  const int fd = wb::channelFromParent();
  REQUIRE_MESSAGE(fd >= 0, "started without a channel (WORKBOOK_CHANNEL)");
  return fd;
}

inline Note await(int parent, const char* what, int* fd = nullptr) {
  Note n;
  REQUIRE(wb::receiveMessage(parent, &n, sizeof n, fd, kReplySeconds) == wb::Received::Message);
  REQUIRE(said(n, what));
  return n;
}

inline void tell(int parent, const Note& n, int fd = -1) { REQUIRE(wb::sendMessage(parent, &n, sizeof n, fd)); }

// In the test: this binary again, running one child test case, with a channel, the environment
// changed by env (wb::runProcess) and a time limit.
struct Child {
  Child(const char* testCase, const std::vector<std::string>& env, unsigned limitSeconds)
      : channel({wb::selfPath(), std::string("--test-case=") + testCase, "--no-version"}, env, limitSeconds) {}
  ~Child() { channel.send(note("quit")); }  // a child still waiting (a test or check that stopped early) ends now
  wb::ChildChannel channel;

  Note hear(const char* what, int* fd = nullptr) {
    Note n;
    const bool got = channel.receive(n, kReplySeconds, fd);
    if (!got || !said(n, what)) {
      const wb::ProcessEnd& end = channel.end();
      const std::string instead = got ? "it said \"" + std::string(n.what, strnlen(n.what, sizeof n.what)) + "\""
                                      : std::string("it said nothing within its time");
      FAIL("the child did not say \"" << std::string(what) << "\" (" << instead << "); it ended with signal "
                                        << end.signal << ", exit code " << end.code << ":\n" << end.output);
    }
    return n;
  }
  void say(const Note& n) { REQUIRE(channel.send(n)); }
};

using wbt::patternAt;

// The primary context of device 0, current; with the kernels of streams.fatbin where asked.
struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  explicit Lab(bool kernels = false) {
    if (!kernels) return;
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);  // loaded before any gate closes
  }
  ~Lab() {
    if (library) cuLibraryUnload(library);
  }
  CUdevice dev() const { return primary.device(); }
};


// Pinned host memory (so an asynchronous copy into it stays asynchronous), freed at scope exit.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t words) : words_(words) {
    CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&p_), words * sizeof(uint32_t)));
    std::fill(p_, p_ + words, kUnread);
  }
  ~PinnedBuffer() { cuMemFreeHost(p_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  uint32_t* get() const { return p_; }
  size_t count(uint32_t value) const { return static_cast<size_t>(std::count(p_, p_ + words_, value)); }

 private:
  uint32_t* p_ = nullptr;
  size_t words_;
};


}  // namespace l17

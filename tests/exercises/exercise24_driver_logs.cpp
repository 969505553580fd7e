// The checks of lesson 24's exercises (lessons/24-driver-logs/exercises.cpp). The log is the
// process's: each check takes an iterator of its own first and compares with what it reads from it.
// The check stands between the code and cuLogsRegisterCallback / cuLogsUnregisterCallback to see
// which handles stay registered, and unregisters any left behind before a wrong answer's callback
// could be called into a collector that is gone. It stands between the code and cuCtxGetLimit /
// cuCtxSetLimit too, to count them and fail them, and notes the FIFO size each cuCtxSetLimit asks for
// (printf-room); and before cuLogsCurrent, to fail it (driver-reason). Each case's name begins with
// the requirements it verifies.
#include "check.hpp"
#include "24-driver-logs/exercises.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// The limit calls, counted and able to fail (ledger.cpp does not stand before them).
WBX_INTERPOSE(cuCtxGetLimit, (size_t * value, CUlimit limit), (value, limit))

namespace {
size_t lastFifoAsked = 0;  // the value of the last cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, ...) made
}  // namespace

extern "C" CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) {
  using Real = CUresult(CUDAAPI*)(CUlimit, size_t);
  static const auto real = reinterpret_cast<Real>(wbx::detail::real("cuCtxSetLimit"));
  if (limit == CU_LIMIT_PRINTF_FIFO_SIZE) lastFifoAsked = value;
  if (const CUresult injected = wbx::detail::enter("cuCtxSetLimit")) return injected;
  return real ? real(limit, value) : CUDA_ERROR_NOT_FOUND;
}

#if CUDA_VERSION >= 12090
WBX_INTERPOSE(cuLogsCurrent, (CUlogIterator * iterator_out, unsigned int flags), (iterator_out, flags))

namespace {
std::mutex registeredMutex;
std::vector<CUlogsCallbackHandle> registered;  // handles registered and not yet unregistered
std::vector<CUlogsCallbackHandle> unregistered;  // every handle unregistered successfully, in order

using RegisterFn = CUresult(CUDAAPI*)(CUlogsCallback, void*, CUlogsCallbackHandle*);
using UnregisterFn = CUresult(CUDAAPI*)(CUlogsCallbackHandle);
UnregisterFn realUnregister() {
  static const auto real = reinterpret_cast<UnregisterFn>(wbx::detail::real("cuLogsUnregisterCallback"));
  return real;
}
}  // namespace

extern "C" CUresult CUDAAPI cuLogsRegisterCallback(CUlogsCallback callback, void* data, CUlogsCallbackHandle* out) {
  static const auto real = reinterpret_cast<RegisterFn>(wbx::detail::real("cuLogsRegisterCallback"));
  if (const CUresult injected = wbx::detail::enter("cuLogsRegisterCallback")) return injected;
  if (!real) return CUDA_ERROR_NOT_FOUND;
  CUlogsCallbackHandle handle = nullptr;  // callback_out is optional: the check wants the handle anyway
  const CUresult rc = real(callback, data, &handle);
  if (out) *out = handle;
  if (rc == CUDA_SUCCESS) {
    const std::lock_guard<std::mutex> lock(registeredMutex);
    registered.push_back(handle);
  }
  return rc;
}

extern "C" CUresult CUDAAPI cuLogsUnregisterCallback(CUlogsCallbackHandle handle) {
  if (const CUresult injected = wbx::detail::enter("cuLogsUnregisterCallback")) return injected;
  if (!realUnregister()) return CUDA_ERROR_NOT_FOUND;
  const CUresult rc = realUnregister()(handle);
  if (rc == CUDA_SUCCESS) {
    const std::lock_guard<std::mutex> lock(registeredMutex);
    registered.erase(std::remove(registered.begin(), registered.end(), handle), registered.end());
    unregistered.push_back(handle);
  }
  return rc;
}
#endif

namespace {

// Device 0's primary context, current for the case (a refused cuMemAlloc needs one).
struct Ctx {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed pushed{primary.get()};
};

#if CUDA_VERSION >= 12090
void needLogs() {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  if (driver < 12090) throw wbx::Skipped("this driver predates error log management (CUDA 12.9)");
}

// Registered handles now, and at scope exit every handle registered since and still registered is
// unregistered by the check itself: a wrong answer's callback must not outlive the case.
class Registrations {
 public:
  Registrations() : before_(now()) {}
  ~Registrations() {
    for (CUlogsCallbackHandle h : leftOver()) realUnregister()(h);
    const std::lock_guard<std::mutex> lock(registeredMutex);
    registered = before_;
  }
  static std::vector<CUlogsCallbackHandle> now() {
    const std::lock_guard<std::mutex> lock(registeredMutex);
    return registered;
  }
  // What was registered since this began and is still registered.
  std::vector<CUlogsCallbackHandle> leftOver() const {
    std::vector<CUlogsCallbackHandle> left;
    for (CUlogsCallbackHandle h : now())
      if (std::find(before_.begin(), before_.end(), h) == before_.end()) left.push_back(h);
    return left;
  }

 private:
  std::vector<CUlogsCallbackHandle> before_;
};

CUlogIterator iteratorNow() {
  CUlogIterator it = 0;
  CU_CHECK(cuLogsCurrent(&it, 0));
  return it;
}

std::string messageOf(const std::string& line) {
  size_t at = 0;
  while (at < line.size() && line[at] == '[') {
    const size_t close = line.find(']', at);
    if (close == std::string::npos) break;
    at = close + 1;
  }
  while (at < line.size() && line[at] == ' ') ++at;
  return line.substr(at);
}

// The messages logged from it on, each stripped of its leading bracketed fields.
std::vector<std::string> messagesSince(CUlogIterator it) {
  std::vector<char> buffer(25600);
  size_t size = buffer.size();
  CU_CHECK(cuLogsDumpToMemory(&it, buffer.data(), &size, 0));
  std::vector<std::string> out;
  std::string line;
  for (size_t i = 0; i <= size; ++i) {
    if (i < size && buffer[i] != '\n') {
      line += buffer[i];
    } else {
      if (!line.empty()) out.push_back(messageOf(line));
      line.clear();
    }
  }
  return out;
}

// The collector's messages as the dump's are compared: without leading bracketed fields (the
// driver's callback gives the message alone on driver 580; were it ever to add them, the same).
std::vector<std::string> stripped(const std::vector<std::string>& messages) {
  std::vector<std::string> out;
  for (const std::string& m : messages) out.push_back(messageOf(m));
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

CUresult refuseAllocation() {
  CUdeviceptr p = 0;
  return cuMemAlloc(&p, 0);
}
#endif

// printf-room.
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kLine = 256;  // the bytes per line the check asks for
// The overflowing requests: lines * bytesPerLine wraps to 0, and to 4096 (not 0: a check of the
// product for 0 lets it through).
static_assert((SIZE_MAX / 2 + 1) * 2 == 0, "wraps to 0");
static_assert((SIZE_MAX / 4096 + 2) * 4096 == 4096, "wraps to 4096");

// The printf FIFO of ctx, read with ctx pushed.
size_t fifoOf(CUcontext ctx) {
  wbt::Pushed in(ctx);
  size_t bytes = 0;
  CU_CHECK(cuCtxGetLimit(&bytes, CU_LIMIT_PRINTF_FIFO_SIZE));
  return bytes;
}

// More than have: have rounded up to a MiB, and extraMiB more. The reference lets the driver clamp
// or round what it is asked; a few MiB above what it already keeps is no value it is expected to cut.
size_t moreThan(size_t have, size_t extraMiB) { return (have + kMiB - 1) / kMiB * kMiB + extraMiB * kMiB; }

// Pops the context on top of the calling thread's stack.
struct PopTop {
  PopTop() {
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
};

// The caller: device 0's primary context (kept for the process: every case would build it again)
// pushed, and a context created on device 0 that is not current (cuCtxCreate pushes it; popped).
struct Caller {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::OwnedContext fresh{primary.device()};
  PopTop popped;
  wbt::Pushed pushed{primary.get()};
};

// Every driver call ensurePrintfRoom could make, as the ledger counts them.
long contextCalls() {
  long n = 0;
  for (const char* f : {"cuCtxPushCurrent", "cuCtxPopCurrent", "cuCtxSetCurrent", "cuCtxGetLimit", "cuCtxSetLimit"})
    n += wbx::calls(f);
  return n;
}

// What one call of ensurePrintfRoom did: returned a size, or threw what.
struct Outcome {
  size_t size = 0;
  bool returned = false, invalidArgument = false, driverError = false;
  CUresult code = CUDA_SUCCESS;
  std::string other;  // another exception's message
};

Outcome ensure(CUcontext ctx, size_t lines, size_t bytesPerLine) {
  Outcome o;
  try {
    o.size = ex24::ensurePrintfRoom(ctx, lines, bytesPerLine);
    o.returned = true;
  } catch (const wb::NotDone&) {
    throw;
  } catch (const std::invalid_argument&) {
    o.invalidArgument = true;
  } catch (const wb::DriverError& e) {
    o.driverError = true;
    o.code = e.code();
  } catch (const std::exception& e) {
    o.other = e.what();
  }
  return o;
}

std::string describe(const Outcome& o) {
  if (o.returned) return "returned " + std::to_string(o.size);
  if (o.invalidArgument) return "threw std::invalid_argument";
  if (o.driverError) return "threw wb::DriverError " + wb::errorName(o.code);
  return "threw " + o.other;
}

// Lesson 24's printf kernel (device_printf.fatbin), loaded for the case.
struct PrintfKernel {
  CUlibrary library = nullptr;
  PrintfKernel() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("device_printf.fatbin").c_str(), nullptr, nullptr,
                                   0, nullptr, nullptr, 0));
  }
  ~PrintfKernel() { cuLibraryUnload(library); }
  PrintfKernel(const PrintfKernel&) = delete;
  PrintfKernel& operator=(const PrintfKernel&) = delete;
  // print_lines with one thread and one line, in ctx, waited for.
  void printOneLine(CUcontext ctx) const {
    wbt::Pushed in(ctx);
    const CUfunction print = wbt::functionOf(library, "print_lines");
    wbt::DeviceBuffer returned(sizeof(int));
    int run = 24, lines = 1;
    CUdeviceptr out = returned.get();
    void* args[] = {&run, &lines, &out};
    CU_CHECK(cuLaunchKernel(print, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
};

}  // namespace

EXERCISE("driver-reason", "The driver's own words for the call that just failed",
         "Take an iterator with cuLogsCurrent just before the call, call it once, and on failure dump from that "
         "iterator with cuLogsDumpToMemory (size: the buffer's bytes, up to 25600); strip each line's leading "
         "[...] fields and join the messages with newlines.") {
  TEST_CASE("R1 R3 R4 R5 R6: driverReason returns the messages of the failed call only, stripped, in order, and the call's result") {
#if CUDA_VERSION >= 12090
    needLogs();
    Ctx ctx;
    Registrations registrations;
    const long registersBefore = wbx::calls("cuLogsRegisterCallback");
    for (int i = 0; i < 3; ++i) refuseAllocation();  // earlier failures, which must not be in the answer
    int ran = 0;
    CUresult result = CUDA_SUCCESS;
    const CUlogIterator mine = iteratorNow();
    const std::string got = ex24::driverReason(
        [&ran] {
          ++ran;
          size_t size = 0;
          return cuLogsDumpToMemory(nullptr, nullptr, &size, 0);  // into no buffer: refused and logged
        },
        result);
    const std::vector<std::string> expected = messagesSince(mine);
    INFO("the driver logged, from the call on:\n" << joined(expected) << "\ndriverReason returned:\n" << got);
    CHECK(ran == 1);
    CHECK(result == CUDA_ERROR_INVALID_VALUE);
    REQUIRE_FALSE(expected.empty());
    CHECK(got == joined(expected));
    CHECK(wbx::calls("cuLogsRegisterCallback") == registersBefore);
#else
    throw wbx::Skipped("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }

  TEST_CASE("R1 R2 R3 R5 R6: driverReason keeps every message of a call that logs several, and returns \"\" for a call that succeeds") {
#if CUDA_VERSION >= 12090
    needLogs();
    Ctx ctx;
    Registrations registrations;
    const long registersBefore = wbx::calls("cuLogsRegisterCallback");
    int ran = 0;
    CUresult result = CUDA_SUCCESS;
    const CUlogIterator mine = iteratorNow();
    // Twelve refusals: a dozen lines or more, more bytes than a buffer of a page or two holds (a
    // line is some 100 bytes with its fields), and far fewer than the 100 entries the log keeps.
    const int refusals = 12;
    const std::string several = ex24::driverReason(
        [&ran] {
          ++ran;
          for (int i = 1; i < refusals; ++i) refuseAllocation();
          return refuseAllocation();
        },
        result);
    const std::vector<std::string> expected = messagesSince(mine);
    INFO("the driver logged, from the call on:\n" << joined(expected) << "\ndriverReason returned:\n" << several);
    CHECK(ran == 1);
    CHECK(result == CUDA_ERROR_INVALID_VALUE);
    CHECK(expected.size() >= static_cast<size_t>(refusals));
    CHECK(several == joined(expected));
    // A call that logs a refusal of its own on the way and then succeeds: the call succeeded, so
    // there is no reason to give, whatever the log holds.
    ran = 0;
    result = CUDA_ERROR_UNKNOWN;
    const std::string none = ex24::driverReason(
        [&ran] {
          ++ran;
          refuseAllocation();
          size_t free = 0, total = 0;
          return cuMemGetInfo(&free, &total);
        },
        result);
    CHECK(ran == 1);
    CHECK(result == CUDA_SUCCESS);
    CHECK_MESSAGE(none == "", "the call succeeded: the answer is \"\", whatever it logged on the way");
    CHECK(wbx::calls("cuLogsRegisterCallback") == registersBefore);
    CHECK(registrations.leftOver().empty());
#else
    throw wbx::Skipped("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }

  TEST_CASE("R7: when cuLogsCurrent fails, the call still runs once, its result is stored, and the answer is \"\"") {
#if CUDA_VERSION >= 12090
    needLogs();
    Ctx ctx;
    int ran = 0;
    CUresult result = CUDA_SUCCESS;
    std::string got = "(nothing: driverReason threw)";
    std::string threw;
    bool fired = false;
    {
      wbx::FailCall fail("cuLogsCurrent", CUDA_ERROR_NOT_SUPPORTED);  // fails without reaching the driver
      try {
        got = ex24::driverReason(
            [&ran] {
              ++ran;
              return refuseAllocation();
            },
            result);
      } catch (const wb::NotDone&) {
        throw;
      } catch (const std::exception& e) {
        threw = e.what();
      }
      fired = fail.fired();
    }
    INFO("driverReason returned:\n" << got << "\nthrew: " << threw);
    REQUIRE_MESSAGE(fired, "driverReason made no cuLogsCurrent call: the task takes the iterator with it");
    CHECK_MESSAGE(ran == 1, "the call did not run exactly once when cuLogsCurrent failed");
    CHECK(result == CUDA_ERROR_INVALID_VALUE);
    CHECK_MESSAGE(threw.empty(), "a failed cuLogsCurrent is no reason to throw: the call's result is what counts");
    CHECK_MESSAGE(got == "", "with no iterator, there is no telling which messages are the call's: the answer is \"\"");
#else
    throw wbx::Skipped("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }
}

EXERCISE("log-collector", "A collector that keeps what the driver logs while it lives",
         "Register a callback in the constructor with the collector as userData, keep the handle, have the "
         "callback call add(), copy each message under the mutex, and unregister that handle in the destructor.") {
  TEST_CASE("R1 R3 R5 R6: a collector keeps every message logged while it lives, from every thread, and unregisters its own handle") {
#if CUDA_VERSION >= 12090
    needLogs();
    Ctx ctx;
    Registrations registrations;
    const size_t unregisteredBefore = unregistered.size();
    const CUlogIterator mine = iteratorNow();
    std::vector<CUlogsCallbackHandle> made;
    {
      ex24::LogCollector collector;
      made = registrations.leftOver();
      refuseAllocation();
      refuseAllocation();
      const std::vector<std::string> expected = messagesSince(mine);
      const std::vector<std::string> got = collector.messages();
      INFO("the driver logged:\n" << joined(expected) << "\nthe collector holds:\n" << joined(got));
      CHECK(made.size() == 1);
      REQUIRE_FALSE(expected.empty());
      CHECK(stripped(got) == expected);
      CHECK(collector.messages() == got);  // asked again: still there
      refuseAllocation();
      CHECK(collector.messages().size() > got.size());
      const size_t beforeThread = collector.messages().size();
      std::thread other([&ctx] {
        cuCtxSetCurrent(ctx.primary.get());
        refuseAllocation();
        cuCtxSetCurrent(nullptr);
      });
      other.join();
      CHECK(collector.messages().size() > beforeThread);
    }
    const std::vector<CUlogsCallbackHandle> left = registrations.leftOver();
    CHECK_MESSAGE(left.empty(), "a callback stays registered after its collector was destroyed");
    const std::vector<CUlogsCallbackHandle> gone(unregistered.begin() + static_cast<long>(unregisteredBefore),
                                                 unregistered.end());
    CHECK(gone == made);
#else
    throw wbx::Skipped("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }

  TEST_CASE("R1: a collector made after another is gone holds none of the other's messages") {
#if CUDA_VERSION >= 12090
    needLogs();
    Ctx ctx;
    Registrations registrations;
    std::vector<std::string> first;
    {
      ex24::LogCollector collector;
      refuseAllocation();
      first = collector.messages();
    }
    for (CUlogsCallbackHandle h : registrations.leftOver()) realUnregister()(h);  // a wrong answer's, before it is called
    REQUIRE_FALSE(first.empty());
    ex24::LogCollector second;
    const CUlogIterator mine = iteratorNow();
    {
      size_t size = 0;
      cuLogsDumpToMemory(nullptr, nullptr, &size, 0);  // refused: other messages than the first's
    }
    const std::vector<std::string> expected = messagesSince(mine);
    INFO("the first held:\n" << joined(first) << "\nthe second holds:\n" << joined(second.messages()));
    CHECK(stripped(second.messages()) == expected);
#else
    throw wbx::Skipped("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }

  TEST_CASE("R3: add keeps length characters, without a trailing newline or NUL") {
#if CUDA_VERSION >= 12090
    needLogs();
    Ctx ctx;
    Registrations registrations;
    ex24::LogCollector collector;
    // What a callback could be handed: a message with a newline at its end, one whose length counts
    // its NUL, and one whose length stops before the end of the text behind it.
    const char withNewline[] = "first message\n";
    const char withNul[] = "second message";  // sizeof counts the NUL
    const char longer[] = "third message, and text behind it";
    collector.add(withNewline, sizeof withNewline - 1);
    collector.add(withNul, sizeof withNul);
    collector.add(longer, std::strlen("third message"));
    const std::vector<std::string> got = collector.messages();  // no driver call in between: these last
    REQUIRE(got.size() >= 3);
    const std::vector<std::string> last(got.end() - 3, got.end());
    const std::vector<std::string> expected = {"first message", "second message", "third message"};
    INFO("the collector's last three messages:\n" << joined(last));
    CHECK(last == expected);
#else
    throw wbx::Skipped("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }

  TEST_CASE("R2: when cuLogsRegisterCallback fails, the constructor throws") {
#if CUDA_VERSION >= 12090
    needLogs();
    Ctx ctx;
    Registrations registrations;
    bool threw = false;
    {
      wbx::FailCall fail("cuLogsRegisterCallback", CUDA_ERROR_INVALID_VALUE);
      try {
        ex24::LogCollector collector;
      } catch (const wb::NotDone&) {
        throw;
      } catch (const std::exception&) {
        threw = true;
      }
      CHECK(fail.fired());
    }
    CHECK(threw);
    CHECK(registrations.leftOver().empty());
#else
    throw wbx::Skipped("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }
}

EXERCISE("printf-room", "Room for a context's printf before its first kernel",
         "Throw std::invalid_argument for a 0 or for lines > SIZE_MAX / bytesPerLine before any driver call; then "
         "push context with an RAII guard that pops it, cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE), return "
         "have when it is enough, else CU_CHECK(cuCtxSetLimit(...)) and return what cuCtxGetLimit reads after it.") {
  TEST_CASE("R2 R4: ensurePrintfRoom grows the FIFO of the context it is given to the size asked, not the caller's, and returns the size the driver kept") {
    Caller c;
    const size_t before = fifoOf(c.fresh.get()), callerBefore = fifoOf(c.primary.get());
    const size_t asked = moreThan(before, 1);
    const std::vector<CUcontext> stack = wbx::contextStack();
    const long setCurrents = wbx::calls("cuCtxSetCurrent"), sets = wbx::calls("cuCtxSetLimit");
    lastFifoAsked = 0;
    const size_t got = ex24::ensurePrintfRoom(c.fresh.get(), asked / kLine, kLine);
    const long setCurrentsAfter = wbx::calls("cuCtxSetCurrent"), setsAfter = wbx::calls("cuCtxSetLimit");
    const size_t setTo = lastFifoAsked;
    const std::vector<CUcontext> stackAfter = wbx::contextStack();
    const size_t now = fifoOf(c.fresh.get()), callerNow = fifoOf(c.primary.get());
    INFO("the new context's FIFO: " << before << " bytes before, " << now << " after; asked for " << asked
                                    << "; cuCtxSetLimit was asked for " << setTo << " (" << setsAfter - sets
                                    << " calls); ensurePrintfRoom returned " << got);
    INFO("the caller's (primary) context's FIFO: " << callerBefore << " bytes before, " << callerNow << " after");
    CHECK_MESSAGE(stackAfter == stack, "the caller's context stack changed: push context and pop it again");
    CHECK_MESSAGE(setCurrentsAfter == setCurrents, "cuCtxSetCurrent was called: push and pop instead");
    CHECK_MESSAGE(callerNow == callerBefore,
                  "the caller's current context's FIFO changed: the limit was set with context not current");
    CHECK_MESSAGE(setsAfter > sets, "the FIFO was too small and no cuCtxSetLimit was called");
    CHECK_MESSAGE(setTo == asked,
                  "cuCtxSetLimit was not asked for lines * bytesPerLine: the driver may round it, the code may not");
    CHECK_MESSAGE(got == now, "the answer is not the size cuCtxGetLimit reads in context");
    CHECK_MESSAGE(now >= asked, "context's FIFO holds less than was asked");
  }

  TEST_CASE("R3: a FIFO that already holds the request is left as it is: its size is returned, and no cuCtxSetLimit is called") {
    Caller c;
    {
      const size_t grown = moreThan(fifoOf(c.fresh.get()), 2);
      wbt::Pushed in(c.fresh.get());
      CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, grown));
    }
    const size_t have = fifoOf(c.fresh.get());
    const std::vector<CUcontext> stack = wbx::contextStack();
    const long sets = wbx::calls("cuCtxSetLimit");
    const size_t half = ex24::ensurePrintfRoom(c.fresh.get(), have / 2 / kLine, kLine);
    const long setsAfterHalf = wbx::calls("cuCtxSetLimit");
    const size_t exact = ex24::ensurePrintfRoom(c.fresh.get(), have, 1);
    const long setsAfterExact = wbx::calls("cuCtxSetLimit");
    const std::vector<CUcontext> stackAfter = wbx::contextStack();
    const size_t now = fifoOf(c.fresh.get());
    INFO("the FIFO held " << have << " bytes, and " << now << " afterwards; asked for " << have / 2 / kLine * kLine
                          << " it returned " << half << ", asked for " << have << " it returned " << exact);
    CHECK_MESSAGE(setsAfterHalf == sets, "cuCtxSetLimit was called for a request the FIFO already holds (half of it)");
    CHECK_MESSAGE(setsAfterExact == setsAfterHalf, "cuCtxSetLimit was called for exactly what the FIFO holds");
    CHECK(half == have);
    CHECK(exact == have);
    CHECK_MESSAGE(now == have, "the FIFO's size changed: it must never shrink");
    CHECK_MESSAGE(stackAfter == stack, "the caller's context stack changed");
  }

  TEST_CASE("R1: a 0, or a product that does not fit in a size_t, is refused with std::invalid_argument before any driver call") {
    Caller c;
    const size_t have = fifoOf(c.fresh.get());
    const std::vector<CUcontext> stack = wbx::contextStack();
    const std::pair<size_t, size_t> zeros[] = {{0, kLine}, {1024, 0}, {0, 0}};
    for (const auto& args : zeros) {
      const long calls = contextCalls();
      const Outcome o = ensure(c.fresh.get(), args.first, args.second);
      const long made = contextCalls() - calls;
      INFO("ensurePrintfRoom(context, " << args.first << ", " << args.second << ") " << describe(o) << " after "
                                        << made << " driver calls");
      CHECK_MESSAGE(o.invalidArgument, "a 0 was not refused with std::invalid_argument");
      CHECK_MESSAGE(made == 0, "a driver call before the arguments were refused");
    }
    const std::pair<size_t, size_t> overflows[] = {{SIZE_MAX / 2 + 1, 2}, {SIZE_MAX / 4096 + 2, 4096}};
    for (const auto& args : overflows) {
      const long calls = contextCalls();
      const Outcome o = ensure(c.fresh.get(), args.first, args.second);
      const long made = contextCalls() - calls;
      INFO("ensurePrintfRoom(context, " << args.first << ", " << args.second << "): the product wraps to "
                                        << args.first * args.second << "; it " << describe(o) << " after " << made
                                        << " driver calls");
      CHECK_MESSAGE(o.invalidArgument, "a product that does not fit in a size_t was not refused with std::invalid_argument");
      CHECK_MESSAGE(made == 0, "a driver call before the arguments were refused");
    }
    CHECK(wbx::contextStack() == stack);
    CHECK(fifoOf(c.fresh.get()) == have);
  }

  TEST_CASE("R2 R5: when the push or a limit call fails, its error is thrown and the caller's stack is as it was") {
    Caller c;
    struct Failure {
      const char* function;
      unsigned nth;
      CUresult error;
      const char* what;
    };
    const Failure failures[] = {
        {"cuCtxPushCurrent", 1, CUDA_ERROR_INVALID_CONTEXT, "the push of context fails"},
        {"cuCtxGetLimit", 1, CUDA_ERROR_UNSUPPORTED_LIMIT, "the first cuCtxGetLimit fails"},
        {"cuCtxSetLimit", 1, CUDA_ERROR_OUT_OF_MEMORY, "cuCtxSetLimit fails"},
        {"cuCtxGetLimit", 2, CUDA_ERROR_UNSUPPORTED_LIMIT, "the cuCtxGetLimit after cuCtxSetLimit fails"},
    };
    for (const Failure& f : failures) {
      INFO(std::string(f.what));
      const size_t asked = moreThan(fifoOf(c.fresh.get()), 1);
      const std::vector<CUcontext> stack = wbx::contextStack();
      Outcome o;
      bool fired = false;
      {
        wbx::FailCall fail(f.function, f.error, f.nth);
        o = ensure(c.fresh.get(), asked / kLine, kLine);
        fired = fail.fired();
      }
      const std::vector<CUcontext> stackAfter = wbx::contextStack();
      INFO("ensurePrintfRoom " << describe(o));
      REQUIRE_MESSAGE(fired, "ensurePrintfRoom did not make the call the check failed (push, read, set, read back)");
      CHECK_MESSAGE((o.driverError && o.code == f.error), "the failure was not thrown as a wb::DriverError with its code");
      CHECK_MESSAGE(stackAfter == stack, "after the failure the caller's context stack is not as it was");
    }
  }

  // The file's last case: the reference says the limit must be set "before launching any kernel that
  // uses the printf() device system call" without naming a context, so no case runs after this one.
  TEST_CASE("R2 R3 R5: once a printf kernel has run in the context, a request it holds is still answered, and a larger one throws the driver's refusal") {
    Caller c;
    const PrintfKernel kernel;
    kernel.printOneLine(c.fresh.get());
    const size_t have = fifoOf(c.fresh.get());
    const size_t asked = moreThan(have, 1);
    CUresult refused = CUDA_SUCCESS;
    {
      wbt::Pushed in(c.fresh.get());
      refused = cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, asked);  // what the driver says to the check itself
    }
    if (refused == CUDA_SUCCESS)
      return wbt::skipCase("this driver let the printf FIFO change after a printf kernel ran in the context");
    const std::vector<CUcontext> stack = wbx::contextStack();
    const Outcome holds = ensure(c.fresh.get(), have / kLine, kLine);
    const std::vector<CUcontext> stackBetween = wbx::contextStack();
    const Outcome larger = ensure(c.fresh.get(), asked / kLine, kLine);
    const std::vector<CUcontext> stackAfter = wbx::contextStack();
    INFO("the FIFO holds " << have << " bytes; the driver refused " << asked << " with " << wb::errorName(refused));
    INFO("asked for " << have / kLine * kLine << ", ensurePrintfRoom " << describe(holds) << "; asked for " << asked
                      << ", it " << describe(larger));
    CHECK_MESSAGE((holds.returned && holds.size == have),
                  "a request the FIFO already holds did not return its size (was cuCtxSetLimit called?)");
    CHECK_MESSAGE(stackBetween == stack, "the caller's context stack changed");
    CHECK_MESSAGE((larger.driverError && larger.code == refused),
                  "the driver's refusal was not thrown as a wb::DriverError with its code");
    CHECK_MESSAGE(stackAfter == stack, "after the driver's refusal the caller's context stack is not as it was");
    CHECK(fifoOf(c.fresh.get()) == have);
  }
}

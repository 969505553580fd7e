// The checks of lesson 24's exercises (lessons/24-logs-and-core-dumps/exercises.cpp). The log is the
// process's: each check takes an iterator of its own first and compares with what it reads from it.
// The check stands between the code and cuLogsRegisterCallback / cuLogsUnregisterCallback to see
// which handles stay registered, and unregisters any left behind before a wrong answer's callback
// could be called into a collector that is gone.
#include "check.hpp"
#include "24-logs-and-core-dumps/exercises.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// Counted here, and failed on purpose: the global setting and the per-context one (CUDA 12.1).
#if CUDA_VERSION >= 12010
WBX_INTERPOSE(cuCoredumpSetAttributeGlobal, (CUcoredumpSettings attrib, void* value, size_t* size),
              (attrib, value, size))
WBX_INTERPOSE(cuCoredumpSetAttribute, (CUcoredumpSettings attrib, void* value, size_t* size), (attrib, value, size))
#endif

#if CUDA_VERSION >= 12090
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

// A number attribute of the global settings (or the current context's), as the driver sizes it.
#if CUDA_VERSION >= 12050
long long coredumpNumber(bool global, CUcoredumpSettings which) {
  size_t size = 0;
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(which, nullptr, &size) : cuCoredumpGetAttribute(which, nullptr, &size));
  REQUIRE(size <= sizeof(long long));
  long long value = 0;
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(which, &value, &size) : cuCoredumpGetAttribute(which, &value, &size));
  return value;
}

std::string coredumpFile(bool global) {
  size_t size = 0;  // asked with value NULL: the size the driver expects
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, nullptr, &size)
                  : cuCoredumpGetAttribute(CU_COREDUMP_FILE, nullptr, &size));
  std::vector<char> value(std::max<size_t>(size, 1024), '\0');
  if (size == 0) size = value.size();
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, value.data(), &size)
                  : cuCoredumpGetAttribute(CU_COREDUMP_FILE, value.data(), &size));
  return std::string(value.data(), strnlen(value.data(), value.size()));
}

// The global settings the exercise changes, put back at scope exit.
class GlobalSettingsKept {
 public:
  GlobalSettingsKept()
      : enable_(coredumpNumber(true, CU_COREDUMP_ENABLE_ON_EXCEPTION)),
        flags_(coredumpNumber(true, CU_COREDUMP_GENERATION_FLAGS)),
        file_(coredumpFile(true)) {}
  ~GlobalSettingsKept() {
    put(CU_COREDUMP_GENERATION_FLAGS, flags_);
    std::vector<char> file(file_.begin(), file_.end());
    file.push_back('\0');
    size_t size = file.size();
    cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, file.data(), &size);
    put(CU_COREDUMP_ENABLE_ON_EXCEPTION, enable_);
  }

 private:
  static void put(CUcoredumpSettings which, long long value) {
    size_t size = 0;
    if (cuCoredumpGetAttributeGlobal(which, nullptr, &size) != CUDA_SUCCESS || size > sizeof value) return;
    cuCoredumpSetAttributeGlobal(which, &value, &size);  // the low bytes, on a little-endian machine
  }
  long long enable_, flags_;
  std::string file_;
};
#endif

}  // namespace

EXERCISE("driver-reason", "The driver's own words for the call that just failed",
         "Take an iterator with cuLogsCurrent just before the call, call it once, and on failure dump from that "
         "iterator with cuLogsDumpToMemory (size: the buffer's bytes, up to 25600); strip each line's leading "
         "[...] fields and join the messages with newlines.") {
  TEST_CASE("driverReason returns the messages of the failed call only, stripped, in order, and the call's result") {
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

  TEST_CASE("driverReason keeps every message of a call that logs several, and returns \"\" for a call that succeeds") {
#if CUDA_VERSION >= 12090
    needLogs();
    Ctx ctx;
    Registrations registrations;
    const long registersBefore = wbx::calls("cuLogsRegisterCallback");
    int ran = 0;
    CUresult result = CUDA_SUCCESS;
    const CUlogIterator mine = iteratorNow();
    const std::string several = ex24::driverReason(
        [&ran] {
          ++ran;
          refuseAllocation();
          refuseAllocation();
          return refuseAllocation();
        },
        result);
    const std::vector<std::string> expected = messagesSince(mine);
    INFO("the driver logged, from the call on:\n" << joined(expected) << "\ndriverReason returned:\n" << several);
    CHECK(ran == 1);
    CHECK(result == CUDA_ERROR_INVALID_VALUE);
    CHECK(expected.size() >= 3);
    CHECK(several == joined(expected));
    ran = 0;
    result = CUDA_ERROR_UNKNOWN;
    const std::string none = ex24::driverReason(
        [&ran] {
          ++ran;
          size_t free = 0, total = 0;
          return cuMemGetInfo(&free, &total);
        },
        result);
    CHECK(ran == 1);
    CHECK(result == CUDA_SUCCESS);
    CHECK(none == "");
    CHECK(wbx::calls("cuLogsRegisterCallback") == registersBefore);
    CHECK(registrations.leftOver().empty());
#else
    throw wbx::Skipped("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }
}

EXERCISE("log-collector", "A collector that keeps what the driver logs while it lives",
         "Register a callback in the constructor with the collector as userData, keep the handle, have the "
         "callback call add(), copy each message under the mutex, and unregister that handle in the destructor.") {
  TEST_CASE("a collector keeps every message logged while it lives, from every thread, and unregisters its own handle") {
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

  TEST_CASE("a collector made after another is gone holds none of the other's messages") {
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

  TEST_CASE("when cuLogsRegisterCallback fails, the constructor throws") {
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

EXERCISE("crash-capture", "A process set up to leave a lightweight GPU core dump behind",
         "Three cuCoredumpSetAttributeGlobal calls, each through CU_CHECK: CU_COREDUMP_GENERATION_FLAGS set to "
         "CU_COREDUMP_LIGHTWEIGHT_FLAGS (| CU_COREDUMP_SKIP_ABORT when keepRunning), CU_COREDUMP_FILE with its NUL, "
         "CU_COREDUMP_ENABLE_ON_EXCEPTION on; sizes asked with value NULL.") {
  TEST_CASE("captureGpuCrashes turns dumps on globally, names the file and sets exactly the lightweight flags, SKIP_ABORT only when asked") {
#if CUDA_VERSION >= 12050
    if (wb::underSanitizer())
      throw wbx::Skipped("under compute-sanitizer, which the CUDA-GDB manual says dumps are not supported with");
    Ctx ctx;
    GlobalSettingsKept kept;
    const long long ownEnable = coredumpNumber(false, CU_COREDUMP_ENABLE_ON_EXCEPTION);
    const std::string ownFile = coredumpFile(false);
    const long perContextBefore = wbx::calls("cuCoredumpSetAttribute");
    const std::string paths[] = {"/tmp/exercise24-a.nvcudmp", "/tmp/exercise24-b.nvcudmp", "/tmp/exercise24-c.nvcudmp"};
    const bool keepRunning[] = {false, true, false};
    for (int i = 0; i < 3; ++i) {
      ex24::captureGpuCrashes(paths[i], keepRunning[i]);
      const long long expected = CU_COREDUMP_LIGHTWEIGHT_FLAGS | (keepRunning[i] ? CU_COREDUMP_SKIP_ABORT : 0);
      INFO("call " << i + 1 << ": path " << paths[i] << ", keepRunning " << keepRunning[i]);
      CHECK(coredumpNumber(true, CU_COREDUMP_ENABLE_ON_EXCEPTION) != 0);
      CHECK(coredumpFile(true) == paths[i]);
      CHECK(coredumpNumber(true, CU_COREDUMP_GENERATION_FLAGS) == expected);
    }
    CHECK(wbx::calls("cuCoredumpSetAttribute") == perContextBefore);
    CHECK(coredumpNumber(false, CU_COREDUMP_ENABLE_ON_EXCEPTION) == ownEnable);
    CHECK(coredumpFile(false) == ownFile);
#else
    throw wbx::Skipped("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (CUDA 12.5)");
#endif
  }

  TEST_CASE("when any of its cuCoredumpSetAttributeGlobal calls fails, captureGpuCrashes throws") {
#if CUDA_VERSION >= 12050
    if (wb::underSanitizer())
      throw wbx::Skipped("under compute-sanitizer, which the CUDA-GDB manual says dumps are not supported with");
    Ctx ctx;
    GlobalSettingsKept kept;
    for (unsigned nth = 1; nth <= 3; ++nth) {
      bool threw = false, fired = false;
      {
        wbx::FailCall fail("cuCoredumpSetAttributeGlobal", CUDA_ERROR_INVALID_VALUE, nth);
        try {
          ex24::captureGpuCrashes("/tmp/exercise24-failing.nvcudmp", true);
        } catch (const wb::NotDone&) {
          throw;
        } catch (const std::exception&) {
          threw = true;
        }
        fired = fail.fired();
      }
      INFO("the failing call: cuCoredumpSetAttributeGlobal number " << nth);
      CHECK(fired);
      CHECK(threw);
    }
#else
    throw wbx::Skipped("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (CUDA 12.5)");
#endif
  }
}

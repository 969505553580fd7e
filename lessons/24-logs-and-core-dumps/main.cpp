// Lesson 24: logs and core dumps. What the driver says when a call fails, and what a fault leaves
// behind.
//
// What you learn: since CUDA 12.9 the driver logs its refusals in plain words. A callback
// (cuLogsRegisterCallback) gets each message as it is logged; a buffer of the 100 most recent
// entries is read from an iterator (cuLogsCurrent, cuLogsDumpToMemory, cuLogsDumpToFile); and
// CUDA_LOG_FILE writes the same to a file without a line of code. A checked call (lesson 02) that
// takes an iterator before the call carries the driver's reason into its message. Device printf
// goes through a FIFO of fixed size (cuCtxSetLimit, CU_LIMIT_PRINTF_FIFO_SIZE) that the host empties
// at synchronisation points: a kernel that prints more than it holds loses lines. And a faulting
// kernel can leave a GPU core dump: set up by the environment (CUDA_ENABLE_COREDUMP_ON_EXCEPTION),
// after which the driver aborts the process, or by the program (cuCoredumpSetAttributeGlobal,
// cuCoredumpSetAttribute), per context, lightweight and without the abort. cuda-gdb opens a dump at
// the faulting kernel and its source line.
//
// Every fault, and every setting the driver reads at cuInit, is in a child process: this program
// started again with --child <what>, with a time limit. The parent never faults.
//
// APIs: cuLogsRegisterCallback, cuLogsUnregisterCallback, cuLogsCurrent, cuLogsDumpToMemory,
//       cuLogsDumpToFile, cuCtxSetLimit, cuCtxGetLimit, cuCoredumpSetAttributeGlobal,
//       cuCoredumpGetAttributeGlobal, cuCoredumpSetAttribute, cuCoredumpGetAttribute
// Run:  ctest -R lesson24   (or build/lessons/lesson24-logs-and-core-dumps)
#include "process.hpp"
#include "scratch.hpp"
#include "workbook.hpp"

#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <future>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr unsigned kChildSeconds = 60;  // no child may take longer: a hang ends in a message
constexpr int kPrintedLines = 8192;     // lines the printf kernel prints in each run
constexpr size_t kSmallFifo = 4096;     // the printf FIFO the second run asks for, in bytes

// One line per call: "  <what>: <NAME> (<code>)". The tests read these lines back.
CUresult say(const char* what, CUresult rc) {
  std::printf("  %s: %s (%d)\n", what, wb::errorName(rc).c_str(), static_cast<int>(rc));
  std::fflush(stdout);
  return rc;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The monotonic clock in nanoseconds: one clock for every process of the machine, so a child's
// stamp and its parent's can be subtracted.
long long monotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

// The primary context of device 0, current, and a kernel of an image by name.
struct Setup {
  CUdevice dev = 0;
  CUcontext primary = nullptr;
  CUlibrary library = nullptr;
  explicit Setup(const char* image = nullptr) {
    CU_CHECK(cuInit(0));
    CU_CHECK(cuDeviceGet(&dev, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    if (image)
      CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath(image).c_str(), nullptr, nullptr, 0, nullptr,
                                     nullptr, 0));
  }
  CUfunction kernel(const char* name) const {
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, library, name));
    return reinterpret_cast<CUfunction>(k);
  }
  // A child that faulted ends without cleaning up: every call would fail, and the exit takes all.
  void release() {
    if (library) CU_CHECK(cuLibraryUnload(library));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  }
};

#if CUDA_VERSION >= 12090
//! [callback]
// What the callback keeps. The reference does not say on which thread the driver calls it, so a
// mutex guards it; and message belongs to the driver, so the callback copies the text.
struct Collected {
  std::mutex mutex;
  std::vector<std::string> messages;
  std::vector<CUlogLevel> levels;
};

void CUDA_CB collect(void* data, CUlogLevel level, char* message, size_t length) {
  std::string text(message, length);
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
  auto* into = static_cast<Collected*>(data);  // the userData given to cuLogsRegisterCallback
  const std::lock_guard<std::mutex> lock(into->mutex);
  into->messages.push_back(text);
  into->levels.push_back(level);
}
//! [callback]

size_t countOf(Collected& c) {
  const std::lock_guard<std::mutex> lock(c.mutex);
  return c.messages.size();
}

// A log line without its bracketed fields ("[time][thread][CUDA][E] ..."): the message alone.
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

// The message that returns the code ("Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemAlloc_v2"),
// as against the one that says why.
bool isReturnLine(const std::string& message) { return messageOf(message).rfind("Returning ", 0) == 0; }

//! [register]
// Registered: one refused call (cuMemAlloc of 0 bytes, which the reference answers with
// CUDA_ERROR_INVALID_VALUE). Unregistered: the same call again.
void callbackStep() {
  Collected got;
  CUlogsCallbackHandle handle = nullptr;
  CU_CHECK(cuLogsRegisterCallback(collect, &got, &handle));
  CUdeviceptr p = 0;
  const CUresult refused = cuMemAlloc(&p, 0);
  const size_t whileRegistered = countOf(got);
  CU_CHECK(cuLogsUnregisterCallback(handle));
  const CUresult again = cuMemAlloc(&p, 0);
  const size_t afterwards = countOf(got) - whileRegistered;
  //! [register]
  //! [register-report]
  std::printf("cuMemAlloc(&p, 0): %s; the callback received %zu messages:\n", wb::errorName(refused).c_str(),
              whileRegistered);
  bool namesCall = false, saysWhy = false;
  for (size_t i = 0; i < whileRegistered; ++i) {
    const std::string& m = got.messages[i];
    std::printf("  [%s] %s\n", got.levels[i] == CU_LOG_LEVEL_ERROR ? "error" : "warning", m.c_str());
    namesCall = namesCall || (has(m, "cuMemAlloc") && has(m, "CUDA_ERROR_INVALID_VALUE"));
    saysWhy = saysWhy || (!isReturnLine(m) && !m.empty());
  }
  std::printf("unregistered, the same call (%s): %zu messages more\n", wb::errorName(again).c_str(),
              afterwards);
  wb::expect(refused == CUDA_ERROR_INVALID_VALUE && namesCall && saysWhy,
             "the log naming the refused call, its code and why", "other messages");
  wb::expect(afterwards == 0, "no message after cuLogsUnregisterCallback",
             std::to_string(afterwards) + " more");
}
//! [register-report]

constexpr size_t kLogBytes = 25600;  // the reference: "The maximum size of the buffer is 25600 bytes"

// A buffer of room bytes with a guard behind it. On driver 580 a dump into a buffer too small for
// the whole log wrote past the size it was given (on an H100 host, about 290 bytes into 256: its
// lines name the thread by a longer number than an H200 host's did), which corrupted the heap; the
// guard takes what lands past the room, and pastEnd says how far it went.
struct Guarded {
  static constexpr size_t kGuard = 64 << 10;
  static constexpr char kFill = static_cast<char>(0xA5);  // no byte of a log line
  size_t room;
  std::vector<char> bytes;
  explicit Guarded(size_t room_) : room(room_), bytes(room_ + kGuard, kFill) { bytes.back() = '\0'; }
  char* data() { return bytes.data(); }
  size_t pastEnd() const {
    for (size_t i = bytes.size() - 1; i > room; --i)
      if (bytes[i - 1] != kFill) return i - room;
    return 0;
  }
};

//! [iterator]
// An iterator taken now points where the next message will go. Then a refused call (the guide's own
// example: a dump into no buffer) and a dump from the iterator, which holds only what came after it.
void iteratorStep() {
  CUlogIterator from = 0;
  CU_CHECK(cuLogsCurrent(&from, 0));
  size_t unused = 0;
  const CUresult noBuffer = cuLogsDumpToMemory(nullptr, nullptr, &unused, 0);
  std::vector<char> buffer(kLogBytes);
  size_t size = buffer.size();  // in: the buffer's bytes; out: the bytes written, without the NUL
  CU_CHECK(cuLogsDumpToMemory(&from, buffer.data(), &size, 0));
  const std::string dumped(buffer.data());
  size_t again = buffer.size();
  CU_CHECK(cuLogsDumpToMemory(&from, buffer.data(), &again, 0));  // the iterator moved on
  //! [iterator]
  //! [iterator-report]
  std::printf("cuLogsDumpToMemory into no buffer: %s\n", wb::errorName(noBuffer).c_str());
  std::printf("dumped from the iterator: %zu bytes (strlen %zu):\n", size, dumped.size());
  for (const std::string& line : linesOf(dumped)) std::printf("  %s\n", line.c_str());
  std::printf("dumped again from the same iterator: %zu bytes\n", again);
  const bool onlyAfter = has(dumped, "cuLogsDumpToMemory") && !has(dumped, "cuMemAlloc");
  wb::expect(noBuffer == CUDA_ERROR_INVALID_VALUE && onlyAfter,
             "a dump from the iterator holding the refusal after it and none of step 1's", "other lines");
  wb::expect(size == dumped.size() && again == 0, "size the bytes written, and nothing new the second time",
             std::to_string(size) + " and " + std::to_string(again) + " bytes");
  //! [iterator-report]
  //! [small-buffers]
  // Everything (no iterator) into 8 bytes, too few for any message; into 256, too few for all. Each
  // small buffer has a guard behind it: on driver 580 such a dump wrote past the size it was given.
  Guarded tiny(8), some(256);
  size_t tinySize = tiny.room;
  const CUresult tooSmall = cuLogsDumpToMemory(nullptr, tiny.data(), &tinySize, 0);
  std::vector<char> all(kLogBytes);
  size_t someSize = some.room, allSize = all.size();
  CU_CHECK(cuLogsDumpToMemory(nullptr, some.data(), &someSize, 0));
  CU_CHECK(cuLogsDumpToMemory(nullptr, all.data(), &allSize, 0));
  const std::vector<std::string> part = linesOf(some.data()), whole = linesOf(all.data());
  //! [small-buffers]
  std::printf("everything into 8 bytes: %s, size %zu\n", wb::errorName(tooSmall).c_str(), tinySize);
  std::printf("everything into 256 bytes: %zu of the %zu lines the whole log has:\n", part.size(), whole.size());
  for (const std::string& line : part) std::printf("  %s\n", line.c_str());
  std::printf("written past the buffer (shown, not asserted): %zu bytes past the 8, %zu past the 256\n",
              tiny.pastEnd(), some.pastEnd());
  const bool newestKept = !part.empty() && !whole.empty() && part.back() == whole.back();
  wb::expect(tooSmall == CUDA_ERROR_INVALID_VALUE && tinySize == 0 && newestKept && part.size() < whole.size(),
             "no room: refused with size 0; some room: the most recent message last", "other results");
}

//! [rollover]
// 120 refused calls: more entries than the 100 the buffer keeps. The whole log, written to a file,
// then holds the newest of them and a line that says older ones were lost; step 2's are gone.
void rolloverStep(const std::string& folder) {
  CUdeviceptr p = 0;
  for (int i = 0; i < 120; ++i) (void)cuMemAlloc(&p, 0);
  const std::string file = folder + "/driver-log.txt";
  CU_CHECK(cuLogsDumpToFile(nullptr, file.c_str(), 0));
  std::ifstream in(file);
  std::vector<std::string> ours, others;
  for (std::string line; std::getline(in, line);)
    (has(line, "cuMemAlloc") || has(line, "0 byte") ? ours : others).push_back(line);
  //! [rollover]
  std::printf("cuLogsDumpToFile of everything: %zu lines from the 120 refusals, %zu others:\n", ours.size(),
              others.size());
  for (const std::string& line : others) std::printf("  %s\n", line.c_str());
  if (!ours.empty()) std::printf("the last line: %s\n", ours.back().c_str());
  bool older = false;
  for (const std::string& line : others) older = older || has(line, "cuLogsDumpToMemory");
  wb::expect(ours.size() <= 100 && !others.empty() && !older,
             "at most 100 entries, a line noting the rollover, and the older entries gone",
             std::to_string(ours.size()) + " entries, " + std::to_string(others.size()) + " other lines");
}

// What the log holds from since on, the messages that are not the return line; "" on any failure.
std::string reasonSince(CUlogIterator* since) {
  std::vector<char> buffer(kLogBytes);
  size_t size = buffer.size();
  if (cuLogsDumpToMemory(since, buffer.data(), &size, 0) != CUDA_SUCCESS) return "";
  std::string reason;
  for (const std::string& line : linesOf(std::string(buffer.data(), size))) {
    const std::string m = messageOf(line);
    if (!m.empty() && !isReturnLine(m)) reason += (reason.empty() ? "" : "; ") + m;
  }
  return reason;
}

//! [explained]
// Lesson 02's checked call, one step further: an iterator taken before the call, and on failure the
// driver's messages since then in the error's text. An iterator is a position, so it costs nothing.
class ExplainedError : public std::runtime_error {
 public:
  ExplainedError(const wb::DriverError& error, const std::string& reason)
      : std::runtime_error(std::string(error.what()) +
                           (reason.empty() ? "" : "\n  the driver's log: " + reason)),
        code_(error.code()) {}
  CUresult code() const noexcept { return code_; }

 private:
  CUresult code_;
};

[[noreturn]] void throwExplained(CUresult rc, const char* expression, const char* file, int line,
                                 CUlogIterator* since) {
  throw ExplainedError(wb::DriverError(rc, expression, file, line), since ? reasonSince(since) : "");
}

#define CU_CHECK_EXPLAINED(expr)                                                                  \
  do {                                                                                            \
    CUlogIterator wb_since_ = 0;                                                                  \
    const bool wb_logged_ = cuLogsCurrent(&wb_since_, 0) == CUDA_SUCCESS;                         \
    const CUresult wb_rc_ = (expr);                                                               \
    if (wb_rc_ != CUDA_SUCCESS)                                                                   \
      throwExplained(wb_rc_, #expr, __FILE__, __LINE__, wb_logged_ ? &wb_since_ : nullptr);       \
  } while (0)
//! [explained]

//! [explained-use]
// The same refused call through CU_CHECK and through CU_CHECK_EXPLAINED.
void explainedStep() {
  CUdeviceptr p = 0;
  std::string plain, explained;
  try {
    CU_CHECK(cuMemAlloc(&p, 0));
  } catch (const wb::DriverError& e) {
    plain = e.what();
  }
  try {
    CU_CHECK_EXPLAINED(cuMemAlloc(&p, 0));
  } catch (const ExplainedError& e) {
    explained = e.what();
  }
  std::printf("CU_CHECK:\n  %s\nCU_CHECK_EXPLAINED:\n  %s\n", plain.c_str(), explained.c_str());
  wb::expect(has(explained, "the driver's log: ") && !has(plain, "the driver's log"),
             "the driver's reason in the explained message only", explained);
}
//! [explained-use]
#endif  // CUDA_VERSION >= 12090

//! [log-file-child]
// In a child: CUDA_LOG_FILE set before cuInit (by the child itself here, as a service's unit file
// or a shell would set it), one refused call, and what the file holds then.
int childLogFile() {
  wb::ScratchDir scratch;
  const std::string file = scratch.path() + "/cuda.log";
  setenv("CUDA_LOG_FILE", file.c_str(), 1);  // the driver reads it at cuInit
  Setup s;
  struct stat info {};
  const bool before = stat(file.c_str(), &info) == 0;
  std::printf("  before the refused call the file exists: %s\n", before ? "yes" : "no");
  CUdeviceptr p = 0;
  say("cuMemAlloc(&p, 0)", cuMemAlloc(&p, 0));
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) std::printf("  the file: %s\n", line.c_str());
  s.release();
  return wb::kExitOk;
}
//! [log-file-child]

//! [printf-run]
// Thread i prints line i of run tag. The host waits until the stream is idle (cuStreamQuery, which
// is no synchronisation), prints a mark, and only then synchronises: each line shows where it came.
void printRun(const Setup& s, int tag) {
  CUdeviceptr returned = 0;
  CU_CHECK(cuMemAlloc(&returned, kPrintedLines * sizeof(int)));
  int run = tag, lines = kPrintedLines;
  void* args[] = {&run, &lines, &returned};
  const CUfunction print = s.kernel("print_lines");
  CU_CHECK(cuLaunchKernel(print, kPrintedLines / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  const wb::Stopwatch clock;
  CUresult rc = CUDA_ERROR_NOT_READY;
  while ((rc = cuStreamQuery(nullptr)) == CUDA_ERROR_NOT_READY && clock.ms() < 10000) {
  }
  CU_CHECK(rc);
  std::printf("  mark run %d: the kernel has finished, nothing synchronised yet\n", tag);
  std::fflush(stdout);
  CU_CHECK(cuCtxSynchronize());
  std::fflush(stdout);
  std::printf("  mark run %d: cuCtxSynchronize returned\n", tag);
  //! [printf-run]
  std::vector<int> back(kPrintedLines);
  CU_CHECK(cuMemcpyDtoH(back.data(), returned, back.size() * sizeof(int)));
  const auto two = std::count(back.begin(), back.end(), 2);
  const auto negative = std::count_if(back.begin(), back.end(), [](int v) { return v < 0; });
  std::printf("  run %d: printf returned 2 in %ld threads, a negative value in %ld, something else in %ld\n",
              tag, static_cast<long>(two), static_cast<long>(negative),
              static_cast<long>(kPrintedLines - two - negative));
  std::fflush(stdout);
  CU_CHECK(cuMemFree(returned));
}

//! [printf-child]
// In a child (its output is what the parent counts): a run in a new context whose FIFO is set small
// before any printf kernel ran in the process, then a run in the primary context with the FIFO it
// has by default.
int childPrintf() {
  Setup s("device_printf.fatbin");
  size_t byDefault = 0;
  CU_CHECK(cuCtxGetLimit(&byDefault, CU_LIMIT_PRINTF_FIFO_SIZE));
  CUcontext small = nullptr;
  CU_CHECK(wb::createContext(&small, 0, s.dev));  // current from here on
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, kSmallFifo));
  size_t set = 0;
  CU_CHECK(cuCtxGetLimit(&set, CU_LIMIT_PRINTF_FIFO_SIZE));
  std::printf("  a new context, asked for %zu bytes: its FIFO holds %zu bytes\n", kSmallFifo, set);
  printRun(s, 1);
  say("cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE) after a printf kernel",
      cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, byDefault));
  CU_CHECK(cuCtxDestroy(small));  // pops it: the primary context is current again
  size_t primary = 0;
  CU_CHECK(cuCtxGetLimit(&primary, CU_LIMIT_PRINTF_FIFO_SIZE));
  std::printf("  the primary context's FIFO: %zu bytes (before the new context: %zu)\n", primary, byDefault);
  printRun(s, 2);
  //! [printf-child]
  s.release();
  return wb::kExitOk;
}

// A fault must leave no CPU core file behind: RLIMIT_CORE 0 (the abort the driver raises after a GPU
// core dump would otherwise write one where the core pattern says).
void noCpuCoreFile() {
  rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
}

void fault(const Setup& s) {
  unsigned long long address = 0x10;
  void* args[] = {&address};
  const CUfunction writeTo = s.kernel("write_to");
  say("cuLaunchKernel(write_to, 0x10)", cuLaunchKernel(writeTo, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  std::printf("  fault at %lld ns\n", monotonicNs());
  std::fflush(stdout);
}

//! [dump-env-child]
// In a child started with CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 and CUDA_COREDUMP_FILE: a fault, then
// the call that would report it.
int childDumpFromEnvironment() {
  noCpuCoreFile();
  Setup s("faults.fatbin");
  fault(s);
  say("cuCtxSynchronize", cuCtxSynchronize());
  return wb::kExitOk;
}
//! [dump-env-child]

#if CUDA_VERSION >= 12010
CUresult getAttribute(bool global, CUcoredumpSettings which, void* value, size_t* size) {
  return global ? cuCoredumpGetAttributeGlobal(which, value, size) : cuCoredumpGetAttribute(which, value, size);
}

CUresult setAttribute(bool global, CUcoredumpSettings which, void* value, size_t* size) {
  return global ? cuCoredumpSetAttributeGlobal(which, value, size) : cuCoredumpSetAttribute(which, value, size);
}

// A coredump attribute that is a number (a bool, or the generation flags), in as many bytes as the
// driver expects: asked with value NULL, the call reports that size (cuda.h). The type is the
// attribute's, whatever the scope, so the global call is asked.
CUresult setNumber(bool global, CUcoredumpSettings which, long long value) {
  size_t size = 0;
  const CUresult rc = cuCoredumpGetAttributeGlobal(which, nullptr, &size);
  if (rc != CUDA_SUCCESS) return rc;
  if (size == 0 || size > sizeof value) return CUDA_ERROR_INVALID_VALUE;
  unsigned char bytes[sizeof value] = {};
  std::memcpy(bytes, &value, size);  // the low bytes, on a little-endian machine
  return setAttribute(global, which, bytes, &size);
}

CUresult setText(bool global, CUcoredumpSettings which, const std::string& text) {
  std::vector<char> value(text.begin(), text.end());
  value.push_back('\0');
  size_t size = value.size();
  return setAttribute(global, which, value.data(), &size);
}

// What an attribute holds, for printing: a number, a path, or the error that refused the read.
std::string shown(bool global, CUcoredumpSettings which, bool isText) {
  size_t size = 0;
  CUresult rc = getAttribute(global, which, nullptr, &size);
  std::vector<char> value(std::max<size_t>(size, isText ? 1024 : sizeof(long long)), '\0');
  if (rc == CUDA_SUCCESS) {
    if (size == 0) size = value.size();
    rc = getAttribute(global, which, value.data(), &size);
  }
  if (rc != CUDA_SUCCESS) return wb::errorName(rc);
  if (isText) return std::string(value.data(), strnlen(value.data(), value.size()));
  long long n = 0;
  std::memcpy(&n, value.data(), std::min(size, sizeof n));
  return std::to_string(n);
}

//! [dump-api-child]
// In a child with no core-dump variable: the same fault, set up by the program. Globally, before any
// context: what a dump holds and that the process goes on. Per context: dump on exception, to a file
// of its own.
int childDumpFromApi(const std::string& folder) {
  noCpuCoreFile();
  CU_CHECK(cuInit(0));
#if CUDA_VERSION >= 12050
  const long long flags = CU_COREDUMP_LIGHTWEIGHT_FLAGS | CU_COREDUMP_SKIP_ABORT;
  CU_CHECK(setNumber(true, CU_COREDUMP_GENERATION_FLAGS, flags));
#else  // before 12.5: the two booleans that the generation flags replaced
  CU_CHECK(setNumber(true, CU_COREDUMP_LIGHTWEIGHT, 1));
  CU_CHECK(setNumber(true, CU_COREDUMP_TRIGGER_HOST, 0));
#endif
  CU_CHECK(setText(true, CU_COREDUMP_FILE, folder + "/global.nvcudmp"));
  (void)setText(true, CU_COREDUMP_PIPE, folder + "/pipe");  // so that a user trigger's pipe would land here
  Setup s("faults.fatbin");  // the primary context is created here, after the global settings
  CU_CHECK(setNumber(false, CU_COREDUMP_ENABLE_ON_EXCEPTION, 1));
  CU_CHECK(setText(false, CU_COREDUMP_FILE, folder + "/context.nvcudmp"));
  say("cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_USER_TRIGGER)",
      setNumber(false, CU_COREDUMP_ENABLE_USER_TRIGGER, 1));
  //! [dump-api-child]
  //! [dump-api-read]
  // What each scope holds now: the context took the global settings when it was created, then its own.
  const std::pair<const char*, CUcoredumpSettings> numbers[] = {
      {"ENABLE_ON_EXCEPTION", CU_COREDUMP_ENABLE_ON_EXCEPTION},
#if CUDA_VERSION >= 12050
      {"GENERATION_FLAGS", CU_COREDUMP_GENERATION_FLAGS},
#endif
  };
  for (const auto& [name, which] : numbers)
    for (bool global : {false, true})
      std::printf("  %s, %s: %s\n", global ? "globally" : "per context", name,
                  shown(global, which, false).c_str());
  for (bool global : {false, true})
    std::printf("  %s, FILE: %s\n", global ? "globally" : "per context",
                shown(global, CU_COREDUMP_FILE, true).c_str());
  //! [dump-api-read]
  //! [dump-api-fault]
  fault(s);
  say("cuCtxSynchronize", cuCtxSynchronize());
  std::printf("  returned at %lld ns\n", monotonicNs());
  return wb::kExitOk;  // the context is lost: no clean-up (lesson 10)
}
//! [dump-api-fault]
#endif  // CUDA_VERSION >= 12010

// cuda-gdb: beside the toolkit, in CUDA_HOME, or on PATH; "" when absent.
std::string findCudaGdb() {
  std::vector<std::string> candidates = {"/usr/local/cuda/bin/cuda-gdb"};
  if (const char* home = std::getenv("CUDA_HOME"))
    candidates.insert(candidates.begin(), std::string(home) + "/bin/cuda-gdb");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) candidates.push_back(dir + "/cuda-gdb");
  }
  for (const auto& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c;
  return "";
}

std::string howItEnded(const wb::ProcessEnd& end) {
  if (end.timedOut) return "it hung and was ended after " + std::to_string(kChildSeconds) + " s";
  if (end.signal)
    return "killed by signal " + std::to_string(end.signal) + (end.signal == SIGABRT ? " (SIGABRT)" : "");
  return "exit code " + std::to_string(end.code);
}

// Every occurrence of from in text replaced by to: the scratch folder's random name, for output
// that reads the same in every run.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

long long fileBytes(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? static_cast<long long>(info.st_size) : -1;
}

// A dump child's lines under tag, its end, its file and the time from its fault to end.
void report(const std::string& tag, const wb::ProcessEnd& end, long long endedNs, const std::string& folder,
            const std::vector<std::string>& files) {
  long long faultNs = 0, returnedNs = 0;
  for (const std::string& line : linesOf(end.output)) {
    if (std::sscanf(line.c_str(), "  fault at %lld ns", &faultNs) == 1) continue;
    if (std::sscanf(line.c_str(), "  returned at %lld ns", &returnedNs) == 1) continue;
    std::printf("[%s] %s\n", tag.c_str(), replaced(line, folder, "<scratch>").c_str());
  }
  std::printf("[%s] ended: %s\n", tag.c_str(), howItEnded(end).c_str());
  for (const std::string& f : files) {
    const long long bytes = fileBytes(folder + "/" + f);
    const std::string size = bytes < 0 ? "none" : std::to_string(bytes) + " bytes";
    std::printf("[%s] dump %s: %s\n", tag.c_str(), f.c_str(), size.c_str());
  }
  if (faultNs)
    std::printf("[%s] from the fault to %s: %.0f ms\n", tag.c_str(),
                returnedNs ? "cuCtxSynchronize's return" : "the process's end",
                ((returnedNs ? returnedNs : endedNs) - faultNs) / 1e6);
}

// cuda-gdb on a dump: the lines that say what faulted, and whether they name the exception, the
// kernel and a source line (and, where cuda-gdb's file is here, that line's text).
void openWithCudaGdb(const std::string& tag, const std::string& gdb, const std::string& dump,
                     const std::string& folder) {
  const wb::Stopwatch clock;
  const wb::ProcessEnd end =
      wb::runProcess({gdb, "-nx", "-batch", "-ex", "target cudacore " + dump}, {}, 2 * kChildSeconds);
  static const std::regex where(R"(([^\s()]+\.cu):(\d+))"), folders(R"([^\s()]*/([^/\s()]+\.cu))");
  std::string exception, file, lineNumber;
  for (const std::string& line : linesOf(end.output)) {
    if (!has(line, "xception") && !has(line, "write_to") && !has(line, ".cu:")) continue;
    std::smatch m;
    // The source file as cuda-gdb names it, with its folder where one line gives it.
    if ((file.empty() || !has(file, "/")) && std::regex_search(line, m, where)) {
      file = m[1];
      lineNumber = m[2];
    }
    const std::string said = "CUDA Exception: ";
    if (exception.empty() && has(line, said)) exception = line.substr(line.find(said) + said.size());
    const std::string shown = std::regex_replace(replaced(line, folder, "<scratch>"), folders, "$1");
    std::printf("[%s] %s\n", tag.c_str(), shown.c_str());
  }
  std::string source;  // the text of that line, where cuda-gdb's file is on this machine
  std::ifstream in(file);
  for (int n = 1; !file.empty() && std::getline(in, source); ++n)
    if (std::to_string(n) == lineNumber) break;
  if (!in) source.clear();
  const std::string base = file.substr(file.find_last_of('/') + 1);
  const std::string at = file.empty() ? "none" : base + ":" + lineNumber;
  std::printf("[%s] named: exception \"%s\", kernel write_to %s, line %s\n", tag.c_str(), exception.c_str(),
              has(end.output, "write_to") ? "yes" : "no", at.c_str());
  if (!source.empty())
    std::printf("[%s] that line holds write_to: %s\n", tag.c_str(), has(source, "write_to") ? "yes" : "no");
  std::printf("[%s] cuda-gdb: %s, %.0f ms\n", tag.c_str(), howItEnded(end).c_str(), clock.ms());
}

//! [dumps-child]
// In a child: both dumps, one after the other, into a scratch folder removed at the end; then
// cuda-gdb on each (the first while the second child runs: it needs no GPU).
int childCoredumps() {
  // The driver's debugger library, which ships with the driver: named in the output, so that a
  // machine that writes no dump says what it has.
  void* debugger = dlopen("libcudadebugger.so.1", RTLD_LAZY | RTLD_LOCAL);
  std::printf("[probe] libcudadebugger.so.1: %s\n", debugger ? "opened" : dlerror());
  if (debugger) dlclose(debugger);
  wb::ScratchDir scratch;
  const std::string folder = scratch.path(), full = folder + "/env.nvcudmp";
  const wb::ProcessEnd fromEnv = wb::runProcess({wb::selfPath(), "--child", "dump-env"},
      {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1", "CUDA_COREDUMP_FILE=" + full}, kChildSeconds);
  const long long envEnded = monotonicNs();
  //! [dumps-child]
  report("env", fromEnv, envEnded, folder, {"env.nvcudmp"});
  const std::string gdb = findCudaGdb();
  std::future<void> gdbEnv;
  if (!gdb.empty() && fileBytes(full) > 0)
    gdbEnv = std::async(std::launch::async, [&] { openWithCudaGdb("gdb-env", gdb, full, folder); });
#if CUDA_VERSION >= 12010
  const wb::ProcessEnd fromApi =
      wb::runProcess({wb::selfPath(), "--child", "dump-api", folder}, {}, kChildSeconds);
  const long long apiEnded = monotonicNs();
  if (gdbEnv.valid()) gdbEnv.get();
  std::fflush(stdout);
  report("api", fromApi, apiEnded, folder, {"context.nvcudmp", "global.nvcudmp"});
  if (!gdb.empty() && fileBytes(folder + "/context.nvcudmp") > 0)
    openWithCudaGdb("gdb-api", gdb, folder + "/context.nvcudmp", folder);
#else
  if (gdbEnv.valid()) gdbEnv.get();
  std::printf("[api] left out: this build's CUDA header (%d) predates the coredump attributes (CUDA 12.1)\n",
              CUDA_VERSION);
#endif
  if (gdb.empty()) std::printf("[gdb] skipped: no cuda-gdb (it ships with the toolkit, in bin/)\n");
  return wb::kExitOk;
}

// The two variables that choose the device: children fault the GPU the user chose.
bool choosesTheDevice(const std::string& name) {
  return name == "CUDA_VISIBLE_DEVICES" || name == "CUDA_DEVICE_ORDER";
}

// What every child runs without: each CUDA variable of common/environment.cpp's table but the two
// that choose the device. Each child sets what its step shows, and nothing else changes it.
std::vector<std::string> controlledVariables() {
  std::vector<std::string> names;
  for (const wb::EnvVariable& v : wb::cudaEnvironmentVariables())
    if (!choosesTheDevice(v.name)) names.emplace_back(v.name);
  return names;
}

std::vector<wb::EnvUse> environmentUses() {
  std::vector<wb::EnvUse> uses = {
      {"CUDA_LOG_FILE", wb::Under::Teaches,
       "the driver also writes there what steps 1 to 4 provoke; the children run without it "
       "(step 5 sets its own)"},
      {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", wb::Under::Controls,
       "its children run without it; step 7 sets it for one"},
  };
  for (const std::string& name : controlledVariables()) {
    bool listed = false;
    for (const wb::EnvUse& u : uses) listed = listed || name == u.variable;
    // An EnvUse keeps a pointer to its name: the table's own string, which outlives this loop.
    if (!listed)
      uses.emplace_back(wb::findEnvVariable(name)->name, wb::Under::Controls, "its children run without it");
  }
  return uses;
}

// This program again as a child, with a time limit, started now in a thread and read by its step.
std::future<wb::ProcessEnd> startChild(const std::string& what) {
  return std::async(std::launch::async, [what] {
    return wb::runProcess({wb::selfPath(), "--child", what}, controlledVariables(), kChildSeconds);
  });
}

void logFileStep(const wb::ProcessEnd& end, int driver) {
  std::printf("a child with CUDA_LOG_FILE=<scratch>/cuda.log (%s):\n", howItEnded(end).c_str());
  bool named = false;
  for (const std::string& line : linesOf(end.output)) {
    std::printf("%s\n", line.c_str());
    named = named || (line.rfind("  the file: ", 0) == 0 && has(line, "cuMemAlloc"));
  }
  if (driver < 12090) {
    std::printf("(this driver, %d, predates error log management: CUDA 12.9)\n", driver);
    return;
  }
  wb::expect(end.code == 0 && named, "the file naming the refused call",
             named ? howItEnded(end) : "no such line");
}

// Lines of run tag that arrived, and how many of them came before the run's first mark.
struct Arrived {
  std::vector<bool> seen = std::vector<bool>(kPrintedLines, false);
  int count = 0, beforeSync = 0;
};

Arrived arrivedOf(const std::string& output, int tag) {
  Arrived a;
  bool marked = false;
  const std::string mark = "  mark run " + std::to_string(tag) + ": the kernel has finished";
  for (const std::string& line : linesOf(output)) {
    int run = 0, i = 0;
    if (line.rfind(mark, 0) == 0) marked = true;
    const bool printed = std::sscanf(line.c_str(), "printf run %d line %d", &run, &i) == 2;
    if (!printed || run != tag || i < 0 || i >= kPrintedLines || a.seen[i]) continue;
    a.seen[i] = true;
    ++a.count;
    if (!marked) ++a.beforeSync;
  }
  return a;
}

//! [printf-step]
void printfStep(const wb::ProcessEnd& end) {
  std::printf("a child, %d lines of printf per run (%s):\n", kPrintedLines, howItEnded(end).c_str());
  for (const std::string& line : linesOf(end.output))
    if (line.rfind("printf run ", 0) != 0) std::printf("%s\n", line.c_str());
  const Arrived small = arrivedOf(end.output, 1), full = arrivedOf(end.output, 2);
  for (const Arrived* a : {&small, &full}) {
    int lowest = -1, highest = -1;
    for (int i = 0; i < kPrintedLines; ++i)
      if (a->seen[i]) {
        highest = i;
        if (lowest < 0) lowest = i;
      }
    std::printf("run %d: %d of %d lines arrived (%d before the synchronisation); lowest %d, highest %d\n",
                a == &small ? 1 : 2, a->count, kPrintedLines, a->beforeSync, lowest, highest);
  }
  //! [printf-step]
  size_t smallFifo = 0;
  for (const std::string& line : linesOf(end.output))
    std::sscanf(line.c_str(), "  a new context, asked for %*d bytes: its FIFO holds %zu", &smallFifo);
  wb::expect(end.code == 0 && full.count == kPrintedLines && full.beforeSync == 0 && small.beforeSync == 0,
             "every line through the default FIFO, and none before the synchronisation", howItEnded(end));
  // Each line puts at least its format string's 8-byte address into the FIFO: a FIFO of fewer
  // bytes than 8 per line cannot hold them all.
  if (smallFifo < static_cast<size_t>(kPrintedLines) * 8)
    wb::expect(small.count < kPrintedLines, "lines lost from the small FIFO", "every line arrived");
  else
    std::printf("(the driver kept %zu bytes for the small FIFO: room, perhaps, for every line)\n", smallFifo);
  wb::expect(has(end.output, "after a printf kernel: CUDA_ERROR_INVALID_VALUE"),
             "the FIFO's size refused once a printf kernel has run", "another answer");
}

// The lines of the dumps child under tag, without it.
std::vector<std::string> tagged(const std::string& output, const std::string& tag) {
  std::vector<std::string> out;
  const std::string prefix = "[" + tag + "] ";
  for (const std::string& line : linesOf(output))
    if (line.rfind(prefix, 0) == 0) out.push_back(line.substr(prefix.size()));
  return out;
}

bool anyLine(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines)
    if (has(l, part)) return true;
  return false;
}

void show(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) std::printf("%s\n", l.c_str());
}

// Whether either child wrote a dump. Where neither did, this machine writes none (on driver 580 one
// H100 host wrote none by either path, where an H200 host wrote both): steps 7 to 9 then show what
// happened and hold the run only to what needs no dump.
bool anyDump(const wb::ProcessEnd& dumps) {
  return !anyLine(tagged(dumps.output, "env"), "dump env.nvcudmp: none") ||
         !anyLine(tagged(dumps.output, "api"), "dump context.nvcudmp: none");
}

void envDumpStep(const wb::ProcessEnd& dumps) {
  const std::vector<std::string> env = tagged(dumps.output, "env");
  std::printf("a child with CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 CUDA_COREDUMP_FILE=<scratch>/env.nvcudmp:\n");
  show(env);
  show(tagged(dumps.output, "probe"));
  if (!anyDump(dumps)) {
    std::printf("no GPU core dump was written on this machine, by this child or the next: steps 7 to 9 "
                "show what happened and check only what needs no dump\n");
    return;
  }
  const bool aborted = anyLine(env, "ended: killed by signal " + std::to_string(SIGABRT));
  wb::expect(aborted && !anyLine(env, "dump env.nvcudmp: none"), "a dump written, then the process aborted",
             dumps.code == 0 ? "another end" : "the dumps child: " + howItEnded(dumps));
}

void apiDumpStep(const wb::ProcessEnd& dumps) {
  const std::vector<std::string> api = tagged(dumps.output, "api");
  std::printf("a child that sets up its dumps itself (global flags %s, a per-context file):\n",
              CUDA_VERSION >= 12050 ? "LIGHTWEIGHT_FLAGS | SKIP_ABORT" : "LIGHTWEIGHT, no TRIGGER_HOST");
  show(api);
  if (CUDA_VERSION < 12010) return;
  const bool perContext = anyLine(api, "per context, ENABLE_ON_EXCEPTION: 1") &&
                          anyLine(api, "globally, ENABLE_ON_EXCEPTION: 0");
  const bool ownFile = !anyLine(api, "dump context.nvcudmp: none") && anyLine(api, "dump global.nvcudmp: none");
  const bool wentOn = anyLine(api, "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS") &&
                      anyLine(api, "ended: exit code 0");
  wb::expect(perContext && (ownFile || !anyDump(dumps)), "the dump enabled and named per context, not globally",
             "other settings or files");
  wb::expect(wentOn, "the process going on after the dump, with the error in hand", "another end");
  wb::expect(!anyLine(api, "ENABLE_USER_TRIGGER): CUDA_SUCCESS"), "a user trigger refused per context",
             "it was set");
}

void gdbStep(const wb::ProcessEnd& dumps) {
  for (const char* tag : {"gdb-env", "gdb-api"}) {
    const std::vector<std::string> lines = tagged(dumps.output, tag);
    if (lines.empty()) continue;
    const bool full = std::strcmp(tag, "gdb-env") == 0;
    std::printf("cuda-gdb -batch -ex \"target cudacore <scratch>/%s\":\n", full ? "env.nvcudmp" : "context.nvcudmp");
    show(lines);
  }
  const std::vector<std::string> skipped = tagged(dumps.output, "gdb");
  show(skipped);
  if (!skipped.empty()) return;
  if (!anyDump(dumps)) return (void)std::printf("no dump to open\n");
  const std::vector<std::string> env = tagged(dumps.output, "gdb-env");
  const bool named =
      anyLine(env, "Illegal Address") && anyLine(env, "kernel write_to yes") && !anyLine(env, "line none");
  wb::expect(named, "cuda-gdb naming the exception, the kernel and its line",
             env.empty() ? "no cuda-gdb output" : env.back());
}

int childMain(const std::vector<std::string>& args) {
  const std::string what = args.empty() ? "" : args[0];
  if (what == "log-file") return childLogFile();
  if (what == "printf") return childPrintf();
  if (what == "coredumps") return childCoredumps();
  if (what == "dump-env") return childDumpFromEnvironment();
#if CUDA_VERSION >= 12010
  if (what == "dump-api" && args.size() == 2) return childDumpFromApi(args[1]);
#endif
  std::fprintf(stderr, "usage: lesson24-logs-and-core-dumps "
                       "[--child log-file|printf|coredumps|dump-env|dump-api <folder>]\n");
  return wb::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0] == "--child") return childMain({args.begin() + 1, args.end()});
    if (!args.empty()) return childMain(args);
    wb::checkEnvironment(environmentUses());
    CU_CHECK(cuInit(0));  // a machine without a driver hears why before any child starts
    wb::verifiedImagePath("faults.fatbin");  // and a damaged image stops it here, not in every child
    wb::verifiedImagePath("device_printf.fatbin");
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    // Separate processes, so they run beside this one's steps; each step reads its own.
    auto logFile = startChild("log-file");
    auto printing = startChild("printf");
    auto dumps = startChild("coredumps");
    Setup s;
    wb::ScratchDir scratch;
#if CUDA_VERSION >= 12090
    wb::step(1, "The driver's words for a refused call");
    callbackStep();
    wb::step(2, "The log buffer, read from an iterator");
    iteratorStep();
    wb::step(3, "The last 100 entries, in a file");
    rolloverStep(scratch.path());
    wb::step(4, "A checked call that says why");
    explainedStep();
#else
    const char* titles[] = {"The driver's words for a refused call", "The log buffer, read from an iterator",
                            "The last 100 entries, in a file", "A checked call that says why"};
    for (int n = 1; n <= 4; ++n) {
      wb::step(n, titles[n - 1]);
      std::printf("left out: this build's CUDA header (%d) has no cuLogs* calls, which CUDA 12.9 added\n",
                  CUDA_VERSION);
    }
#endif
    wb::step(5, "CUDA_LOG_FILE: the same log without a line of code");
    logFileStep(logFile.get(), driver);
    wb::step(6, "The printf FIFO: what a kernel that prints too much loses");
    printfStep(printing.get());
    const wb::ProcessEnd dumped = dumps.get();
    wb::step(7, "A GPU core dump from the environment");
    envDumpStep(dumped);
    wb::step(8, "Core dumps set up by the program: lightweight, per context, no abort");
    apiDumpStep(dumped);
    wb::step(9, "Opening a core dump with cuda-gdb");
    gdbStep(dumped);
    s.release();
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

// Lesson 24: driver logs. What the driver says when a call fails, and what a kernel's printf loses.
//
// What you learn: since CUDA 12.9 the driver logs its refusals in plain words. A callback
// (cuLogsRegisterCallback) gets each message as it is logged; a buffer of the 100 most recent
// entries is read from an iterator (cuLogsCurrent, cuLogsDumpToMemory, cuLogsDumpToFile); and
// CUDA_LOG_FILE writes the same to a file without a line of code. A checked call (lesson 02) that
// takes an iterator before the call carries the driver's reason into its message. Device printf
// goes through a FIFO of fixed size (cuCtxSetLimit, CU_LIMIT_PRINTF_FIFO_SIZE) that the host empties
// at synchronisation points: a kernel that prints more than it holds loses lines.
//
// CUDA_LOG_FILE is read at cuInit and the printf FIFO's size only before a context's first printf
// kernel, so each of those runs in a child process: this program started again with --child
// <what>, with a time limit.
//
// APIs: cuLogsRegisterCallback, cuLogsUnregisterCallback, cuLogsCurrent, cuLogsDumpToMemory,
//       cuLogsDumpToFile, cuCtxSetLimit, cuCtxGetLimit
// Run:  ctest -R lesson24   (or build/lessons/lesson24-driver-logs)
#include "process.hpp"
#include "scratch.hpp"
#include "needs.hpp"
#include "workbook.hpp"

#include <sys/stat.h>
#include <csignal>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr unsigned kChildSeconds = 60;  // no child may take longer: a hang ends in a message
constexpr int kPrintedLines = 8192;     // lines the printf kernel prints in the default FIFO's run
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
  // Given back by each process before it ends, in the order it was taken.
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
void printRun(const Setup& s, int tag, int lines) {
  std::printf("  run %d prints %d lines\n", tag, lines);
  CUdeviceptr returned = 0;
  CU_CHECK(cuMemAlloc(&returned, lines * sizeof(int)));
  int run = tag;
  void* args[] = {&run, &lines, &returned};
  const CUfunction print = s.kernel("print_lines");
  CU_CHECK(cuLaunchKernel(print, (lines + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
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
  std::vector<int> back(lines);
  CU_CHECK(cuMemcpyDtoH(back.data(), returned, back.size() * sizeof(int)));
  const auto two = std::count(back.begin(), back.end(), 2);
  const auto negative = std::count_if(back.begin(), back.end(), [](int v) { return v < 0; });
  std::printf("  run %d: printf returned 2 in %ld threads, a negative value in %ld, something else in %ld\n",
              tag, static_cast<long>(two), static_cast<long>(negative),
              static_cast<long>(lines - two - negative));
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
  // Sized from what the driver kept: a line puts at least its format string's 8-byte address into
  // the FIFO, so more lines than a eighth of its bytes cannot all fit, whatever it rounded up to.
  printRun(s, 1, static_cast<int>(std::max<size_t>(kPrintedLines, (set / 8 + 256) / 256 * 256)));
  say("cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE) after a printf kernel",
      cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, byDefault));
  CU_CHECK(cuCtxDestroy(small));  // pops it: the primary context is current again
  size_t primary = 0;
  CU_CHECK(cuCtxGetLimit(&primary, CU_LIMIT_PRINTF_FIFO_SIZE));
  std::printf("  the primary context's FIFO: %zu bytes (before the new context: %zu)\n", primary, byDefault);
  printRun(s, 2, kPrintedLines);
  //! [printf-child]
  s.release();
  return wb::kExitOk;
}

std::string howItEnded(const wb::ProcessEnd& end) {
  if (end.timedOut) return "it hung and was ended after " + std::to_string(kChildSeconds) + " s";
  if (end.signal)
    return "killed by signal " + std::to_string(end.signal) + (end.signal == SIGABRT ? " (SIGABRT)" : "");
  return "exit code " + std::to_string(end.code);
}

// What every child runs without: each CUDA variable of common/environment.cpp's table but the two
// that choose the device. Each child sets what its step shows, and nothing else changes it.
std::vector<std::string> controlledVariables() { return wb::variablesButDeviceChoice(); }

std::vector<wb::EnvUse> environmentUses() {
  std::vector<wb::EnvUse> uses = {
      {"CUDA_LOG_FILE", wb::Under::Teaches,
       "the driver also writes there what steps 1 to 4 provoke; the children run without it "
       "(step 5 sets its own)"},
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
  if (!wb::meetsDriver(driver)) {  // lessons/needs.tsv: 12.9, error log management
    std::printf("(this driver, %d, predates error log management: CUDA 12.9)\n", driver);
    return;
  }
  wb::expect(end.code == 0 && named, "the file naming the refused call",
             named ? howItEnded(end) : "no such line");
}

// Lines of run tag: how many it printed, which arrived, and how many came before the run's first mark.
struct Arrived {
  int printed = 0, count = 0, beforeSync = 0;
  std::vector<bool> seen;
};

Arrived arrivedOf(const std::string& output, int tag) {
  Arrived a;
  for (const std::string& line : linesOf(output)) {
    int run = 0, n = 0;
    if (std::sscanf(line.c_str(), "  run %d prints %d lines", &run, &n) == 2 && run == tag) a.printed = n;
  }
  a.seen.assign(static_cast<size_t>(std::max(a.printed, 0)), false);
  bool marked = false;
  const std::string mark = "  mark run " + std::to_string(tag) + ": the kernel has finished";
  for (const std::string& line : linesOf(output)) {
    int run = 0, i = 0;
    if (line.rfind(mark, 0) == 0) marked = true;
    const bool printed = std::sscanf(line.c_str(), "printf run %d line %d", &run, &i) == 2;
    if (!printed || run != tag || i < 0 || i >= a.printed || a.seen[i]) continue;
    a.seen[i] = true;
    ++a.count;
    if (!marked) ++a.beforeSync;
  }
  return a;
}

//! [printf-step]
void printfStep(const wb::ProcessEnd& end) {
  std::printf("a child, two runs of printf (%s):\n", howItEnded(end).c_str());
  for (const std::string& line : linesOf(end.output))
    if (line.rfind("printf run ", 0) != 0) std::printf("%s\n", line.c_str());
  const Arrived small = arrivedOf(end.output, 1), full = arrivedOf(end.output, 2);
  for (const Arrived* a : {&small, &full}) {
    int lowest = -1, highest = -1;
    for (int i = 0; i < a->printed; ++i)
      if (a->seen[i]) {
        highest = i;
        if (lowest < 0) lowest = i;
      }
    std::printf("run %d: %d of %d lines arrived (%d before the synchronisation); lowest %d, highest %d\n",
                a == &small ? 1 : 2, a->count, a->printed, a->beforeSync, lowest, highest);
  }
  //! [printf-step]
  size_t smallFifo = 0, fullFifo = 0;
  for (const std::string& line : linesOf(end.output)) {
    std::sscanf(line.c_str(), "  a new context, asked for %*d bytes: its FIFO holds %zu", &smallFifo);
    std::sscanf(line.c_str(), "  the primary context's FIFO: %zu", &fullFifo);
  }
  // Run 1 printed more lines than an eighth of its FIFO's bytes: they cannot all fit (a line holds at
  // least its format string's 8-byte address), and the guide: "older output is overwritten".
  wb::expect(end.code == 0 && small.printed > 0 && small.count < small.printed, "lines lost from the small FIFO",
             "every line arrived");
  // What a line costs in the FIFO is the driver's (undocumented): measured from the lines the full
  // FIFO still held at the synchronisation (those that came before it had left the FIFO already).
  const int held = small.count - small.beforeSync;
  const double perLine = held > 0 ? static_cast<double>(smallFifo) / held : 0;
  std::printf("run 1's FIFO of %zu bytes held %d lines at the synchronisation: about %.0f bytes per line of "
              "two arguments (observed)\n", smallFifo, held, perLine);
  // The guide: the buffer "is flushed only when" a launch, a synchronisation, ... : not before it.
  wb::expect(full.beforeSync == 0, "no line of run 2 before the synchronisation",
             std::to_string(full.beforeSync) + " lines came before it");
  if (small.beforeSync > 0)
    std::printf("(run 1 overflowed its FIFO, and %d of its lines came before the synchronisation: observed; what "
                "an overwritten buffer delivers, and when, the guide does not say)\n", small.beforeSync);
  // Every line of run 2 is owed only where the default FIFO holds them at the cost run 1 measured.
  if (perLine > 0 && fullFifo >= perLine * full.printed)
    wb::expect(full.count == full.printed, "every line through the default FIFO, which has room for them",
               std::to_string(full.count) + " of " + std::to_string(full.printed));
  else
    std::printf("(the default FIFO, %zu bytes, may not hold %d lines at that cost: %d arrived)\n", fullFifo,
                full.printed, full.count);
  wb::expect(has(end.output, "after a printf kernel: CUDA_ERROR_INVALID_VALUE"),
             "the FIFO's size refused once a printf kernel has run", "another answer");
}

int childMain(const std::vector<std::string>& args) {
  const std::string what = args.empty() ? "" : args[0];
  if (what == "log-file") return childLogFile();
  if (what == "printf") return childPrintf();
  std::fprintf(stderr, "usage: lesson24-driver-logs [--child log-file|printf]\n");
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
    wb::verifiedImagePath("device_printf.fatbin");  // and a damaged image stops it here, not in the child
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    // Separate processes, so they run beside this one's steps; each step reads its own.
    auto logFile = startChild("log-file");
    auto printing = startChild("printf");
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
    s.release();
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

// Lesson 24's claims. The log suites run in this process: every case takes an iterator first and
// reads only what its own calls logged (the log is the process's, and other cases add to it). The
// printf FIFO and CUDA_LOG_FILE are the lesson program's children (--child ...), read from the
// records lesson24.run left (common/process.hpp), or started here when there are none.
#include "damaged_images.hpp"
#include "environment.hpp"
#include "process.hpp"
#include "scratch.hpp"
#include "support.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr unsigned kLimitSeconds = 120;
constexpr int kPrintedLines = 8192;  // the lines of the program's printf run through the default FIFO

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The lesson program as a child: recorded by lesson24.run under ctest, else run now, with every
// CUDA variable but the two that choose the device removed, as the program runs its children.
const wb::ProcessEnd& child(const std::string& what) {
  static std::mutex mutex;
  static std::map<std::string, wb::ProcessEnd> runs;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!runs.count(what)) {
    const std::vector<std::string> argv{WORKBOOK_LESSON_PROGRAM, "--child", what};
    const std::vector<std::string> removed = wb::variablesButDeviceChoice();
    const std::optional<wb::ProcessEnd> recorded = wb::recordedRun(argv, removed);
    runs[what] = recorded ? *recorded : wb::runProcess(argv, removed, kLimitSeconds);
  }
  return runs.at(what);
}

#if CUDA_VERSION >= 12090
std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

struct Collected {
  std::mutex mutex;
  std::vector<std::string> messages;
  void* data = nullptr;  // the userData the last call brought back
};

void CUDA_CB collect(void* data, CUlogLevel, char* message, size_t length) {
  auto* into = static_cast<Collected*>(data);
  std::string text(message, length);
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
  const std::lock_guard<std::mutex> lock(into->mutex);
  into->messages.push_back(text);
  into->data = data;
}

// The primary context of device 0, current for the case: cuMemAlloc needs one to be refused for its size.
struct Current {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed pushed{primary.get()};
};

CUlogIterator now() {
  CUlogIterator it = 0;
  CU_CHECK(cuLogsCurrent(&it, 0));
  return it;
}

// Everything from it on (nullptr: the whole buffer), and the size the dump reported.
std::string dumpFrom(CUlogIterator* it, size_t* reported = nullptr) {
  std::vector<char> buffer(25600);
  size_t size = buffer.size();
  CU_CHECK(cuLogsDumpToMemory(it, buffer.data(), &size, 0));
  if (reported) *reported = size;
  return std::string(buffer.data());
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

constexpr size_t kGuard = 64 << 10;
constexpr char kFill = static_cast<char>(0xA5);  // no byte of a log line

// How far past room bytes the driver wrote into a buffer filled with kFill.
size_t pastEnd(const std::vector<char>& bytes, size_t room) {
  for (size_t i = bytes.size() - 1; i > room; --i)
    if (bytes[i - 1] != kFill) return i - room;
  return 0;
}

CUresult refuseAllocation() {
  CUdeviceptr p = 0;
  return cuMemAlloc(&p, 0);
}

CUresult refuseDumpIntoNothing() {
  size_t size = 0;
  return cuLogsDumpToMemory(nullptr, nullptr, &size, 0);
}
#endif

}  // namespace

TEST_SUITE("callback") {
  // The reference: cuMemAlloc "If bytesize is 0, cuMemAlloc() returns CUDA_ERROR_INVALID_VALUE". The
  // messages' wording is the driver's (observed on driver 580: "Requested 0 byte allocation", then
  // "Returning 1 (CUDA_ERROR_INVALID_VALUE) from cuMemAlloc_v2").
  TEST_CASE("a registered callback receives cuMemAlloc(&p, 0)'s refusal: a message naming the call and CUDA_ERROR_INVALID_VALUE, and one saying why") {
#if CUDA_VERSION >= 12090
    Current ctx;
    Collected got;
    CUlogsCallbackHandle handle = nullptr;
    CU_CHECK(cuLogsRegisterCallback(collect, &got, &handle));
    const CUresult rc = refuseAllocation();
    CU_CHECK(cuLogsUnregisterCallback(handle));
    CHECK(rc == CUDA_ERROR_INVALID_VALUE);
    INFO(joined(got.messages));
    bool namesCall = false, saysWhy = false;
    for (const std::string& m : got.messages) {
      namesCall = namesCall || (has(m, "cuMemAlloc") && has(m, "CUDA_ERROR_INVALID_VALUE"));
      saysWhy = saysWhy || (!messageOf(m).empty() && messageOf(m).rfind("Returning ", 0) != 0);
    }
    CHECK(namesCall);
    CHECK(saysWhy);
    CHECK(got.data == &got);
#else
    wbt::skipCase("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }

  TEST_CASE("after cuLogsUnregisterCallback the callback receives nothing more") {
#if CUDA_VERSION >= 12090
    Current ctx;
    Collected got;
    CUlogsCallbackHandle handle = nullptr;
    CU_CHECK(cuLogsRegisterCallback(collect, &got, &handle));
    refuseAllocation();
    const size_t registered = got.messages.size();
    CU_CHECK(cuLogsUnregisterCallback(handle));
    refuseAllocation();
    CHECK(registered > 0);
    CHECK(got.messages.size() == registered);
#else
    wbt::skipCase("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }
}

TEST_SUITE("log-buffer") {
  TEST_CASE("a dump from an iterator holds what was logged after cuLogsCurrent and not before, and advances it: a second dump is empty") {
#if CUDA_VERSION >= 12090
    Current ctx;
    refuseAllocation();  // before the iterator
    CUlogIterator it = now();
    CHECK(refuseDumpIntoNothing() == CUDA_ERROR_INVALID_VALUE);
    size_t size = 0, again = 1;
    const std::string dumped = dumpFrom(&it, &size);
    dumpFrom(&it, &again);
    INFO(dumped);
    CHECK(has(dumped, "cuLogsDumpToMemory"));
    CHECK_FALSE(has(dumped, "cuMemAlloc"));
    CHECK(again == 0);
#else
    wbt::skipCase("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }

  // The reference: cuLogsDumpToMemory "will then return the actual number of bytes written in *size,
  // excluding the null terminator", with "only a newline \n" between entries.
  TEST_CASE("cuLogsDumpToMemory's size is the buffer's bytes going in and the bytes written, without the NUL, coming out") {
#if CUDA_VERSION >= 12090
    Current ctx;
    CUlogIterator it = now();
    refuseAllocation();
    size_t size = 0;
    const std::string dumped = dumpFrom(&it, &size);
    CHECK(size > 0);
    CHECK(size == dumped.size());
    CHECK(linesOf(dumped).size() >= 2);
#else
    wbt::skipCase("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }

  // The reference: no room for any message gives size 0 and CUDA_ERROR_INVALID_VALUE; room for some
  // but not all: "The final message in buffer will always be the most recent log message".
  TEST_CASE("a buffer too small for any message is refused with size 0; one too small for all ends with the most recent message") {
#if CUDA_VERSION >= 12090
    Current ctx;
    refuseAllocation();
    refuseDumpIntoNothing();
    // Guarded buffers: on driver 580 a dump into a buffer too small for the whole log wrote past the
    // size it was given (an H100 host: about 290 bytes into 256), which corrupted this process's heap.
    std::vector<char> tiny(8 + kGuard, kFill), some(256 + kGuard, kFill);
    tiny.back() = some.back() = '\0';
    size_t tinySize = 8;
    CHECK(cuLogsDumpToMemory(nullptr, tiny.data(), &tinySize, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(tinySize == 0);
    size_t someSize = 256;
    CU_CHECK(cuLogsDumpToMemory(nullptr, some.data(), &someSize, 0));
    MESSAGE("written past the buffers (not asserted): " << pastEnd(tiny, 8) << " bytes past 8, "
                                                         << pastEnd(some, 256) << " past 256");
    const std::vector<std::string> part = linesOf(some.data()), whole = linesOf(dumpFrom(nullptr));
    INFO(some.data());
    REQUIRE_FALSE(part.empty());
    CHECK(part.size() < whole.size());
    CHECK(part.back() == whole.back());
#else
    wbt::skipCase("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }

  TEST_CASE("cuLogsDumpToFile writes the lines cuLogsDumpToMemory returns from the same position") {
#if CUDA_VERSION >= 12090
    Current ctx;
    CUlogIterator toMemory = now(), toFile = toMemory;
    refuseAllocation();
    refuseDumpIntoNothing();
    const std::string dumped = dumpFrom(&toMemory);
    wb::ScratchDir scratch;
    const std::string path = scratch.path() + "/log.txt";
    CU_CHECK(cuLogsDumpToFile(&toFile, path.c_str(), 0));
    std::ifstream in(path);
    const std::string written{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    CHECK(linesOf(written) == linesOf(dumped));
    CHECK(toFile == toMemory);
#else
    wbt::skipCase("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }
}

TEST_SUITE("rollover") {
  // The programming guide (error log management, limitations): "The log buffer is limited to 100
  // entries. After this limit is reached, the oldest entries will be replaced and log dumps will
  // contain a line noting the rollover."
  TEST_CASE("after 120 refused calls the buffer keeps at most 100 entries and a line noting the rollover, and older entries are gone") {
#if CUDA_VERSION >= 12090
    Current ctx;
    refuseDumpIntoNothing();  // older than all that follows
    for (int i = 0; i < 120; ++i) refuseAllocation();
    size_t ours = 0, others = 0;
    bool older = false;
    const std::string all = dumpFrom(nullptr);
    for (const std::string& line : linesOf(all)) {
      (has(line, "cuMemAlloc") || has(line, "0 byte") ? ours : others) += 1;
      older = older || has(line, "cuLogsDumpToMemory");
    }
    INFO(all);
    CHECK(ours > 0);
    CHECK(ours <= 100);
    CHECK(others >= 1);
    CHECK_FALSE(older);
#else
    wbt::skipCase("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }
}

TEST_SUITE("explained") {
  // What the program's CU_CHECK_EXPLAINED does: an iterator before the call, a dump from it after.
  TEST_CASE("a check that takes an iterator before the call has, when the call fails, the driver's reason for that call and no earlier one's") {
#if CUDA_VERSION >= 12090
    Current ctx;
    CUlogIterator since = now();
    refuseDumpIntoNothing();  // an earlier failure with a reason of its own
    std::vector<std::string> earlier;
    for (const std::string& line : linesOf(dumpFrom(&since))) earlier.push_back(messageOf(line));  // since moves on
    REQUIRE(refuseAllocation() == CUDA_ERROR_INVALID_VALUE);
    std::vector<std::string> reasons;
    for (const std::string& line : linesOf(dumpFrom(&since))) {
      const std::string m = messageOf(line);
      if (!m.empty() && m.rfind("Returning ", 0) != 0) reasons.push_back(m);
    }
    INFO("earlier:\n" << joined(earlier) << "since the iterator:\n" << joined(reasons));
    CHECK_FALSE(earlier.empty());
    CHECK_FALSE(reasons.empty());
    for (const std::string& m : earlier) CHECK(std::find(reasons.begin(), reasons.end(), m) == reasons.end());
#else
    wbt::skipCase("this build's CUDA header predates error log management (CUDA 12.9)");
#endif
  }
}

TEST_SUITE("log-file") {
  // The programming guide: set CUDA_LOG_FILE to stdout, stderr "or a valid path on the system to write a file".
  TEST_CASE("with CUDA_LOG_FILE set before cuInit, the file holds the refused call's messages") {
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    if (driver < 12090) return wbt::skipCase("this driver predates error log management (CUDA 12.9)");
    const wb::ProcessEnd& end = child("log-file");
    INFO(end.output);
    CHECK(end.code == 0);
    bool named = false;
    for (const std::string& line : linesOf(end.output))
      named = named || (line.rfind("  the file: ", 0) == 0 && has(line, "cuMemAlloc"));
    CHECK(named);
  }
}

TEST_SUITE("printf-fifo") {
  // Lines of one run of the program's printf child (run 1: a new context whose FIFO was asked for 4
  // KiB, more lines than an eighth of what the driver kept; run 2: the primary context's default):
  // how many it printed, how many arrived, and how many came before the mark it prints once the
  // kernel has finished and before it synchronises.
  struct Run {
    int printed = 0, arrived = 0, beforeSync = 0;
  };
  Run runOf(const std::string& output, int tag) {
    Run r;
    for (const std::string& line : linesOf(output)) {
      int run = 0, n = 0;
      if (std::sscanf(line.c_str(), "  run %d prints %d lines", &run, &n) == 2 && run == tag) r.printed = n;
    }
    bool marked = false;
    std::vector<bool> seen(static_cast<size_t>(std::max(r.printed, 0)), false);
    for (const std::string& line : linesOf(output)) {
      int run = 0, i = 0;
      if (line.rfind("  mark run " + std::to_string(tag) + ": the kernel has finished", 0) == 0) marked = true;
      if (std::sscanf(line.c_str(), "printf run %d line %d", &run, &i) != 2 || run != tag || i < 0 || i >= r.printed || seen[i])
        continue;
      seen[i] = true;
      ++r.arrived;
      if (!marked) ++r.beforeSync;
    }
    return r;
  }

  // The programming guide (formatted output): the buffer "is flushed only when" a launch, a
  // synchronisation, a blocking copy, a module load or unload, a context's destruction or a host
  // callback; cuStreamQuery is none of them. A FIFO that overflowed is left out: on driver 580 some
  // of its lines came early in some runs (what an overwritten circular buffer delivers, and when,
  // the guide does not say).
  TEST_CASE("no printf line arrives before a synchronisation, though the kernel has finished") {
    const wb::ProcessEnd& end = child("printf");
    REQUIRE(end.code == 0);
    const Run full = runOf(end.output, 2);
    REQUIRE(full.printed == kPrintedLines);
    CHECK(full.beforeSync == 0);
  }

  // The FIFO's default size and what a line costs in it are the driver's (neither is documented):
  // every line of run 2 is owed only where the default holds them at the cost run 1 measured.
  TEST_CASE("through the primary context's default FIFO every line arrives, where it has room for them at the measured cost per line") {
    const wb::ProcessEnd& end = child("printf");
    REQUIRE(end.code == 0);
    size_t small = 0, byDefault = 0;
    for (const std::string& line : linesOf(end.output)) {
      std::sscanf(line.c_str(), "  a new context, asked for %*d bytes: its FIFO holds %zu", &small);
      std::sscanf(line.c_str(), "  the primary context's FIFO: %zu", &byDefault);
    }
    const Run lossy = runOf(end.output, 1), full = runOf(end.output, 2);
    const int held = lossy.arrived - lossy.beforeSync;  // what the full FIFO held at the synchronisation
    REQUIRE(held > 0);
    const double perLine = static_cast<double>(small) / held;
    MESSAGE("about " << perLine << " bytes of FIFO per line (observed); the default FIFO " << byDefault << " bytes");
    if (byDefault < perLine * full.printed)
      return wbt::skipCase("the default FIFO has no room for every line at the measured cost");
    CHECK(full.arrived == full.printed);
  }

  // The programming guide: "if more output is produced during kernel execution than can fit in the
  // buffer, older output is overwritten". Each line puts at least its format string's address (8
  // bytes) into the FIFO, and run 1 prints more lines than an eighth of the FIFO the driver kept.
  TEST_CASE("through a FIFO set small before any printf kernel of its context, more lines than an eighth of its bytes are not all delivered") {
    const wb::ProcessEnd& end = child("printf");
    REQUIRE(end.code == 0);
    size_t fifo = 0;
    for (const std::string& line : linesOf(end.output))
      std::sscanf(line.c_str(), "  a new context, asked for %*d bytes: its FIFO holds %zu", &fifo);
    const Run run = runOf(end.output, 1);
    INFO("the small FIFO holds " << fifo << " bytes; run 1 printed " << run.printed << " lines");
    REQUIRE(fifo > 0);
    REQUIRE(static_cast<size_t>(run.printed) * 8 > fifo);
    CHECK(run.arrived < run.printed);
  }

  // The reference (cuCtxSetLimit): setting CU_LIMIT_PRINTF_FIFO_SIZE "must be performed before
  // launching any kernel that uses the printf() device system call, otherwise
  // CUDA_ERROR_INVALID_VALUE will be returned".
  TEST_CASE("once a printf kernel has run in a context, its FIFO's size is refused with CUDA_ERROR_INVALID_VALUE") {
    const wb::ProcessEnd& end = child("printf");
    REQUIRE(end.code == 0);
    const std::string expected = "cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE) after a printf kernel: " +
                                 wb::errorName(CUDA_ERROR_INVALID_VALUE);
    CHECK(has(end.output, expected));
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}

// The checks of lesson 26's exercises (lessons/26-checkpoint/exercises.cpp). The processes the code
// under check suspends are children of the check, this binary again (the holder and the spread of
// tests/exercises/26-checkpoint/child.hpp), each with a time limit; every wait for their messages has
// a deadline. The check binary stands between the code and the cuCheckpointProcess* calls (below), so
// it sees every call in order, the process it names and its arguments, and the ledger's FailCall makes
// one of them fail without reaching the driver. Whatever a check leaves a child in, it brings it back
// to RUNNING before the next case. CUDA 12.8 introduced the calls (13.0 the gpuPairs of exercise 2):
// with an older cuda.h, or an older driver, the checks report themselves skipped. Two things no
// driver does on demand are made here: a state query that reports FAILED (failedPid), and a lock by
// someone else just before the code's own lock fails (lockBehindPid). Each case's name begins with
// the requirements it verifies.
#include "check.hpp"
#include "26-checkpoint/child.hpp"
#include "26-checkpoint/exercises.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#if CUDA_VERSION >= 12080

namespace {

using l26::note;
using l26::Note;

// What the check saw of the cuCheckpointProcess* calls since seen().clear().
struct SeenCall {
  std::string call;  // "lock", "checkpoint", "restore", "unlock" (state queries are not kept)
  int pid = 0;
  bool args = false;       // a non-null argument structure
  unsigned timeoutMs = 0;  // the lock's
  bool zeros = true;       // every field the reference reserves was zero
  std::vector<std::pair<std::string, std::string>> pairs;  // the restore's gpuPairs, as UUID bytes
};
std::vector<SeenCall>& seen() {
  static std::vector<SeenCall> calls;
  return calls;
}

std::string uuidBytes(const CUuuid& u) { return std::string(u.bytes, sizeof u.bytes); }

bool allZero(const void* p, size_t n) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  return std::all_of(b, b + n, [](unsigned char c) { return c == 0; });
}

}  // namespace

// The interposers: each keeps what it saw, then lets the ledger count the call (and fail it, where a
// FailCall says so), then calls the driver's own entry point.
#define L26_INTERPOSE(name, params, args, keep)                                                   \
  extern "C" CUresult CUDAAPI name params {                                                       \
    using Real = CUresult(CUDAAPI*) params;                                                       \
    static const Real real = reinterpret_cast<Real>(::wbx::detail::real(#name));                  \
    keep;                                                                                         \
    if (const CUresult injected = ::wbx::detail::enter(#name)) return injected;                   \
    return real ? real args : CUDA_ERROR_NOT_FOUND;                                               \
  }

namespace {

int failedPid = 0;      // the state query reports this process FAILED (no process can be made so on demand)
int lockBehindPid = 0;  // the next lock of this process is preceded by the check's own (then 0 again)

void noteLock(int pid, const CUcheckpointLockArgs* a) {
  SeenCall c{"lock", pid, a != nullptr, a ? a->timeoutMs : 0u, true, {}};
  if (a) c.zeros = a->reserved0 == 0 && allZero(a->reserved1, sizeof a->reserved1);
  seen().push_back(c);
  if (pid != 0 && pid == lockBehindPid) {  // someone else locks it first, straight at the driver
    lockBehindPid = 0;
    using Lock = CUresult(CUDAAPI*)(int, CUcheckpointLockArgs*);
    static const auto realLock = reinterpret_cast<Lock>(wbx::detail::real("cuCheckpointProcessLock"));
    CUcheckpointLockArgs args{};
    args.timeoutMs = 20000;
    if (realLock) realLock(pid, &args);
  }
}

template <class Args>
void noteCall(const char* call, int pid, const Args* a) {
  seen().push_back({call, pid, a != nullptr, 0u, !a || allZero(a, sizeof *a), {}});
}

void noteRestore(int pid, const CUcheckpointRestoreArgs* a) {
  SeenCall c{"restore", pid, a != nullptr, 0u, true, {}};
#if CUDA_VERSION >= 13000
  if (a) {
    // Everything after gpuPairsCount is reserved (its layout changed after 13.0: checked as bytes).
    const size_t used = offsetof(CUcheckpointRestoreArgs, gpuPairsCount) + sizeof a->gpuPairsCount;
    c.zeros = allZero(reinterpret_cast<const unsigned char*>(a) + used, sizeof *a - used);
    for (unsigned i = 0; a->gpuPairs && i < a->gpuPairsCount; ++i)
      c.pairs.emplace_back(uuidBytes(a->gpuPairs[i].oldUuid), uuidBytes(a->gpuPairs[i].newUuid));
  }
#else
  c.zeros = !a || allZero(a, sizeof *a);
#endif
  seen().push_back(c);
}

}  // namespace

extern "C" CUresult CUDAAPI cuCheckpointProcessGetState(int pid, CUprocessState* state) {
  using Real = CUresult(CUDAAPI*)(int, CUprocessState*);
  static const Real real = reinterpret_cast<Real>(::wbx::detail::real("cuCheckpointProcessGetState"));
  if (const CUresult injected = ::wbx::detail::enter("cuCheckpointProcessGetState")) return injected;
  if (pid != 0 && pid == failedPid && state) {
    *state = CU_PROCESS_STATE_FAILED;
    return CUDA_SUCCESS;
  }
  return real ? real(pid, state) : CUDA_ERROR_NOT_FOUND;
}
L26_INTERPOSE(cuCheckpointProcessLock, (int pid, CUcheckpointLockArgs* a), (pid, a), noteLock(pid, a))
L26_INTERPOSE(cuCheckpointProcessCheckpoint, (int pid, CUcheckpointCheckpointArgs* a), (pid, a),
              noteCall("checkpoint", pid, a))
L26_INTERPOSE(cuCheckpointProcessRestore, (int pid, CUcheckpointRestoreArgs* a), (pid, a), noteRestore(pid, a))
L26_INTERPOSE(cuCheckpointProcessUnlock, (int pid, CUcheckpointUnlockArgs* a), (pid, a), noteCall("unlock", pid, a))

namespace {

const std::vector<std::string> kChildEnv = {"WORKBOOK_CHILD=1", "WORKBOOK_EXERCISE_RESULTS", "CUDA_LAUNCH_BLOCKING"};
constexpr const char* kHolderCase = "child: a holder of device memory";
constexpr const char* kSpreadCase = "child: memory on every device";
constexpr unsigned kTimeout = 1700;  // an unusual timeoutMs, so that a made-up one shows

// The checks need the calls; where this build or driver lacks them, the exercise is skipped.
void needCheckpointCalls() {
  if (const std::string why = l26::noCheckpointCalls(); !why.empty()) throw wbx::Skipped(why);
}

// A holder child with 64 MiB of patterned device memory, started at its first use; one or two per
// check process (every process start pays for cuInit and a context).
l26::Child& holder(int which) {
  static l26::Child* children[2] = {nullptr, nullptr};
  if (!children[which]) {
    static std::vector<std::unique_ptr<l26::Child>> owned;
    owned.push_back(std::make_unique<l26::Child>(kHolderCase, kChildEnv));
    children[which] = owned.back().get();
    children[which]->hello();
    children[which]->ask(note("alloc", 64 << 20, 0xE25u + which), "allocated");
  }
  l26::backToRunning(children[which]->pid);
  return *children[which];
}

// The spread child (memory on every device), started at its first use.
l26::Child& spread() {
  static l26::Child child(kSpreadCase, kChildEnv);
  static const bool ready = (child.hello(), true);
  (void)ready;
  l26::backToRunning(child.pid);
  return child;
}

// The calls seen, as "lock 123, checkpoint 123, ...".
std::string callsSeen() {
  std::string out;
  for (const SeenCall& c : seen()) out += (out.empty() ? "" : ", ") + c.call + " " + std::to_string(c.pid);
  return out;
}

long count(const std::string& call) {
  return std::count_if(seen().begin(), seen().end(), [&](const SeenCall& c) { return c.call == call; });
}

// Runs f, which must throw an exception of type E: true when it did (wb::NotDone goes on).
template <class E = std::exception, class F>
bool threw(F&& f) {
  try {
    f();
  } catch (const wb::NotDone&) {
    throw;
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

void suspendHere(int pid) {
  REQUIRE(l26::lockWithin(pid, 20000) == CUDA_SUCCESS);
  REQUIRE(cuCheckpointProcessCheckpoint(pid, nullptr) == CUDA_SUCCESS);
}

}  // namespace

#endif  // CUDA_VERSION >= 12080

// ---- suspend-resume ---------------------------------------------------------------------------------

EXERCISE("suspend-resume", "Take a job's GPU away and give it back, never half-way",
         "cuCheckpointProcessGetState first; CUcheckpointLockArgs args{}; args.timeoutMs = timeoutMs; a failed lock "
         "with the process still RUNNING returns false; a failed checkpoint unlocks, then throws; resume: restore, "
         "then unlock (LOCKED: unlock only)") {
  TEST_CASE("child: a holder of device memory" * doctest::skip(!wbt::inChild())) {
    l26::runHolder(l17::parentChannel());
  }

#if CUDA_VERSION >= 12080
  TEST_CASE("R2 R6: suspended with its timeout and brought back: CHECKPOINTED, then RUNNING with its memory intact") {
    needCheckpointCalls();
    l26::Child& child = holder(0);
    seen().clear();
    const bool suspended = ex26::suspendGpu(child.pid, kTimeout);
    CHECK(suspended);
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_CHECKPOINTED);
    REQUIRE_MESSAGE(count("lock") == 1, callsSeen());
    CHECK(seen()[0].call == "lock");
    CHECK_MESSAGE(seen()[0].args, "the lock was given no arguments, so no timeout");
    CHECK(seen()[0].timeoutMs == kTimeout);
    CHECK(seen()[0].zeros);
    CHECK_MESSAGE(count("checkpoint") == 1, callsSeen());
    seen().clear();
    ex26::resumeGpu(child.pid);
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING);
    CHECK_MESSAGE(callsSeen() == "restore " + std::to_string(child.pid) + ", unlock " + std::to_string(child.pid),
                  callsSeen());
    CHECK(child.wordsWrong() == 0);
  }

  TEST_CASE("R1 R6: a CHECKPOINTED process is suspended already, a RUNNING one running already: nothing but the state asked") {
    needCheckpointCalls();
    l26::Child& child = holder(0);
    suspendHere(child.pid);
    seen().clear();
    CHECK(ex26::suspendGpu(child.pid, kTimeout));
    CHECK_MESSAGE(seen().empty(), callsSeen());
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_CHECKPOINTED);
    l26::backToRunning(child.pid);
    seen().clear();
    ex26::resumeGpu(child.pid);
    CHECK_MESSAGE(seen().empty(), callsSeen());
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING);
  }

  TEST_CASE("R3: a lock that gives up: false, nothing else called, the process still RUNNING") {
    needCheckpointCalls();
    l26::Child& child = holder(0);
    seen().clear();
    bool suspended = true;
    {
      wbx::FailCall fail("cuCheckpointProcessLock", CUDA_ERROR_NOT_READY);
      suspended = ex26::suspendGpu(child.pid, kTimeout);
    }
    CHECK_FALSE(suspended);
    CHECK_MESSAGE(callsSeen() == "lock " + std::to_string(child.pid), callsSeen());
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING);
  }

  TEST_CASE("R4: a checkpoint that fails: thrown, and the process unlocked, RUNNING as it was found") {
    needCheckpointCalls();
    l26::Child& child = holder(0);
    bool failed = false;
    {
      wbx::FailCall fail("cuCheckpointProcessCheckpoint", CUDA_ERROR_OUT_OF_MEMORY);
      failed = threw([&] { ex26::suspendGpu(child.pid, kTimeout); });
    }
    CHECK(failed);
    CHECK_MESSAGE(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING, "left locked: " << callsSeen());
    CHECK(child.wordsWrong() == 0);
  }

  TEST_CASE("R7: a restore that fails: resumeGpu throws") {
    needCheckpointCalls();
    l26::Child& child = holder(0);
    suspendHere(child.pid);
    wbx::FailCall fail("cuCheckpointProcessRestore", CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(threw([&] { ex26::resumeGpu(child.pid); }));
  }

  TEST_CASE("R5 R6: a process someone else locked: suspendGpu throws and leaves it LOCKED; resumeGpu unlocks it, no restore") {
    needCheckpointCalls();
    l26::Child& child = holder(0);
    REQUIRE(l26::lockWithin(child.pid, 20000) == CUDA_SUCCESS);
    seen().clear();
    CHECK(threw<std::runtime_error>([&] { ex26::suspendGpu(child.pid, kTimeout); }));
    CHECK_MESSAGE(seen().empty(), callsSeen());
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_LOCKED);
    seen().clear();
    ex26::resumeGpu(child.pid);
    CHECK_MESSAGE(callsSeen() == "unlock " + std::to_string(child.pid), callsSeen());
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING);
  }

  TEST_CASE("R3: a lock that fails with the process no longer RUNNING (someone else locked it meanwhile): thrown, not false") {
    needCheckpointCalls();
    l26::Child& child = holder(0);
    seen().clear();
    bool failed = false;
    {
      lockBehindPid = child.pid;  // the check locks it just before the code's lock, which then fails
      wbx::FailCall fail("cuCheckpointProcessLock", CUDA_ERROR_NOT_READY);
      failed = threw([&] { ex26::suspendGpu(child.pid, kTimeout); });
      lockBehindPid = 0;
    }
    const CUprocessState state = l26::stateOf(child.pid);
    const std::string calls = callsSeen();  // before the check's own unlock below
    l26::backToRunning(child.pid);
    CHECK_MESSAGE(failed,
                  "the lock failed and the process is LOCKED, not RUNNING: that is no 'did not let go in time'");
    CHECK_MESSAGE(calls == "lock " + std::to_string(child.pid), calls);
    CHECK(state == CU_PROCESS_STATE_LOCKED);
  }

  TEST_CASE("R5 R6: a FAILED process: suspendGpu and resumeGpu throw std::runtime_error, and call nothing but the state") {
    needCheckpointCalls();
    l26::Child& child = holder(0);
    seen().clear();
    bool suspendThrew = false, resumeThrew = false;
    {
      failedPid = child.pid;  // its state query answers FAILED
      suspendThrew = threw<std::runtime_error>([&] { ex26::suspendGpu(child.pid, kTimeout); });
      const std::string afterSuspend = callsSeen();
      CHECK_MESSAGE(afterSuspend.empty(), "suspendGpu of a FAILED process: " << afterSuspend);
      seen().clear();
      resumeThrew = threw<std::runtime_error>([&] { ex26::resumeGpu(child.pid); });
      failedPid = 0;
    }
    CHECK(suspendThrew);
    CHECK(resumeThrew);
    CHECK_MESSAGE(seen().empty(), "resumeGpu of a FAILED process: " << callsSeen());
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING);
  }
#else
  TEST_CASE("R1 R2 R3 R4 R5 R6 R7: the checkpoint calls") {
    try {  // a starting body says "not done" first; whatever else it does, it cannot be checked here
      ex26::resumeGpu(0);
    } catch (const wb::NotDone&) {
      throw;
    } catch (...) {
    }
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": the checkpoint calls came with 12.8");
  }
#endif
}

// ---- gpu-map -----------------------------------------------------------------------------------------

EXERCISE("gpu-map", "Bring a suspended job back on other GPUs",
         "check target.size() == cuDeviceGetCount and that it is a permutation first; CUcheckpointGpuPair pairs[i] = "
         "{uuid of device i, uuid of device target[i]} for every i; CUcheckpointRestoreArgs args{}; args.gpuPairs, "
         "args.gpuPairsCount; cuCheckpointProcessRestore, then cuCheckpointProcessUnlock") {
  TEST_CASE("child: memory on every device" * doctest::skip(!wbt::inChild())) {
    l26::runSpread(l17::parentChannel());
  }

#if CUDA_VERSION >= 13000
  TEST_CASE("R2 R3: onto the same devices: one pair per device, each UUID to itself, the rest zero; RUNNING, memory intact") {
    needCheckpointCalls();
    l26::Child& child = spread();
    const int devices = wbt::initDriver();
    suspendHere(child.pid);
    std::vector<int> same(devices);
    for (int i = 0; i < devices; ++i) same[i] = i;
    seen().clear();
    ex26::restoreOnto(child.pid, same);
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING);
    REQUIRE_MESSAGE(count("restore") == 1, callsSeen());
    const SeenCall& r = seen()[0];
    CHECK_MESSAGE(r.args, "restored without arguments");
    CHECK(r.zeros);
    REQUIRE(r.pairs.size() == static_cast<size_t>(devices));
    for (int i = 0; i < devices; ++i) {
      CUuuid u{};
      CU_CHECK(cuDeviceGetUuid(&u, wbt::device(i)));
      CHECK(std::count(r.pairs.begin(), r.pairs.end(), std::make_pair(uuidBytes(u), uuidBytes(u))) == 1);
    }
    CHECK_MESSAGE(count("unlock") == 1, callsSeen());
    CHECK(child.wordsWrong() == 0);
  }

  TEST_CASE("R1: a target that is no permutation of the devices: std::invalid_argument, no restore, still CHECKPOINTED") {
    needCheckpointCalls();
    l26::Child& child = spread();
    const int devices = wbt::initDriver();
    suspendHere(child.pid);
    // Each of the right size but one: a device past the last, a negative one, one named twice.
    std::vector<int> past(devices), negative(devices), twice(devices);
    for (int i = 0; i < devices; ++i) past[i] = negative[i] = twice[i] = i;
    past[0] = devices, negative[0] = -1, twice[0] = devices - 1;
    std::vector<std::vector<int>> wrong = {{}, std::vector<int>(devices + 1, 0), past, negative};
    if (devices >= 2) wrong.push_back(twice);
    for (const std::vector<int>& target : wrong) {
      seen().clear();
      CAPTURE(target.size());
      CHECK(threw<std::invalid_argument>([&] { ex26::restoreOnto(child.pid, target); }));
      CHECK_MESSAGE(seen().empty(), callsSeen());
      CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_CHECKPOINTED);
    }
    // With one device every target of the right size and range is {0}: a device named twice is the
    // part of R1 this machine cannot try, and is said so rather than passed.
    if (devices < 2)
      throw wbx::Skipped("a target that names a device twice needs two devices, this machine has one");
  }

  TEST_CASE("R4: a restore that fails: thrown, no unlock, still CHECKPOINTED") {
    needCheckpointCalls();
    l26::Child& child = spread();
    const int devices = wbt::initDriver();
    suspendHere(child.pid);
    std::vector<int> same(devices);
    for (int i = 0; i < devices; ++i) same[i] = i;
    seen().clear();
    {
      wbx::FailCall fail("cuCheckpointProcessRestore", CUDA_ERROR_INVALID_VALUE);
      CHECK(threw([&] { ex26::restoreOnto(child.pid, same); }));
    }
    CHECK_MESSAGE(count("unlock") == 0, callsSeen());
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_CHECKPOINTED);
  }

  TEST_CASE("R5: an unlock that fails after the restore: thrown") {
    needCheckpointCalls();
    l26::Child& child = spread();
    const int devices = wbt::initDriver();
    suspendHere(child.pid);
    std::vector<int> same(devices);
    for (int i = 0; i < devices; ++i) same[i] = i;
    seen().clear();
    bool failed = false, fired = false;
    {
      wbx::FailCall fail("cuCheckpointProcessUnlock", CUDA_ERROR_INVALID_VALUE);
      failed = threw([&] { ex26::restoreOnto(child.pid, same); });
      fired = fail.fired();
    }
    l26::backToRunning(child.pid);  // restored and still LOCKED: the next case wants it running
    REQUIRE_MESSAGE(fired, "restoreOnto made no unlock: " << callsSeen());
    CHECK_MESSAGE(failed, "the unlock failed and restoreOnto returned as if the job ran");
  }

  TEST_CASE("R2 R3: two GPUs traded: the pairs swap their UUIDs, and the child's memory on both comes back intact") {
    needCheckpointCalls();
    wbx::needDevices(2);
    l26::Child& child = spread();
    std::vector<int> target(wbt::initDriver());
    for (size_t i = 0; i < target.size(); ++i) target[i] = static_cast<int>(i);
    std::swap(target[0], target[1]);
    suspendHere(child.pid);
    seen().clear();
    ex26::restoreOnto(child.pid, target);
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING);
    REQUIRE_MESSAGE(count("restore") == 1, callsSeen());
    CUuuid u0{}, u1{};
    CU_CHECK(cuDeviceGetUuid(&u0, wbt::device(0)));
    CU_CHECK(cuDeviceGetUuid(&u1, wbt::device(1)));
    const auto& pairs = seen()[0].pairs;
    CHECK(std::count(pairs.begin(), pairs.end(), std::make_pair(uuidBytes(u0), uuidBytes(u1))) == 1);
    CHECK(std::count(pairs.begin(), pairs.end(), std::make_pair(uuidBytes(u1), uuidBytes(u0))) == 1);
    const Note check = child.ask(note("verify"), "verified");
    CHECK(check.v[0] == 0);
    CHECK(check.v[1] == 0);
    CHECK(check.v[2] == 0);
  }
#else
  TEST_CASE("R1 R2 R3 R4 R5: gpuPairs") {
    try {  // a starting body says "not done" first; whatever else it does, it cannot be checked here
      ex26::restoreOnto(0, {});
    } catch (const wb::NotDone&) {
      throw;
    } catch (...) {
    }
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": gpuPairs came with 13.0");
  }
#endif
}

// ---- suspend-group -------------------------------------------------------------------------------------

EXERCISE("suspend-group", "Suspend every process of a job, or none",
         "check every state and duplicates first; lock each (CUcheckpointLockArgs with timeoutMs) in order; on a "
         "failed lock unlock those locked, last first, and return false; then checkpoint each; on a failed "
         "checkpoint restore those checkpointed, last first, unlock all, throw") {
#if CUDA_VERSION >= 12080
  TEST_CASE("R2 R4: two processes: every lock, each with its timeout, before any checkpoint; both CHECKPOINTED") {
    needCheckpointCalls();
    l26::Child &a = holder(0), &b = holder(1);
    seen().clear();
    const bool suspended = ex26::suspendAll({a.pid, b.pid}, kTimeout);
    CHECK(suspended);
    const std::string A = std::to_string(a.pid), B = std::to_string(b.pid);
    CHECK_MESSAGE(callsSeen() == "lock " + A + ", lock " + B + ", checkpoint " + A + ", checkpoint " + B, callsSeen());
    for (const SeenCall& c : seen())
      if (c.call == "lock") CHECK((c.args && c.timeoutMs == kTimeout && c.zeros));
    CHECK(l26::stateOf(a.pid) == CU_PROCESS_STATE_CHECKPOINTED);
    CHECK(l26::stateOf(b.pid) == CU_PROCESS_STATE_CHECKPOINTED);
    l26::backToRunning(a.pid);
    l26::backToRunning(b.pid);
    CHECK(a.wordsWrong() == 0);
    CHECK(b.wordsWrong() == 0);
  }

  TEST_CASE("R3: the second lock fails: false, the first unlocked, nothing checkpointed, both RUNNING") {
    needCheckpointCalls();
    l26::Child &a = holder(0), &b = holder(1);
    seen().clear();
    bool suspended = true;
    {
      wbx::FailCall fail("cuCheckpointProcessLock", CUDA_ERROR_NOT_READY, 2);
      suspended = ex26::suspendAll({a.pid, b.pid}, kTimeout);
    }
    CHECK_FALSE(suspended);
    const std::string A = std::to_string(a.pid), B = std::to_string(b.pid);
    CHECK_MESSAGE(callsSeen() == "lock " + A + ", lock " + B + ", unlock " + A, callsSeen());
    CHECK(l26::stateOf(a.pid) == CU_PROCESS_STATE_RUNNING);
    CHECK(l26::stateOf(b.pid) == CU_PROCESS_STATE_RUNNING);
  }

  TEST_CASE("R5: the second checkpoint fails: thrown, the first restored before any unlock, both RUNNING, memory intact") {
    needCheckpointCalls();
    l26::Child &a = holder(0), &b = holder(1);
    seen().clear();
    bool failed = false;
    {
      wbx::FailCall fail("cuCheckpointProcessCheckpoint", CUDA_ERROR_OUT_OF_MEMORY, 2);
      failed = threw([&] { ex26::suspendAll({a.pid, b.pid}, kTimeout); });
    }
    CHECK(failed);
    const auto restore = std::find_if(seen().begin(), seen().end(), [](const SeenCall& c) { return c.call == "restore"; });
    const auto unlock = std::find_if(seen().begin(), seen().end(), [](const SeenCall& c) { return c.call == "unlock"; });
    CHECK_MESSAGE((restore != seen().end() && restore->pid == a.pid && restore < unlock), callsSeen());
    CHECK(l26::stateOf(a.pid) == CU_PROCESS_STATE_RUNNING);
    CHECK(l26::stateOf(b.pid) == CU_PROCESS_STATE_RUNNING);
    CHECK(a.wordsWrong() == 0);
    CHECK(b.wordsWrong() == 0);
  }

  TEST_CASE("R1 R6: a pid given twice, or a process not RUNNING: std::invalid_argument before any lock; no list: true, no call") {
    needCheckpointCalls();
    l26::Child &a = holder(0), &b = holder(1);
    seen().clear();
    CHECK(threw<std::invalid_argument>([&] { ex26::suspendAll({a.pid, b.pid, a.pid}, kTimeout); }));
    CHECK_MESSAGE(seen().empty(), callsSeen());
    CHECK(l26::stateOf(a.pid) == CU_PROCESS_STATE_RUNNING);
    REQUIRE(l26::lockWithin(b.pid, 20000) == CUDA_SUCCESS);
    seen().clear();
    CHECK(threw<std::invalid_argument>([&] { ex26::suspendAll({a.pid, b.pid}, kTimeout); }));
    CHECK_MESSAGE(seen().empty(), callsSeen());
    CHECK(l26::stateOf(a.pid) == CU_PROCESS_STATE_RUNNING);
    CHECK(l26::stateOf(b.pid) == CU_PROCESS_STATE_LOCKED);
    l26::backToRunning(b.pid);
    seen().clear();
    CHECK(ex26::suspendAll({}, kTimeout));
    CHECK_MESSAGE(seen().empty(), callsSeen());
  }
#else
  TEST_CASE("R1 R2 R3 R4 R5 R6: the checkpoint calls") {
    try {  // a starting body says "not done" first; whatever else it does, it cannot be checked here
      ex26::suspendAll({}, 0);
    } catch (const wb::NotDone&) {
      throw;
    } catch (...) {
    }
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": the checkpoint calls came with 12.8");
  }
#endif
}

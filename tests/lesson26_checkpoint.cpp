// Lesson 26's claims: lock, checkpoint, restore and unlock take a child process from RUNNING to
// LOCKED, CHECKPOINTED, LOCKED and RUNNING, its device memory intact where it was; the restore thread
// is a thread of the child; a checkpointed child gives its device memory back (the free memory this
// process sees rises) and holds its contents in its own host memory; a child with a kernel pending
// is checkpointed only once the kernel has ended, and a lock whose timeout ran out leaves it
// RUNNING; a call the child makes while it is locked returns only after the unlock; a call in the
// wrong state is refused and changes nothing; on two GPUs, gpuPairs restore a child onto the other
// GPU; and no checkpoint or restore moves data faster than the PCIe link. The children are this
// binary again (tests/exercises/26-checkpoint/child.hpp), each with a time limit; every wait for
// their messages has a deadline, and nothing sleeps. A build with a cuda.h older than 12.8, or an
// older driver, reports every case skipped.
#include "damaged_images.hpp"
#include "exercises/26-checkpoint/child.hpp"
#include "nvml.hpp"
#include "support.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>


TEST_CASE("child: a holder of device memory" * doctest::skip(!wbt::inChild())) {
  l26::runHolder(l17::parentChannel());
}

TEST_CASE("child: memory on every device" * doctest::skip(!wbt::inChild())) {
  l26::runSpread(l17::parentChannel());
}

#if CUDA_VERSION >= 12080

namespace {

using l26::note;
using l26::Note;

// The holder these suites share, started at its first use: one child per suite process, since every
// process start pays for cuInit and a context.
l26::Child& holder() {
  static l26::Child child("child: a holder of device memory", {"WORKBOOK_CHILD=1", "CUDA_LAUNCH_BLOCKING"});
  static const bool ready = (child.hello(), true);
  (void)ready;
  return child;
}

}  // namespace

TEST_SUITE("arguments") {
  TEST_CASE("each argument structure is 64 bytes, reserved fields zero when value-initialised; timeoutMs is the lock's, and CUDA 13.0's restore arguments carry gpuPairs") {
    static_assert(sizeof(CUcheckpointLockArgs) == 64 && sizeof(CUcheckpointCheckpointArgs) == 64 &&
                  sizeof(CUcheckpointRestoreArgs) == 64 && sizeof(CUcheckpointUnlockArgs) == 64);
    CUcheckpointLockArgs lock{};
    CHECK(lock.timeoutMs == 0);  // "0 indicates no timeout"
    CHECK(lock.reserved0 == 0);
    const CUcheckpointRestoreArgs restore{};
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&restore);
    size_t nonZero = 0;
    for (size_t i = 0; i < sizeof restore; ++i) nonZero += bytes[i] != 0;
    CHECK(nonZero == 0);
#if CUDA_VERSION >= 13000
    CHECK(offsetof(CUcheckpointRestoreArgs, gpuPairs) == 0);
    CHECK(sizeof(CUcheckpointGpuPair) == 2 * sizeof(CUuuid));
#endif
  }
}

TEST_SUITE("lifecycle") {
  TEST_CASE("lock, checkpoint, restore and unlock take a child from RUNNING to LOCKED, CHECKPOINTED, LOCKED (a restore leaves it locked) and RUNNING, and its memory comes back intact at its addresses") {
    if (const std::string why = l26::noCheckpointCalls(); !why.empty()) return wbt::skipCase(why);
    l26::Child& child = holder();
    const l26::Settle settle{child.pid};
    child.ask(note("alloc", 4 << 20, 0x11FEu), "allocated");
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING);
    REQUIRE(l26::lockWithin(child.pid, 20000) == CUDA_SUCCESS);
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_LOCKED);
    REQUIRE(cuCheckpointProcessCheckpoint(child.pid, nullptr) == CUDA_SUCCESS);
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_CHECKPOINTED);
    REQUIRE(cuCheckpointProcessRestore(child.pid, nullptr) == CUDA_SUCCESS);
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_LOCKED);
    REQUIRE(cuCheckpointProcessUnlock(child.pid, nullptr) == CUDA_SUCCESS);
    CHECK(l26::stateOf(child.pid) == CU_PROCESS_STATE_RUNNING);
    // The child's kernel reads its buffers at the addresses it allocated them at.
    CHECK(child.wordsWrong() == 0);
  }

  TEST_CASE("the restore thread cuCheckpointProcessGetRestoreThreadId names is a thread of the child") {
    if (const std::string why = l26::noCheckpointCalls(); !why.empty()) return wbt::skipCase(why);
    l26::Child& child = holder();
    int tid = 0;
    REQUIRE(cuCheckpointProcessGetRestoreThreadId(child.pid, &tid) == CUDA_SUCCESS);
    MESSAGE("the child " << child.pid << ", its restore thread " << tid);
    CHECK(l26::threadOf(child.pid, tid));
  }
}

TEST_SUITE("wrong-state") {
  TEST_CASE("in each state, a call that state does not allow is refused, and the state and the memory stay as they were (driver 580: CUDA_ERROR_ILLEGAL_STATE)") {
    if (const std::string why = l26::noCheckpointCalls(); !why.empty()) return wbt::skipCase(why);
    l26::Child& child = holder();
    const l26::Settle settle{child.pid};
    const int pid = child.pid;
    child.ask(note("alloc", 1 << 20, 0x57A7Eu), "allocated");
    auto refused = [&](const char* what, CUresult rc, CUprocessState stays) {
      MESSAGE(what << ": " << wb::errorName(rc));
      CHECK_MESSAGE(rc != CUDA_SUCCESS, what);
      CHECK_MESSAGE(l26::stateOf(pid) == stays, what);
    };
    refused("checkpoint while RUNNING", cuCheckpointProcessCheckpoint(pid, nullptr), CU_PROCESS_STATE_RUNNING);
    refused("restore while RUNNING", cuCheckpointProcessRestore(pid, nullptr), CU_PROCESS_STATE_RUNNING);
    refused("unlock while RUNNING", cuCheckpointProcessUnlock(pid, nullptr), CU_PROCESS_STATE_RUNNING);
    REQUIRE(l26::lockWithin(pid, 20000) == CUDA_SUCCESS);
    refused("lock while LOCKED", l26::lockWithin(pid, 100), CU_PROCESS_STATE_LOCKED);
    refused("restore while LOCKED", cuCheckpointProcessRestore(pid, nullptr), CU_PROCESS_STATE_LOCKED);
    REQUIRE(cuCheckpointProcessCheckpoint(pid, nullptr) == CUDA_SUCCESS);
    refused("lock while CHECKPOINTED", l26::lockWithin(pid, 100), CU_PROCESS_STATE_CHECKPOINTED);
    refused("checkpoint while CHECKPOINTED", cuCheckpointProcessCheckpoint(pid, nullptr),
            CU_PROCESS_STATE_CHECKPOINTED);
    refused("unlock while CHECKPOINTED", cuCheckpointProcessUnlock(pid, nullptr), CU_PROCESS_STATE_CHECKPOINTED);
    REQUIRE(cuCheckpointProcessRestore(pid, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuCheckpointProcessUnlock(pid, nullptr) == CUDA_SUCCESS);
    CHECK(child.wordsWrong() == 0);
  }

  TEST_CASE("a process id that names no process (pid_max) is refused by cuCheckpointProcessGetState") {
    if (const std::string why = l26::noCheckpointCalls(); !why.empty()) return wbt::skipCase(why);
    int pidMax = 4194304;
    std::ifstream("/proc/sys/kernel/pid_max") >> pidMax;
    CUprocessState s = CU_PROCESS_STATE_RUNNING;
    const CUresult rc = cuCheckpointProcessGetState(pidMax, &s);
    MESSAGE("cuCheckpointProcessGetState(" << pidMax << "): " << wb::errorName(rc));
    CHECK(rc != CUDA_SUCCESS);
  }
}

TEST_SUITE("lock-waits") {
  TEST_CASE("a child with a kernel pending in a stream is checkpointed only once the kernel has ended, and a lock whose timeout ran out leaves it RUNNING") {
    if (const std::string why = l26::noCheckpointCalls(); !why.empty()) return wbt::skipCase(why);
    l26::Child& child = holder();
    const l26::Settle settle{child.pid};
    const int pid = child.pid;
    child.ask(note("hold"), "holding");  // the gate waits kGateSeconds for a write nobody makes
    const CUresult shortLock = l26::lockWithin(pid, 100);
    const CUprocessState afterShort = l26::stateOf(pid);
    MESSAGE("a lock with timeoutMs 100 while the kernel waits: " << wb::errorName(shortLock));
    if (shortLock != CUDA_SUCCESS) {
      CHECK(afterShort == CU_PROCESS_STATE_RUNNING);
      REQUIRE(l26::lockWithin(pid, 20000) == CUDA_SUCCESS);
    } else {
      CHECK(afterShort == CU_PROCESS_STATE_LOCKED);
    }
    REQUIRE(cuCheckpointProcessCheckpoint(pid, nullptr) == CUDA_SUCCESS);
    const int64_t atCheckpoint = child.ask(note("outcome"), "outcome").v[0];
    REQUIRE(cuCheckpointProcessRestore(pid, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuCheckpointProcessUnlock(pid, nullptr) == CUDA_SUCCESS);
    const int64_t settled = child.ask(note("settle"), "settled").v[0];
    CHECK_MESSAGE(atCheckpoint == wb::Gate::TimedOut, "the kernel had not ended when the checkpoint returned");
    CHECK(settled == wb::Gate::TimedOut);  // nobody opened it: it gave up at its deadline
  }
}

TEST_SUITE("locked-calls") {
  TEST_CASE("a call the child makes while it is locked has not returned after a checkpoint and a restore, and returns CUDA_SUCCESS with the right data once the child is unlocked") {
    if (const std::string why = l26::noCheckpointCalls(); !why.empty()) return wbt::skipCase(why);
    l26::Child& child = holder();
    const l26::Settle settle{child.pid};
    const int pid = child.pid;
    child.ask(note("free"), "freed");
    child.ask(note("alloc", 1 << 20, 0xCA11u), "allocated");
    REQUIRE(l26::lockWithin(pid, 20000) == CUDA_SUCCESS);
    child.ask(note("call"), "calling");
    REQUIRE(cuCheckpointProcessCheckpoint(pid, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuCheckpointProcessRestore(pid, nullptr) == CUDA_SUCCESS);
    const int64_t backWhileLocked = child.ask(note("returned?"), "returned").v[0];
    REQUIRE(cuCheckpointProcessUnlock(pid, nullptr) == CUDA_SUCCESS);
    const Note joined = child.ask(note("join"), "joined");
    CHECK_MESSAGE(backWhileLocked == 0, "the call returned while the child was locked");
    CHECK(joined.v[0] == CUDA_SUCCESS);
    CHECK(joined.v[1] == joined.v[2]);
  }
}

TEST_SUITE("footprint") {
  TEST_CASE("a checkpointed child gives its device memory back: the free memory this process sees rises by at least what it allocated, and falls again at the restore; its contents are then in the child's own host memory") {
    if (const std::string why = l26::noCheckpointCalls(); !why.empty()) return wbt::skipCase(why);
    l26::Child& child = holder();
    const l26::Settle settle{child.pid};
    const int pid = child.pid;
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const size_t bytes = 256u << 20;
    child.ask(note("alloc", static_cast<int64_t>(bytes), 0xF007u), "allocated");
    const size_t free0 = wbt::freeMemory(), rss0 = l26::residentBytes(pid);
    REQUIRE(l26::lockWithin(pid, 20000) == CUDA_SUCCESS);
    REQUIRE(cuCheckpointProcessCheckpoint(pid, nullptr) == CUDA_SUCCESS);
    const size_t free1 = wbt::freeMemory(), rss1 = l26::residentBytes(pid);
    REQUIRE(cuCheckpointProcessRestore(pid, nullptr) == CUDA_SUCCESS);
    const size_t free2 = wbt::freeMemory();
    REQUIRE(cuCheckpointProcessUnlock(pid, nullptr) == CUDA_SUCCESS);
    MESSAGE("free memory " << free0 << " B running, " << free1 << " B checkpointed, " << free2
                           << " B restored; the child's resident memory " << rss0 << " B, then " << rss1 << " B");
    CHECK(free1 >= free0 + bytes);
    CHECK(free2 + bytes <= free1);
    CHECK(rss1 >= rss0 + bytes / 2);
    CHECK(child.wordsWrong() == 0);
  }
}

TEST_SUITE("checkpoint-rate") {
  // A sanity bound on the timing, not a measure of the copy (a checkpoint moves the context's memory
  // too): no call is timed faster than the link could move the child's allocation.
  TEST_CASE("neither a checkpoint nor a restore of a child holding 512 MiB is timed faster than the PCIe link NVML reports could move it") {
    if (const std::string why = l26::noCheckpointCalls(); !why.empty()) return wbt::skipCase(why);
    char busId[32] = {0};
    CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, wbt::device(0)));
    std::string why;
    const auto link = wb::nvml::pcieLink(busId, why);
    if (!link || link->bytesPerSecond() <= 0) return wbt::skipCase("NVML gives no PCIe link here: " + why);
    l26::Child& child = holder();
    const l26::Settle settle{child.pid};
    const size_t bytes = 512u << 20;
    child.ask(note("free"), "freed");
    child.ask(note("alloc", static_cast<int64_t>(bytes), 0x4A7Eu), "allocated");
    REQUIRE(l26::lockWithin(child.pid, 20000) == CUDA_SUCCESS);
    wb::Stopwatch clock;
    REQUIRE(cuCheckpointProcessCheckpoint(child.pid, nullptr) == CUDA_SUCCESS);
    const double checkpointS = clock.ms() / 1000;
    clock = wb::Stopwatch();
    REQUIRE(cuCheckpointProcessRestore(child.pid, nullptr) == CUDA_SUCCESS);
    const double restoreS = clock.ms() / 1000;
    REQUIRE(cuCheckpointProcessUnlock(child.pid, nullptr) == CUDA_SUCCESS);
    MESSAGE(link->describe() << "; checkpoint " << bytes / checkpointS / 1e9 << " GB/s, restore "
                             << bytes / restoreS / 1e9 << " GB/s");
    CHECK(bytes / checkpointS <= link->bytesPerSecond() * 1.01);
    CHECK(bytes / restoreS <= link->bytesPerSecond() * 1.01);
    CHECK(child.wordsWrong() == 0);
  }
}

TEST_SUITE("remap") {
  TEST_CASE("restored with gpuPairs that swap two GPUs (CUDA 13.0), a child's memory on both comes back intact, and its larger allocation's memory moves from device 0 to device 1") {
    if (const std::string why = l26::noCheckpointCalls(); !why.empty()) return wbt::skipCase(why);
#if CUDA_VERSION < 13000
    return wbt::skipCase("built with CUDA " + std::to_string(CUDA_VERSION) + ": gpuPairs came with 13.0");
#else
    const int devices = wbt::initDriver();
    if (devices < 2) return wbt::skipCase("one GPU: a restore onto another GPU needs two");
    l26::Child spread("child: memory on every device", {"WORKBOOK_CHILD=1", "CUDA_LAUNCH_BLOCKING"});
    spread.hello();
    const l26::Settle settle{spread.pid};
    wbt::RetainedPrimary p0(wbt::deviceKeepingPrimary(0)), p1(wbt::deviceKeepingPrimary(1));
    auto freeOn = [](CUcontext ctx) {
      wbt::Pushed here(ctx);
      return wbt::freeMemory();
    };
    // One pair per device the child used (every one): devices 0 and 1 trade places, the others stay.
    std::vector<CUcheckpointGpuPair> pairs(devices);
    for (int d = 0; d < devices; ++d) {
      CU_CHECK(cuDeviceGetUuid(&pairs[d].oldUuid, wbt::device(d)));
      CU_CHECK(cuDeviceGetUuid(&pairs[d].newUuid, wbt::device(d < 2 ? 1 - d : d)));
    }
    const size_t before0 = freeOn(p0.get()), before1 = freeOn(p1.get());
    // The reference: the GPU to restore onto "needs to have enough memory and be of the same chip
    // type as the old GPU" (name and compute capability stand for the chip).
    char name0[128] = {}, name1[128] = {};
    CU_CHECK(cuDeviceGetName(name0, sizeof name0, wbt::device(0)));
    CU_CHECK(cuDeviceGetName(name1, sizeof name1, wbt::device(1)));
    for (CUdevice_attribute a : {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR})
      if (wbt::attribute(wbt::device(0), a) != wbt::attribute(wbt::device(1), a))
        return wbt::skipCase("devices 0 and 1 are not the same chip: the reference restores only onto the same chip type");
    if (std::string(name0) != name1)
      return wbt::skipCase(std::string("devices 0 and 1 are not the same chip (") + name0 + ", " + name1 + ")");
    if (before1 < l26::kOnDevice0 + (l26::kOnDevice0 >> 2) || before0 < l26::kOnDevice1 + (l26::kOnDevice1 >> 2))
      return wbt::skipCase("a device has too little free memory for what would move onto it");
    REQUIRE(l26::lockWithin(spread.pid, 20000) == CUDA_SUCCESS);
    REQUIRE(cuCheckpointProcessCheckpoint(spread.pid, nullptr) == CUDA_SUCCESS);
    CUcheckpointRestoreArgs args{};
    args.gpuPairs = pairs.data();
    args.gpuPairsCount = static_cast<unsigned>(devices);
    REQUIRE(cuCheckpointProcessRestore(spread.pid, &args) == CUDA_SUCCESS);
    REQUIRE(cuCheckpointProcessUnlock(spread.pid, nullptr) == CUDA_SUCCESS);
    const Note check = spread.ask(note("verify"), "verified");
    const size_t after0 = freeOn(p0.get()), after1 = freeOn(p1.get());
    MESSAGE("device 0 free " << before0 << " -> " << after0 << " B, device 1 " << before1 << " -> " << after1
                             << " B; the buffer made on device 1 now names device " << check.v[3]);
    CHECK(check.v[0] == 0);
    CHECK(check.v[1] == 0);
    CHECK(check.v[2] == 0);
    const size_t moves = (l26::kOnDevice0 - l26::kOnDevice1) / 2;
    CHECK(after0 >= before0 + moves);
    CHECK(after1 + moves <= before1);
#endif
  }
}

#endif  // CUDA_VERSION >= 12080

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}

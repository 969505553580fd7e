// Lesson 04: the primary context.
//
// What you learn: every device has one primary context per process, shared by everyone who
// retains it; the CUDA runtime uses it when no other context is current, so a library on the
// Driver API that retains it shares state with the runtime instead of fighting it. Retaining
// returns the same handle in every thread and does NOT make it current. A reference count decides
// when it lives: cuDevicePrimaryCtxGetState shows it active after the first retain and inactive
// once every retain is released. Flags set while it is inactive are what it is activated with.
// cuDevicePrimaryCtxReset destroys everything in it. And it is cheap: retaining it again is a
// reference count, where every cuCtxCreate builds a whole context.
//
// APIs: cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxGetState,
//       cuDevicePrimaryCtxSetFlags, cuDevicePrimaryCtxReset, cuCtxSetCurrent, cuCtxGetCurrent,
//       cuCtxGetFlags, cuCtxCreate (through wb::createContext), cuMemGetInfo
// Run:  ctest -R lesson04   (or build/lessons/lesson04-primary-context)
#include "workbook.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

void printState(CUdevice dev, const char* when) {
  unsigned flags = 0;
  int active = 0;
  CU_CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
  std::printf("  %-46s active = %d, flags = 0x%x\n", when, active, flags);
}

//! [flags]
// Flags such as the scheduling policy belong to the primary context. Set while it is inactive,
// they are what the next activation uses; cuDevicePrimaryCtxGetState reads them back.
void setFlagsWhileInactive(CUdevice dev) {
  printState(dev, "at the start:");
  CU_CHECK(cuDevicePrimaryCtxSetFlags(dev, CU_CTX_SCHED_BLOCKING_SYNC));
  printState(dev, "after SetFlags(CU_CTX_SCHED_BLOCKING_SYNC):");
}
//! [flags]

//! [retain]
// Retain activates it (first retain) and returns its handle, but pushes nothing.
CUcontext retain(CUdevice dev) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CUcontext current = nullptr;
  CU_CHECK(cuCtxGetCurrent(&current));
  std::printf("cuDevicePrimaryCtxRetain returned %s; the current context is still %s\n",
              wb::hex(primary).c_str(), current ? wb::hex(current).c_str() : "none");
  wb::expect(current != primary, "a retain that does not make the primary context current", "it was current");
  printState(dev, "after the first retain:");
  CU_CHECK(cuCtxSetCurrent(primary));
  unsigned flags = 0;
  CU_CHECK(cuCtxGetFlags(&flags));
  std::printf("  after cuCtxSetCurrent it is current, and cuCtxGetFlags reads 0x%x "
              "(blocking sync: %s)\n", flags,
              (flags & CU_CTX_SCHED_MASK) == CU_CTX_SCHED_BLOCKING_SYNC ? "yes" : "no");
  return primary;
}
//! [retain]

//! [threads]
// Many threads retaining at once all get the one handle: that is the point of a primary context.
void retainFromThreads(CUdevice dev, CUcontext primary, int count) {
  std::vector<CUcontext> handles(count);
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i)
    threads.emplace_back([&handles, dev, i] { cuDevicePrimaryCtxRetain(&handles[i], dev); });
  for (auto& t : threads) t.join();
  const auto same = std::count(handles.begin(), handles.end(), primary);
  std::printf("%d threads retained the primary context at once: %ld of them got %s\n", count,
              static_cast<long>(same), wb::hex(primary).c_str());
  wb::expect(same == count, "one handle for every thread",
             std::to_string(same) + " of " + std::to_string(count));
  for (int i = 0; i < count; ++i)
    if (handles[i]) CU_CHECK(cuDevicePrimaryCtxRelease(dev));  // one release per successful retain
}
//! [threads]

// Retaining an active primary context again is a reference count; every cuCtxCreate builds a
// whole context. Timed side by side, then the device memory of N contexts against one shared one.
//! [cost]
void costs(CUdevice dev, int contexts) {
  wb::Stopwatch retainClock;
  CUcontext again = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&again, dev));
  const double retainMs = retainClock.ms();
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  size_t start = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&start, &total));
  for (int i = 0; i < contexts; ++i) CU_CHECK(cuDevicePrimaryCtxRetain(&again, dev));
  size_t afterRetains = 0;
  CU_CHECK(cuMemGetInfo(&afterRetains, &total));
  for (int i = 0; i < contexts; ++i) CU_CHECK(cuDevicePrimaryCtxRelease(dev));

  std::vector<CUcontext> created(contexts);
  wb::Stopwatch createClock;
  CU_CHECK(wb::createContext(&created[0], 0, dev));
  const double createMs = createClock.ms();
  for (int i = 1; i < contexts; ++i) CU_CHECK(wb::createContext(&created[i], 0, dev));
  size_t afterCreates = 0;
  CU_CHECK(cuMemGetInfo(&afterCreates, &total));
  // Newest first: each is current when destroyed, so each destroy pops it and the primary is on top again.
  for (auto it = created.rbegin(); it != created.rend(); ++it) CU_CHECK(cuCtxDestroy(*it));

  std::printf("  retaining the active primary context again: %.3f ms; cuCtxCreate: %.1f ms\n", retainMs,
              createMs);
  std::printf("  device memory taken by %d more retains of the primary context: %s\n", contexts,
              wb::bytes(start - afterRetains).c_str());
  std::printf("  device memory taken by %d contexts from cuCtxCreate:          %s\n", contexts,
              wb::bytes(start - afterCreates).c_str());
  wb::expect(afterCreates < afterRetains, "retains costing less memory than created contexts",
             "they cost as much (another process on this GPU?)");
}
//! [cost]

//! [release]
// The last release deactivates it: its memory and modules are gone. Clear the current context
// first, so no thread is left pointing at a context that no longer exists.
void releaseAll(CUdevice dev) {
  CU_CHECK(cuCtxSetCurrent(nullptr));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  printState(dev, "after the last release:");
}
//! [release]

//! [reset]
// Reset tears the primary context down at once, even while it is retained, with everything in it
// (lesson04.reclaim proves that an allocation left in it is gone). It does not release: whoever
// retained it still releases, and the next retain builds a fresh context.
void reset(CUdevice dev) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxSetCurrent(primary));
  size_t before = 0, after = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&before, &total));
  printState(dev, "retained and current:");
  CU_CHECK(cuCtxSetCurrent(nullptr));
  CU_CHECK(cuDevicePrimaryCtxReset(dev));
  printState(dev, "after cuDevicePrimaryCtxReset:");
  CUcontext meter = nullptr;  // a context of our own, only to read cuMemGetInfo
  CU_CHECK(wb::createContext(&meter, 0, dev));
  CU_CHECK(cuMemGetInfo(&after, &total));
  CU_CHECK(cuCtxDestroy(meter));
  std::printf("  free device memory went from %s (primary active) to %s "
              "(reset, plus a context to measure with)\n",
              wb::bytes(before).c_str(), wb::bytes(after).c_str());
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  printState(dev, "after the matching release:");
}
//! [reset]

int main() {
  try {
    wb::checkEnvironment({});  // no variable changes what this lesson shows (device choice and the driver's log are noted)
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    wb::step(1, "Flags, and when they are read");
    setFlagsWhileInactive(dev);
    wb::step(2, "Retain does not make it current");
    CUcontext primary = retain(dev);
    wb::step(3, "One handle for every thread");
    retainFromThreads(dev, primary, 8);
    wb::step(4, "What sharing saves");
    costs(dev, 3);
    wb::step(5, "The last release");
    releaseAll(dev);
    wb::step(6, "Reset");
    reset(dev);
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

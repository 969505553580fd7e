// Lesson 03: the thread's context stack.
//
// What you learn: cuCtxCreate makes a context and pushes it, so it is current; a thread can hold
// several contexts, on one device too, and switch between them with push, pop and set; each thread
// has its own stack, and one context can be current in two threads at once. What a context costs
// (time, device memory), and that cuCtxDestroy gives all of it back. Two claims from popular notes
// are false and this program shows it: popping a context frees nothing, and a thread is not
// limited to one context.
//
// APIs: cuCtxCreate (through wb::createContext), cuCtxDestroy, cuCtxGetCurrent, cuCtxPushCurrent,
//       cuCtxPopCurrent, cuCtxSetCurrent, cuCtxGetId, cuCtxGetDevice, cuMemGetInfo, cuMemAlloc,
//       cuPointerGetAttribute
// Run:  ctest -R lesson03   (or build/lessons/lesson03-context-stack)
#include "workbook.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

// Names for the contexts this program makes, so the stack can be drawn as [A B].
std::map<CUcontext, std::string> names;

std::string nameOf(CUcontext ctx) {
  if (!ctx) return "none";
  auto it = names.find(ctx);
  return it != names.end() ? it->second : wb::hex(ctx);
}

//! [draw-stack]
// The API shows only the top of the stack (cuCtxGetCurrent). To draw all of it, pop every
// context, then push them back in the same order: the stack ends exactly as it was. The label
// names the call that made this stack; the course site draws the stacks from these lines.
void drawStack(const char* label) {
  std::vector<CUcontext> popped;
  CUcontext top = nullptr;
  CU_CHECK(cuCtxGetCurrent(&top));
  while (top) {
    CU_CHECK(cuCtxPopCurrent(&top));
    popped.push_back(top);
    CU_CHECK(cuCtxGetCurrent(&top));
  }
  std::string drawing;
  for (auto it = popped.rbegin(); it != popped.rend(); ++it) {
    CU_CHECK(cuCtxPushCurrent(*it));
    drawing += (drawing.empty() ? "" : " ") + nameOf(*it);
  }
  std::printf("  %-24s stack (bottom .. top): [%s]\n", label, drawing.c_str());
}
//! [draw-stack]

//! [create]
// cuCtxCreate makes a context on a device AND pushes it: it is current right away. The bridge
// wb::createContext hides that CUDA 13 added a parameter (common/compat.hpp).
CUcontext createNamed(CUdevice dev, const std::string& name) {
  CUcontext ctx = nullptr;
  CU_CHECK(wb::createContext(&ctx, 0, dev));
  names[ctx] = name;
  unsigned long long id = 0;
  CU_CHECK(cuCtxGetId(ctx, &id));
  std::printf("Created context %s: handle %s, id %llu\n", name.c_str(), wb::hex(ctx).c_str(), id);
  return ctx;
}
//! [create]

//! [push-pop-set]
void pushPopSet(CUcontext a, CUcontext b) {
  drawStack("to begin with");
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
  drawStack("cuCtxPopCurrent");
  std::printf("  (cuCtxPopCurrent returned %s)\n", nameOf(popped).c_str());
  CU_CHECK(cuCtxPushCurrent(b));
  drawStack("cuCtxPushCurrent(B)");
  // cuCtxSetCurrent does not push: it replaces whatever is on top.
  CU_CHECK(cuCtxSetCurrent(a));
  drawStack("cuCtxSetCurrent(A)");
  CU_CHECK(cuCtxPopCurrent(&popped));
  drawStack("cuCtxPopCurrent");
  CU_CHECK(cuCtxPopCurrent(&popped));
  drawStack("cuCtxPopCurrent");
  const CUresult rc = cuCtxPopCurrent(&popped);
  std::printf("  popping the empty stack returned %s (%d)\n", wb::errorName(rc).c_str(),
              static_cast<int>(rc));
  CU_CHECK(cuCtxPushCurrent(a));
  drawStack("cuCtxPushCurrent(A)");
}
//! [push-pop-set]

//! [threads]
// Every thread starts with an empty stack; contexts are not inherited. The same context may be
// current in several threads at once.
void otherThread(CUcontext a) {
  std::thread worker([a] {
    try {
      CUcontext current = nullptr;
      CU_CHECK(cuCtxGetCurrent(&current));
      std::printf("A new thread's current context: %s (its stack is its own, and empty)\n",
                  nameOf(current).c_str());
      CU_CHECK(cuCtxPushCurrent(a));
      CU_CHECK(cuCtxGetCurrent(&current));
      std::printf("After pushing A there, the new thread's current context is %s\n", nameOf(current).c_str());
      CU_CHECK(cuCtxPopCurrent(&current));
    } catch (const wb::DriverError& e) {
      std::printf("the thread failed: %s\n", e.what());
    }
  });
  worker.join();
  CUcontext mine = nullptr;
  CU_CHECK(cuCtxGetCurrent(&mine));
  std::printf("Meanwhile the main thread's current context stayed %s: A was current in both threads\n",
              nameOf(mine).c_str());
  wb::expect(mine == a, "the main thread's current context unchanged by the other thread", "it changed");
}
//! [threads]

//! [pop-frees-nothing]
// Myth: "popping a context frees its memory". Popping only changes what is current.
void popFreesNothing(CUcontext a) {
  CUdeviceptr buffer = 0;
  const unsigned value = 0xC0FFEEu;
  CU_CHECK(cuMemAlloc(&buffer, sizeof value));
  CU_CHECK(cuMemcpyHtoD(buffer, &value, sizeof value));
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
  // With unified addressing the driver knows every allocation's owner, even with nothing current.
  CUcontext owner = nullptr;
  CU_CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, buffer));
  std::printf("  allocated %s in A, popped A; cuPointerGetAttribute says the allocation belongs to %s\n",
              wb::hex(buffer).c_str(), nameOf(owner).c_str());
  CU_CHECK(cuCtxPushCurrent(a));
  unsigned readBack = 0;
  CU_CHECK(cuMemcpyDtoH(&readBack, buffer, sizeof readBack));
  std::printf("  pushed A again and read 0x%X back from it: the allocation survived the pop\n", readBack);
  wb::expect(owner == a && readBack == value, "the allocation owned by A and intact after the pop",
             "another owner, or another value");
  CU_CHECK(cuMemFree(buffer));
}
//! [pop-frees-nothing]

//! [cost]
// What a context costs: the time to create it and the device memory it takes, which cuCtxDestroy
// gives back. A cuMemAlloc allocation still in a context when it is destroyed comes back too (the
// suite lesson03.reclaim proves it; the reference excepts cuMemCreate, cuMemAllocAsync and
// cuMemAllocFromPoolAsync memory), but free yours first: compute-sanitizer's leak check counts
// every allocation cuCtxDestroy had to take back as a leak.
void contextCost(CUdevice dev) {
  size_t before = 0, during = 0, after = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&before, &total));
  wb::Stopwatch clock;
  CUcontext c = nullptr;
  CU_CHECK(wb::createContext(&c, 0, dev));
  const double createMs = clock.ms();
  CU_CHECK(cuMemGetInfo(&during, &total));
  wb::Stopwatch destroyClock;
  CU_CHECK(cuCtxDestroy(c));  // pops C too: A is current again
  const double destroyMs = destroyClock.ms();
  CU_CHECK(cuMemGetInfo(&after, &total));
  std::printf("  cuCtxCreate took %.1f ms, cuCtxDestroy %.1f ms\n", createMs, destroyMs);
  std::printf("  free device memory: %s before, %s with context C, %s after cuCtxDestroy\n",
              wb::bytes(before).c_str(), wb::bytes(during).c_str(), wb::bytes(after).c_str());
  std::printf("  so an empty context took %s of device memory, and destroying it gave back %s\n",
              wb::bytes(before - during).c_str(), wb::bytes(after - during).c_str());
  wb::expect(during < before && after > during,
             "a context taking device memory and its destroy giving it back",
             "free memory did not fall and rise (another process on this GPU?)");
}
//! [cost]

//! [destroy]
// cuCtxDestroy pops the context only where it is current: B is on no stack any more (step 2's
// cuCtxSetCurrent replaced it), so destroying it leaves the stack alone; A is, so it is popped.
void destroyBoth(CUcontext a, CUcontext b) {
  drawStack("to begin with");
  CU_CHECK(cuCtxDestroy(b));
  drawStack("cuCtxDestroy(B)");
  CU_CHECK(cuCtxDestroy(a));
  drawStack("cuCtxDestroy(A)");
}
//! [destroy]

int main() {
  try {
    wb::checkEnvironment({});  // no variable changes what this lesson shows (device choice and the driver's log are noted)
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));

    wb::step(1, "cuCtxCreate pushes");
    drawStack("at the start");
    CUcontext a = createNamed(dev, "A");
    drawStack("cuCtxCreate: A");
    CUcontext b = createNamed(dev, "B");
    drawStack("cuCtxCreate: B");
    CUdevice ofB = -1;
    CU_CHECK(cuCtxGetDevice(&ofB));
    std::printf("B is current and cuCtxGetDevice says device %d: two contexts, one device, one thread\n", ofB);

    wb::step(2, "Push, pop, set");
    pushPopSet(a, b);
    wb::step(3, "Each thread has its own stack");
    otherThread(a);
    wb::step(4, "Popping frees nothing");
    popFreesNothing(a);
    wb::step(5, "What a context costs");
    contextCost(dev);

    wb::step(6, "Destroying contexts");
    destroyBoth(a, b);
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

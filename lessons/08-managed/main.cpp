// Lesson 08: __managed__ variables, one for every context and device.
//
// What you learn: a __managed__ variable in a library is one allocation in managed memory:
// cuLibraryGetManaged returns the same pointer whatever context is current, the host reads and
// writes it through that pointer (after synchronising, and why), and kernels launched in several
// contexts, on several devices where there are several, all update the same variable, so their
// counts add up. A __device__ variable, found with cuLibraryGetGlobal, is the opposite: one copy
// per context. CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS says whether the host may touch
// managed memory while kernels run. The managed memory here is 8 bytes; the course does not
// demonstrate oversubscription.
//
// APIs: cuLibraryLoadFromFile, cuLibraryGetManaged, cuLibraryGetGlobal, cuLibraryGetKernel,
//       cuLaunchKernel, cuCtxSynchronize, cuMemcpyDtoH, cuDeviceGetAttribute
// Run:  ctest -R lesson08   (or build/lessons/lesson08-managed, from any directory)
#include "workbook.hpp"

#include <cstdio>
#include <string>
#include <vector>

struct Place {
  std::string name;
  CUdevice device;
  CUcontext context;
  bool created;  // by cuCtxCreate (destroyed at the end) or a retained primary context (released)
};

//! [contexts]
// Every device's primary context, plus a second, created context on device 0: at least two
// contexts even on a machine with one GPU.
std::vector<Place> places(int count) {
  std::vector<Place> out;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, i));
    CUcontext ctx = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    out.push_back({"the primary context of device " + std::to_string(i), dev, ctx, false});
  }
  CUcontext extra = nullptr;
  CU_CHECK(wb::createContext(&extra, 0, out[0].device));
  CU_CHECK(cuCtxPopCurrent(&extra));
  out.push_back({"the created context on device 0", out[0].device, extra, true});
  return out;
}
//! [contexts]

//! [managed]
// One pointer, whatever context asks.
unsigned long long* managedCounter(CUlibrary library, const std::vector<Place>& where) {
  CUdeviceptr first = 0;
  for (const Place& p : where) {
    CU_CHECK(cuCtxPushCurrent(p.context));
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetManaged(&ptr, &bytes, library, "managedCounter"));
    std::printf("  cuLibraryGetManaged in %s: %s (%zu bytes)\n", p.name.c_str(), wb::hex(ptr).c_str(), bytes);
    if (!first) first = ptr;
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
  return reinterpret_cast<unsigned long long*>(first);
}
//! [managed]

//! [count]
// Launch count<<<blocks, 256>>>(n) in one context and wait for it. Waiting matters twice: the
// host must not read the counter before the kernel is done, and on a device without concurrent
// managed access the host must not touch managed memory at all while any kernel runs.
void countIn(const Place& p, CUkernel count, unsigned n) {
  CU_CHECK(cuCtxPushCurrent(p.context));
  void* args[] = {&n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), (n + 255) / 256, 1, 1, 256, 1, 1, 0,
                          nullptr, args, nullptr));
  CU_CHECK(cuCtxSynchronize());
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
}
//! [count]

//! [device-variable]
// A __device__ variable lives in each context separately: a different address in each, and
// each copy counts only the launches of its own context.
void deviceCounters(CUlibrary library, const std::vector<Place>& where) {
  for (const Place& p : where) {
    CU_CHECK(cuCtxPushCurrent(p.context));
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetGlobal(&ptr, &bytes, library, "deviceCounter"));
    unsigned long long value = 0;
    CU_CHECK(cuMemcpyDtoH(&value, ptr, sizeof value));
    std::printf("  deviceCounter in %s: at %s, value %llu\n", p.name.c_str(), wb::hex(ptr).c_str(), value);
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
}
//! [device-variable]

int main() {
  try {
    wb::checkEnvironment({
        {"CUDA_MANAGED_FORCE_DEVICE_ALLOC", wb::Under::Teaches,
         "the managed variable lives in device memory; it is still one pointer for every context and device"},
    });
    CU_CHECK(cuInit(0));
    int count = 0;
    CU_CHECK(cuDeviceGetCount(&count));
    wb::step(1, "Devices and concurrent managed access");
    std::printf("%d device%s.\n", count, count == 1 ? "" : "s");
    for (int i = 0; i < count; ++i) {
      CUdevice dev = 0;
      int concurrent = 0;
      CU_CHECK(cuDeviceGet(&dev, i));
      CU_CHECK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
      std::printf("Device %d: concurrent managed access %s\n", i,
                  concurrent ? "yes: the host may touch managed memory while kernels run (results still need a sync)"
                             : "no: touching managed memory while any kernel runs is a segmentation fault");
    }

    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("counters.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CUkernel countKernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&countKernel, library, "count"));
    const std::vector<Place> where = places(count);

    wb::step(2, "One pointer for all");
    unsigned long long* counter = managedCounter(library, where);
    *counter = 0;  // the host writes it directly: no kernel is running
    std::printf("  the host set it to %llu through that pointer\n", *counter);

    wb::step(3, "Counting, and why the host waits");
    //! [count-everywhere]
    unsigned long long expected = 0;
    unsigned n = 1000;
    for (const Place& p : where) {
      countIn(p, countKernel, n);
      expected += n;
      std::printf("  after %u threads counted in %s: the host reads %llu (expected %llu)\n", n,
                  p.name.c_str(), *counter, expected);
      wb::expect(*counter == expected, "every count in the one managed variable", std::to_string(*counter));
      n += 1000;
    }
    //! [count-everywhere]
    wb::step(4, "One copy per context");
    deviceCounters(library, where);

    for (const Place& p : where) {
      if (p.created)
        CU_CHECK(cuCtxDestroy(p.context));
      else
        CU_CHECK(cuDevicePrimaryCtxRelease(p.device));
    }
    CU_CHECK(cuLibraryUnload(library));
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

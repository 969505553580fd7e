// Lesson 07: context-independent loading with cuLibrary* and cuKernel* (CUDA 12.0+).
//
// What you learn: cuLibraryLoadFromFile and cuLibraryLoadData load an image once, for the whole
// process, with no context current. cuLibraryGetKernel returns a CUkernel that can be launched in
// any context: the driver loads it into each context on first use, including contexts created
// after the load. cuKernelGetFunction shows the per-context CUfunction behind it. A small library
// interface (libraryInitialize / libraryFunc / libraryDeinitialize, after the example in NVIDIA's
// blog post "CUDA Context-Independent Module Loading") is written both ways, side by side: the
// per-context map of lesson 06 disappears. After cuLibraryUnload a CUkernel is worth nothing.
//
// APIs: cuLibraryLoadFromFile, cuLibraryLoadData, cuLibraryGetKernel, cuLibraryGetKernelCount,
//       cuLibraryEnumerateKernels, cuKernelGetName, cuKernelGetFunction, cuLibraryUnload, cuLaunchKernel
// Run:  ctest -R lesson07   (or build/lessons/lesson07-library-load, from any directory)
#include "vector_ops.hpp"
#include "workbook.hpp"

#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

// The fatbin compiled into this program by CMake (workbook_embed_image).
extern const unsigned char vector_ops_fatbin[];
extern const std::size_t vector_ops_fatbin_size;

// fill(out, 2, n) then scale(out, 3, 1, n) in the current context (wb::fillAndScale, in
// common/vector_ops.cpp): every element must be 7. A CUkernel is launched by casting it to
// CUfunction; it runs in its stream's context, or the current one for the NULL stream (as here),
// and the driver picks that context's copy, loading it there first if needed.
bool launchAndCheck(CUfunction fill, CUfunction scale) {
  return wb::mismatches(wb::fillAndScale(fill, scale, 1u << 20, 2.0f, 3.0f, 1.0f), 7.0f) == 0;
}

//! [load-without-context]
// No context exists yet in this process: the library is loaded for all of them.
CUlibrary loadLibraries() {
  CUcontext current = nullptr;
  CU_CHECK(cuCtxGetCurrent(&current));
  std::printf("Current context before loading: %s\n", current ? wb::hex(current).c_str() : "none");
  wb::Stopwatch clock;
  CUlibrary fromFile = nullptr;
  CU_CHECK(cuLibraryLoadFromFile(&fromFile, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr,
                                 nullptr, 0, nullptr, nullptr, 0));
  std::printf("cuLibraryLoadFromFile(vector_ops.fatbin): %s in %.2f ms\n", wb::hex(fromFile).c_str(),
              clock.ms());
  CUlibrary embedded = nullptr;
  wb::verifyImageBytes(vector_ops_fatbin, vector_ops_fatbin_size, wb::ImageKind::Fatbin,
                       "the embedded fatbin");
  CU_CHECK(cuLibraryLoadData(&embedded, vector_ops_fatbin, nullptr, nullptr, 0, nullptr, nullptr, 0));
  std::printf("cuLibraryLoadData(the %zu-byte fatbin inside this program): %s\n", vector_ops_fatbin_size,
              wb::hex(embedded).c_str());
  CU_CHECK(cuLibraryUnload(embedded));  // the same kernels: one library is enough from here on
  return fromFile;
}
//! [load-without-context]

//! [enumerate]
void listKernels(CUlibrary library) {
#if CUDA_VERSION >= 12040
  unsigned count = 0;
  CU_CHECK(cuLibraryGetKernelCount(&count, library));
  std::vector<CUkernel> kernels(count);
  CU_CHECK(cuLibraryEnumerateKernels(kernels.data(), count, library));
  std::printf("The library holds %u kernels:", count);
  for (CUkernel k : kernels) {
    const char* name = nullptr;
    CU_CHECK(cuKernelGetName(&name, k));
    std::printf(" %s", name);
  }
  std::printf("\n");
#else
  (void)library;
  std::printf("cuLibraryGetKernelCount and cuLibraryEnumerateKernels need CUDA 12.4; "
              "this was built with %d.%d\n", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
#endif
}
//! [enumerate]

//! [launch-anywhere]
// The one CUkernel, launched in every device's primary context and in a context created after
// the load. cuKernelGetFunction shows that each context got its own CUfunction behind it.
void launchEverywhere(CUkernel fill, CUkernel scale, int count) {
  for (int i = 0; i <= count; ++i) {
    const bool created = i == count;  // the last round: a brand-new context on device 0
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, created ? 0 : i));
    CUcontext ctx = nullptr;
    if (created) {
      CU_CHECK(wb::createContext(&ctx, 0, dev));
    } else {
      CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
      CU_CHECK(cuCtxPushCurrent(ctx));
    }
    CUfunction perContext = nullptr;
    CU_CHECK(cuKernelGetFunction(&perContext, fill));
    const bool ok = launchAndCheck(reinterpret_cast<CUfunction>(fill), reinterpret_cast<CUfunction>(scale));
    std::printf("  %s device %d: CUfunction %s behind the CUkernel, result %s\n",
                created ? "a context created after the load, on" : "the primary context of",
                static_cast<int>(dev), wb::hex(perContext).c_str(), ok ? "right" : "WRONG");
    wb::expect(ok, "the right answer from the one library in every context", "wrong values");
    if (created) {
      CU_CHECK(cuCtxDestroy(ctx));
    } else {
      CU_CHECK(cuCtxPopCurrent(&ctx));
      CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    }
  }
}
//! [launch-anywhere]

//! [module-way]
// The library interface, the module way: it must know every context before it can serve it, keep
// a map, and find the current context on every call.
struct ModuleWay {
  std::map<CUcontext, CUmodule> modules;
  void libraryInitialize(const std::vector<CUcontext>& contexts) {
    for (CUcontext ctx : contexts) {
      CU_CHECK(cuCtxPushCurrent(ctx));
      CU_CHECK(cuModuleLoad(&modules[ctx], wb::verifiedImagePath("vector_ops.fatbin").c_str()));
      CU_CHECK(cuCtxPopCurrent(&ctx));
    }
  }
  CUfunction libraryFunc(const char* name) {
    CUcontext ctx = nullptr;
    CU_CHECK(cuCtxGetCurrent(&ctx));
    CUfunction f = nullptr;
    CU_CHECK(cuModuleGetFunction(&f, modules.at(ctx), name));  // throws for a context it never saw
    return f;
  }
  void libraryDeinitialize() {
    for (auto& [ctx, module] : modules) {
      CU_CHECK(cuCtxPushCurrent(ctx));
      CU_CHECK(cuModuleUnload(module));
      CUcontext popped = nullptr;
      CU_CHECK(cuCtxPopCurrent(&popped));
    }
    modules.clear();
  }
};
//! [module-way]

//! [library-way]
// The same interface, the library way: one load, no contexts named, any context served.
struct LibraryWay {
  CUlibrary library = nullptr;
  void libraryInitialize() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr,
                                   nullptr, 0, nullptr, nullptr, 0));
  }
  CUkernel libraryFunc(const char* name) {
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, library, name));
    return k;
  }
  void libraryDeinitialize() { CU_CHECK(cuLibraryUnload(library)); }
};
//! [library-way]

// Both ways on every device's primary context: time to set up, and device memory once used.
void compare(int count) {
  //! [compare-setup]
  std::vector<CUdevice> devices(count);
  std::vector<CUcontext> contexts(count);
  for (int i = 0; i < count; ++i) {
    CU_CHECK(cuDeviceGet(&devices[i], i));
    CU_CHECK(cuDevicePrimaryCtxRetain(&contexts[i], devices[i]));
  }
  const auto freeOnDevice0 = [&] {
    size_t free = 0, total = 0;
    CU_CHECK(cuCtxPushCurrent(contexts[0]));
    CU_CHECK(cuMemGetInfo(&free, &total));
    CU_CHECK(cuCtxPopCurrent(&contexts[0]));
    return free;
  };
  // What device 0's free memory fell by since `before`; another process may free memory meanwhile.
  const auto usedSince = [&](size_t before) {
    const size_t after = freeOnDevice0();
    return after <= before ? wb::bytes(before - after) : std::string("not measured (free memory rose)");
  };
  const auto useEverywhere = [&](auto&& fill, auto&& scale) {
    bool ok = true;
    for (CUcontext ctx : contexts) {
      CU_CHECK(cuCtxPushCurrent(ctx));
      ok = launchAndCheck(fill(), scale()) && ok;
      CU_CHECK(cuCtxPopCurrent(&ctx));
    }
    return ok;
  };
  //! [compare-setup]

  //! [compare-run]
  std::printf("The library interface both ways, on %d device%s:\n", count, count == 1 ? "" : "s");
  size_t before = freeOnDevice0();
  wb::Stopwatch moduleClock;
  ModuleWay modules;
  modules.libraryInitialize(contexts);
  const double moduleInitMs = moduleClock.ms();
  const bool moduleOk = useEverywhere([&] { return modules.libraryFunc("fill"); },
                                      [&] { return modules.libraryFunc("scale"); });
  const double moduleTotalMs = moduleClock.ms();
  const std::string moduleMemory = usedSince(before);
  modules.libraryDeinitialize();

  before = freeOnDevice0();
  wb::Stopwatch libraryClock;
  LibraryWay library;
  library.libraryInitialize();
  const double libraryInitMs = libraryClock.ms();
  const bool libraryOk =
      useEverywhere([&] { return reinterpret_cast<CUfunction>(library.libraryFunc("fill")); },
                    [&] { return reinterpret_cast<CUfunction>(library.libraryFunc("scale")); });
  const double libraryTotalMs = libraryClock.ms();
  const std::string libraryMemory = usedSince(before);
  library.libraryDeinitialize();

  std::printf("  modules: initialize %.2f ms, with first use everywhere %.2f ms, device 0 memory %s, %s\n",
              moduleInitMs, moduleTotalMs, moduleMemory.c_str(), moduleOk ? "right" : "WRONG");
  std::printf("  library: initialize %.2f ms, with first use everywhere %.2f ms, device 0 memory %s, %s\n",
              libraryInitMs, libraryTotalMs, libraryMemory.c_str(), libraryOk ? "right" : "WRONG");
  wb::expect(moduleOk && libraryOk, "the right answer both ways", "wrong values");
  //! [compare-run]
  for (int i = 0; i < count; ++i) CU_CHECK(cuDevicePrimaryCtxRelease(devices[i]));
}

//! [after-unload]
// After cuLibraryUnload every CUkernel from the library is a dangling handle, and the reference
// does not say what launching one does: on driver 580 it returned CUDA_ERROR_INVALID_HANDLE in a
// context that had never run it, and crashed the process in one that had (and under
// compute-sanitizer). So this program does not try; the suite lesson07.unspecified does, in a
// child process.
void afterUnload(CUlibrary library) {
  CU_CHECK(cuLibraryUnload(library));
  std::printf("Unloaded the library: its CUkernels must not be used again "
              "(lesson07.unspecified shows why)\n");
}
//! [after-unload]

int main() {
  try {
    wb::checkEnvironment({
        {"CUDA_MODULE_LOADING", wb::Under::Teaches,
         "under EAGER a library is loaded into every context at cuLibraryLoad*, so 'initialize' holds what first use pays"},
    });
    CU_CHECK(cuInit(0));
    int count = 0;
    CU_CHECK(cuDeviceGetCount(&count));
    wb::step(1, "Loading with no context");
    std::printf("%d device%s.\n", count, count == 1 ? "" : "s");
    CUlibrary library = loadLibraries();
    wb::step(2, "What is in it");
    listKernels(library);
    wb::step(3, "One CUkernel, every context");
    CUkernel fill = nullptr, scale = nullptr;
    CU_CHECK(cuLibraryGetKernel(&fill, library, "fill"));
    CU_CHECK(cuLibraryGetKernel(&scale, library, "scale"));
    launchEverywhere(fill, scale, count);
    wb::step(4, "After cuLibraryUnload");
    afterUnload(library);
    wb::step(5, "A library interface, both ways");
    compare(count);
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

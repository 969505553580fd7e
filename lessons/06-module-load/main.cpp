// Lesson 06: loading modules, the context-dependent way.
//
// What you learn: a CUmodule is loaded INTO the current context and its CUfunctions belong to that
// context. cuModuleLoad takes a file (a fatbin, a cubin for the device's own architecture, or PTX
// that the driver compiles), cuModuleLoadData takes the image from memory, and cuModuleLoadDataEx
// adds JIT options such as the compiler's info and error logs. Lazy loading defers the real work
// until a kernel is asked for (CUDA_MODULE_LOADING=EAGER switches that off). A library that must run on every
// device therefore keeps a map from context to module, and a function from one context launched
// in another fails. Every load error a user meets is provoked and named.
//
// APIs: cuModuleLoad, cuModuleLoadData, cuModuleLoadDataEx, cuModuleGetFunction, cuModuleUnload,
//       cuModuleGetLoadingMode, cuLaunchKernel, cuCtxSynchronize
// Run:  ctest -R lesson06   (or build/lessons/lesson06-module-load, from any directory)
#include "vector_ops.hpp"
#include "workbook.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

// fill(out, 2, n) then scale(out, 3, 1, n), launched by wb::fillAndScale (common/vector_ops.cpp,
// where cuLaunchKernel is): every element must come back as 7.
bool launchAndCheck(CUfunction fill, CUfunction scale) {
  return wb::mismatches(wb::fillAndScale(fill, scale, 1u << 20, 2.0f, 3.0f, 1.0f), 7.0f) == 0;
}

//! [loading-mode]
void loadingMode() {
  CUmoduleLoadingMode mode;
  CU_CHECK(cuModuleGetLoadingMode(&mode));
  const char* env = std::getenv("CUDA_MODULE_LOADING");
  std::printf("Module loading mode: %s (CUDA_MODULE_LOADING=%s). Lazy loading defers loading each\n"
              "kernel until cuModuleGetFunction asks for it, so cuModuleLoad is cheap and first use pays.\n",
              mode == CU_MODULE_LAZY_LOADING ? "lazy" : "eager", env ? env : "<unset>");
}
//! [loading-mode]

// The same kernels from three kinds of image, each loaded into the current context.
void loadThreeWays(CUdevice dev) {
  //! [load-files]
  int major = 0, minor = 0;
  CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  const std::string ownCubin = "vector_ops.sm_" + std::to_string(major * 10 + minor) + ".cubin";

  const std::vector<unsigned> built = wb::builtArchitectures();
  const bool ownBuilt = std::find(built.begin(), built.end(), unsigned(major * 10 + minor)) != built.end();
  for (const std::string& image : {std::string("vector_ops.fatbin"), ownCubin}) {
    if (image == ownCubin && !ownBuilt) {
      std::printf("  %s: not built (WORKBOOK_CUDA_ARCHS lacks sm_%d%d): "
                  "the fatbin's PTX covers this device\n",
                  image.c_str(), major, minor);
      continue;
    }
    const std::string path = wb::verifiedImagePath(image);  // checked before the driver sees it
    wb::Stopwatch clock;
    CUmodule module = nullptr;
    CU_CHECK(cuModuleLoad(&module, path.c_str()));
    const double ms = clock.ms();
    CUfunction fill = nullptr, scale = nullptr;
    CU_CHECK(cuModuleGetFunction(&fill, module, "fill"));
    CU_CHECK(cuModuleGetFunction(&scale, module, "scale"));
    const bool right = launchAndCheck(fill, scale);
    std::printf("  cuModuleLoad(%s): %.2f ms; fill and scale give the right answer: %s\n", image.c_str(), ms,
                right ? "yes" : "NO");
    wb::expect(right, "the right answer from " + image, "wrong values");
    CU_CHECK(cuModuleUnload(module));
  }
  //! [load-files]

  //! [load-ptx]
  // PTX is compiled by the driver at load time; the JIT options return its logs and wall time.
  const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");  // NUL-terminated text
  char infoLog[4096] = {}, errorLog[4096] = {};
  float wallMs = -1;  // written only when the JIT really compiles
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_LOG_VERBOSE, CU_JIT_WALL_TIME};
  void* values[] = {infoLog, reinterpret_cast<void*>(sizeof infoLog), errorLog,
                    reinterpret_cast<void*>(sizeof errorLog), reinterpret_cast<void*>(1), &wallMs};
  CUmodule module = nullptr;
  CU_CHECK(cuModuleLoadDataEx(&module, ptx.data(), 6, options, values));
  CUfunction fill = nullptr, scale = nullptr;
  CU_CHECK(cuModuleGetFunction(&fill, module, "fill"));
  CU_CHECK(cuModuleGetFunction(&scale, module, "scale"));
  const bool ptxRight = launchAndCheck(fill, scale);
  std::printf("  cuModuleLoadDataEx(vector_ops.ptx): right answer: %s; JIT info log: %s\n",
              ptxRight ? "yes" : "NO",
              infoLog[0] ? infoLog
                         : "(empty: lazy loading deferred the compile, or the JIT cache served it)");
  wb::expect(ptxRight, "the right answer from the PTX", "wrong values");
  CU_CHECK(cuModuleUnload(module));
  //! [load-ptx]

  //! [broken-ptx]
  // PTX with a mistake: the load fails and the error log says where. The size slots are in-out
  // (the driver wrote back how much it used), so they are set again before the second call.
  values[1] = reinterpret_cast<void*>(sizeof infoLog);
  values[3] = reinterpret_cast<void*>(sizeof errorLog);
  const char broken[] = ".version 7.0\n.target sm_75\n.address_size 64\n"
                        ".visible .entry broken() { this_is_not_an_instruction; }\n";
  const CUresult rc = cuModuleLoadDataEx(&module, broken, 6, options, values);
  std::printf("  cuModuleLoadDataEx(broken PTX): %s (%d); JIT error log:\n%s\n", wb::errorName(rc).c_str(),
              static_cast<int>(rc), errorLog);
  //! [broken-ptx]
}

//! [module-map]
// What a library that must serve every context does with modules: one module per context, kept in
// a map, and found through the current context on every call. (Lesson 07 replaces all of it.)
struct ModuleLibrary {
  std::map<CUcontext, CUmodule> modules;

  void load(CUcontext ctx) {
    CU_CHECK(cuCtxPushCurrent(ctx));
    CUmodule module = nullptr;
    CU_CHECK(cuModuleLoad(&module, wb::verifiedImagePath("vector_ops.fatbin").c_str()));
    CU_CHECK(cuCtxPopCurrent(&ctx));
    modules[ctx] = module;
  }
  CUfunction function(const char* name) {  // for the current context
    CUcontext ctx = nullptr;
    CU_CHECK(cuCtxGetCurrent(&ctx));
    CUfunction f = nullptr;
    CU_CHECK(cuModuleGetFunction(&f, modules.at(ctx), name));
    return f;
  }
  void unloadAll() {
    for (auto& [ctx, module] : modules) {
      CU_CHECK(cuCtxPushCurrent(ctx));
      CU_CHECK(cuModuleUnload(module));
      CUcontext popped = nullptr;
      CU_CHECK(cuCtxPopCurrent(&popped));
    }
    modules.clear();
  }
};
//! [module-map]

//! [wrong-context]
// A CUfunction belongs to the context its module was loaded in. Launched while another context
// is current, it is refused.
void wrongContext(CUfunction fromPrimary, CUdevice dev) {
  CUcontext other = nullptr;
  CU_CHECK(wb::createContext(&other, 0, dev));  // pushed: now current
  const CUresult rc = wb::tryLaunchFill(fromPrimary);
  std::printf("Launching device 0's primary-context function while another context is current: %s (%d)\n",
              wb::errorName(rc).c_str(), static_cast<int>(rc));
  CU_CHECK(cuCtxDestroy(other));
}
//! [wrong-context]

void loadErrors(CUdevice dev) {
  //! [load-errors-files]
  CUmodule module = nullptr;
  CUresult rc = cuModuleLoad(&module, "/nonexistent/vector_ops.fatbin");
  std::printf("  a missing file:               %s (%d)\n", wb::errorName(rc).c_str(), static_cast<int>(rc));

  char notAnImage[] = "/tmp/workbook-not-an-image-XXXXXX";
  const int fd = mkstemp(notAnImage);
  if (fd >= 0) {
    const char text[] = "this is a text file, not a CUDA image\n";
    const bool written = write(fd, text, sizeof text - 1) == static_cast<ssize_t>(sizeof text - 1);
    close(fd);
    rc = written ? cuModuleLoad(&module, notAnImage) : CUDA_ERROR_OPERATING_SYSTEM;
    std::printf("  a file that is not an image:  %s (%d)\n", wb::errorName(rc).c_str(), static_cast<int>(rc));
    unlink(notAnImage);
  }

  int major = 0;
  CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  // A cubin for sm_XY runs on devices of major X and minor Y or later, never on another major.
  std::string foreign;  // a cubin of another major version than this device's (every build has one)
  for (unsigned arch : wb::cubinArchitectures())
    if (arch / 10 != static_cast<unsigned>(major)) foreign = std::to_string(arch);
  if (!foreign.empty()) {
    rc = cuModuleLoad(&module, wb::verifiedImagePath("vector_ops.sm_" + foreign + ".cubin").c_str());
    std::printf("  a cubin for sm_%s only:       %s (%d)\n", foreign.c_str(), wb::errorName(rc).c_str(),
                static_cast<int>(rc));
  }
  //! [load-errors-files]

  //! [load-errors-ptx]
  // PTX that claims an ISA version newer than this driver's JIT compiler knows (as PTX from a newer
  // toolkit does) is refused by cuModuleLoadData.
  const char fromTheFuture[] = ".version 9.9\n.target sm_75\n.address_size 64\n"
                               ".visible .entry nothing() { ret; }\n";
  rc = cuModuleLoadData(&module, fromTheFuture);
  std::printf("  PTX of ISA version 9.9:       %s (%d)\n", wb::errorName(rc).c_str(), static_cast<int>(rc));
  if (rc == CUDA_SUCCESS) CU_CHECK(cuModuleUnload(module));
  //! [load-errors-ptx]

  //! [load-errors-names]
  CU_CHECK(cuModuleLoad(&module, wb::verifiedImagePath("vector_ops.fatbin").c_str()));
  CUfunction f = nullptr;
  rc = cuModuleGetFunction(&f, module, "no_such_kernel");
  std::printf("  an unknown kernel name:       %s (%d)\n", wb::errorName(rc).c_str(), static_cast<int>(rc));
  rc = cuModuleGetFunction(&f, module, "_Z4fillPffj");  // what fill(float*, float, unsigned) mangles to
  std::printf("  a C++-mangled name:           %s (%d): the kernels are extern \"C\"\n",
              wb::errorName(rc).c_str(), static_cast<int>(rc));
  CU_CHECK(cuModuleUnload(module));
  //! [load-errors-names]
}

//! [damaged]
// The driver trusts the sizes written inside an image, so a damaged one can hang or crash it (the
// page shows what driver 580 did). wb::verifiedImagePath and wb::readVerifiedImage check every
// image first; here the same check meets a copy of the fatbin cut to 300 bytes, which never
// reaches the driver.
void damagedImage() {
  const std::vector<char> fatbin = wb::readVerifiedImage("vector_ops.fatbin");
  char path[] = "/tmp/workbook-cut-XXXXXX.fatbin";
  const int fd = mkstemps(path, 7);
  if (fd < 0) {
    std::printf("  (no scratch file in /tmp: skipped)\n");
    return;
  }
  const bool written = write(fd, fatbin.data(), 300) == 300;
  close(fd);
  std::printf("  vector_ops.fatbin is %zu bytes and intact; a copy cut to 300 bytes: %s\n", fatbin.size(),
              written ? wb::imageProblem(path).c_str() : "(could not be written)");
  unlink(path);
}
//! [damaged]

//! [cost]
// What one module costs in one context: load time, and device memory once its kernels are used.
void moduleCost(CUdevice dev) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU_CHECK(cuCtxPushCurrent(ctx));
  size_t before = 0, after = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&before, &total));
  wb::Stopwatch clock;
  CUmodule module = nullptr;
  CU_CHECK(cuModuleLoad(&module, wb::verifiedImagePath("vector_ops.fatbin").c_str()));
  const double loadMs = clock.ms();
  CUfunction fill = nullptr, scale = nullptr;
  CU_CHECK(cuModuleGetFunction(&fill, module, "fill"));
  CU_CHECK(cuModuleGetFunction(&scale, module, "scale"));
  wb::Stopwatch firstUse;
  const bool ok = launchAndCheck(fill, scale);
  const double firstMs = firstUse.ms();
  CU_CHECK(cuMemGetInfo(&after, &total));
  std::printf("  device %d: load %.2f ms, first launches and check %.2f ms (%s), device memory %s\n",
              static_cast<int>(dev), loadMs, firstMs, ok ? "right" : "WRONG",
              wb::bytes(before > after ? before - after : 0).c_str());
  wb::expect(ok, "the right answer on device " + std::to_string(static_cast<int>(dev)), "wrong values");
  CU_CHECK(cuModuleUnload(module));
  CU_CHECK(cuCtxPopCurrent(&ctx));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
}
//! [cost]

int main() {
  try {
    wb::checkEnvironment({
        {"CUDA_MODULE_LOADING", wb::Under::Teaches,
         "step 1 prints the mode it chose; under EAGER a load does its work (and finds a bad image) at once"},
        {"CUDA_FORCE_PTX_JIT", wb::Under::Teaches, "every image with PTX in it is compiled again, so loads take longer"},
        {"CUDA_FORCE_JIT", wb::Under::Teaches, "every image with PTX in it is compiled again, so loads take longer"},
        {"CUDA_DISABLE_PTX_JIT", wb::Under::Stops, "step 2 loads PTX, which the driver would then refuse"},
        {"CUDA_DISABLE_JIT", wb::Under::Stops, "step 2 loads PTX, which the driver would then refuse"},
    });
    CU_CHECK(cuInit(0));
    int count = 0;
    CU_CHECK(cuDeviceGetCount(&count));
    wb::step(1, "The images and lazy loading");
    std::printf("%d device%s. Kernel images from %s\n", count, count == 1 ? "" : "s", wb::kernelDir().c_str());
    loadingMode();

    CUdevice dev0 = 0;
    CU_CHECK(cuDeviceGet(&dev0, 0));
    CUcontext primary0 = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary0, dev0));
    CU_CHECK(cuCtxPushCurrent(primary0));
    wb::step(2, "Three kinds of image");
    loadThreeWays(dev0);
    CU_CHECK(cuCtxPopCurrent(&primary0));

    wb::step(3, "One module per context");
    ModuleLibrary library;
    std::vector<CUcontext> primaries;
    for (int i = 0; i < count; ++i) {
      CUdevice dev = 0;
      CU_CHECK(cuDeviceGet(&dev, i));
      CUcontext ctx = nullptr;
      CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
      primaries.push_back(ctx);
      library.load(ctx);
    }
    for (int i = 0; i < count; ++i) {
      CU_CHECK(cuCtxPushCurrent(primaries[i]));
      const bool ok = launchAndCheck(library.function("fill"), library.function("scale"));
      std::printf("  device %d: module %s, result %s\n", i, wb::hex(library.modules[primaries[i]]).c_str(),
                  ok ? "right" : "WRONG");
      wb::expect(ok, "the right answer from device " + std::to_string(i) + "'s own module", "wrong values");
      CU_CHECK(cuCtxPopCurrent(&primaries[i]));
    }
    CU_CHECK(cuCtxPushCurrent(primary0));
    const CUfunction fillOnDevice0 = library.function("fill");
    CU_CHECK(cuCtxPopCurrent(&primary0));
    wb::step(4, "A function in the wrong context");
    wrongContext(fillOnDevice0, dev0);

    wb::step(5, "Every load error");
    CU_CHECK(cuCtxPushCurrent(primary0));  // cuModuleLoad loads into the current context
    loadErrors(dev0);
    CU_CHECK(cuCtxPopCurrent(&primary0));
    library.unloadAll();

    wb::step(6, "Damaged images");
    damagedImage();

    wb::step(7, "What a module costs");
    for (int i = 0; i < count; ++i) {
      CUdevice dev = 0;
      CU_CHECK(cuDeviceGet(&dev, i));
      moduleCost(dev);
    }
    for (int i = 0; i < count; ++i) {
      CUdevice dev = 0;
      CU_CHECK(cuDeviceGet(&dev, i));
      CU_CHECK(cuDevicePrimaryCtxRelease(dev));  // the library's retains
    }
    CU_CHECK(cuDevicePrimaryCtxRelease(dev0));  // the first retain
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}

// Lesson 12's claims: the versions a program meets, the versioned driver symbols it imports, what
// cuGetProcAddress returns for a call, an unknown name, a version older than the call and one newer
// than the driver, what the driver does with PTX from a newer toolkit and for a newer GPU, that PTX
// runs on a GPU newer than its target, and that the JIT cache fills a CUDA_CACHE_PATH folder only
// when it is not disabled. Broken images are derived from the built ones at run time.
#include "damaged_images.hpp"
#include "process.hpp"
#include "scratch.hpp"
#include "support.hpp"

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <regex>

namespace {

std::string editedPtx(const std::string& directive, const std::string& value) {
  const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");
  return std::regex_replace(std::string(ptx.data()), std::regex("\\" + directive + " [^\\n]*"), directive + " " + value,
                            std::regex_constants::format_first_only);
}

struct Lookup {
  CUresult rc;
  CUdriverProcAddressQueryResult status;
  void* pfn;
};

Lookup lookUp(const char* symbol, int version) {
  Lookup l{CUDA_ERROR_UNKNOWN, CU_GET_PROC_ADDRESS_SUCCESS, nullptr};
  l.rc = cuGetProcAddress(symbol, &l.pfn, version, CU_GET_PROC_ADDRESS_DEFAULT, &l.status);
  return l;
}

unsigned ownArch(CUdevice dev) {
  return 10 * wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
         wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

}  // namespace

TEST_SUITE("versions") {
  TEST_CASE("the driver supports CUDA 12.0 or newer, and every driver function the program imports is in the loaded libcuda") {
    wbt::initDriver();
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    CHECK(driver >= 12000);
    CHECK(CUDA_VERSION >= 12000);
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);  // already loaded: this binary links it
    REQUIRE(lib != nullptr);
    for (const char* symbol : {"cuMemAlloc_v2", "cuCtxDestroy_v2", "cuGetProcAddress_v2"}) {
      CAPTURE(symbol);
      CHECK(dlsym(lib, symbol) != nullptr);
    }
    dlclose(lib);
  }
}

TEST_SUITE("entry-points") {
  TEST_CASE("cuGetProcAddress returns a working pointer for a call, by the signature of the version asked for") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const Lookup alloc = lookUp("cuMemAlloc", 12000);
    CHECK(alloc.rc == CUDA_SUCCESS);
    CHECK(alloc.status == CU_GET_PROC_ADDRESS_SUCCESS);
    REQUIRE(alloc.pfn != nullptr);
    CUdeviceptr p = 0;
    CHECK(reinterpret_cast<PFN_cuMemAlloc_v3020>(alloc.pfn)(&p, 4096) == CUDA_SUCCESS);
    CHECK(cuMemFree(p) == CUDA_SUCCESS);

    // The version picks the signature: three arguments before 11.4, execution affinity from 11.4.
    const Lookup create3 = lookUp("cuCtxCreate", 11000);
    REQUIRE(create3.pfn != nullptr);
    CUcontext ctx = nullptr;
    CHECK(reinterpret_cast<PFN_cuCtxCreate_v3020>(create3.pfn)(&ctx, 0, wbt::device(0)) == CUDA_SUCCESS);
    CHECK(wbt::current() == ctx);
    CHECK(cuCtxDestroy(ctx) == CUDA_SUCCESS);
    const Lookup create5 = lookUp("cuCtxCreate", 12000);
    REQUIRE(create5.pfn != nullptr);
    CHECK(reinterpret_cast<PFN_cuCtxCreate_v11040>(create5.pfn)(&ctx, nullptr, 0, 0, wbt::device(0)) == CUDA_SUCCESS);
    CHECK(wbt::current() == ctx);
    CHECK(cuCtxDestroy(ctx) == CUDA_SUCCESS);
  }

  TEST_CASE("an unknown name is CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, a version older than the call VERSION_NOT_SUFFICIENT, both with no pointer") {
    wbt::initDriver();
    const Lookup unknown = lookUp("cuNoSuchFunction", 12000);
    CHECK(unknown.status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(unknown.pfn == nullptr);
    const Lookup tooOld = lookUp("cuLibraryLoadData", 11080);  // cuLibrary* arrived in 12.0
    CHECK(tooOld.status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(tooOld.pfn == nullptr);
  }

  TEST_CASE("a CUDA version newer than the driver is CUDA_ERROR_INVALID_VALUE") {
    wbt::initDriver();
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    CHECK(lookUp("cuMemAlloc", driver + 1000).rc == CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_SUITE("images") {
  TEST_CASE("PTX from a newer toolkit (.version 9.9) is CUDA_ERROR_UNSUPPORTED_PTX_VERSION for cuModuleLoadData") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    CUmodule m = nullptr;
    CHECK(cuModuleLoadData(&m, editedPtx(".version", "9.9").c_str()) == CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
  }

  // Under lazy loading a library's kernels are compiled on first use, so the error may come from
  // the load or from the first call that needs the kernel: only that one of them fails is asserted.
  TEST_CASE("the same PTX through cuLibraryLoadData fails at the load or when its kernel is first needed") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const std::string ptx = editedPtx(".version", "9.9");
    CUlibrary lib = nullptr;
    const CUresult loaded = cuLibraryLoadData(&lib, ptx.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    MESSAGE("cuLibraryLoadData: " << wb::errorName(loaded));
    if (loaded == CUDA_SUCCESS) {
      CUkernel k = nullptr;
      CUresult later = cuLibraryGetKernel(&k, lib, "fill");
      CUfunction f = nullptr;
      if (later == CUDA_SUCCESS) later = cuKernelGetFunction(&f, k);
      MESSAGE("first use: " << wb::errorName(later));
      CHECK(later != CUDA_SUCCESS);
      cuLibraryUnload(lib);
    }
  }

  TEST_CASE("PTX whose .target is newer than the device does not load") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    CUmodule m = nullptr;
    const CUresult rc = cuModuleLoadData(&m, editedPtx(".target", "sm_" + std::to_string(ownArch(wbt::device(0)) + 10)).c_str());
    MESSAGE("observed: " << wb::errorName(rc));
    CHECK(rc != CUDA_SUCCESS);
  }

  TEST_CASE("PTX for the oldest built architecture runs on this (newer or equal) device") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    REQUIRE(ownArch(wbt::device(0)) >= wb::builtArchitectures().front());
    const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");
    CUmodule m = nullptr;
    REQUIRE(cuModuleLoadData(&m, ptx.data()) == CUDA_SUCCESS);
    CUfunction fill = nullptr, scale = nullptr;
    CU_CHECK(cuModuleGetFunction(&fill, m, "fill"));
    CU_CHECK(cuModuleGetFunction(&scale, m, "scale"));
    CHECK(wb::mismatches(wb::fillAndScale(fill, scale, 4096, 2, 3, 1), 7.0f) == 0);
    CHECK(cuModuleUnload(m) == CUDA_SUCCESS);
  }
}

TEST_SUITE("jit-cache") {
  TEST_CASE("the JIT cache fills the CUDA_CACHE_PATH folder, and CUDA_CACHE_DISABLE=1 leaves it empty") {
    wb::ScratchDir dir;
    const std::string cached = dir.path() + "/cached", disabled = dir.path() + "/disabled";
    const wb::ProcessEnd first =
        wb::runProcess({WORKBOOK_LESSON_PROGRAM, "--jit-child"}, {"CUDA_CACHE_PATH=" + cached}, 60);
    INFO(first.output);
    CHECK(first.code == 0);
    CHECK(wb::regularFilesUnder(cached) > 0);
    const wb::ProcessEnd off = wb::runProcess({WORKBOOK_LESSON_PROGRAM, "--jit-child"},
                                              {"CUDA_CACHE_PATH=" + disabled, "CUDA_CACHE_DISABLE=1"}, 60);
    INFO(off.output);
    CHECK(off.code == 0);
    CHECK(wb::regularFilesUnder(disabled) == 0);
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}

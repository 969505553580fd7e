// Lesson 06's claims: modules load into the current context from fatbin, cubin and PTX; their
// functions belong to that context; every load error has its code.
#include "damaged_images.hpp"
#include "support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace {

class Module {
 public:
  explicit Module(const std::string& file) { CU_CHECK(cuModuleLoad(&module_, wb::verifiedImagePath(file).c_str())); }
  ~Module() { cuModuleUnload(module_); }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUfunction function(const char* name) const {
    CUfunction f = nullptr;
    CU_CHECK(cuModuleGetFunction(&f, module_, name));
    return f;
  }
  CUmodule get() const { return module_; }

 private:
  CUmodule module_ = nullptr;
};

unsigned ownArch(CUdevice dev) {
  return 10 * wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
         wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

// Whether the build made machine code for this architecture (WORKBOOK_CUDA_ARCHS).
bool built(unsigned arch) {
  const auto archs = wb::builtArchitectures();
  return std::find(archs.begin(), archs.end(), arch) != archs.end();
}

}  // namespace

TEST_SUITE("load") {
  TEST_CASE("a fatbin, the device's own cubin and PTX all load and compute the right answer") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const std::string cubin = "vector_ops.sm_" + std::to_string(ownArch(wbt::device(0))) + ".cubin";
    for (const std::string& file : {std::string("vector_ops.fatbin"), cubin, std::string("vector_ops.ptx")}) {
      CAPTURE(file);
      if (file == cubin && !built(ownArch(wbt::device(0)))) {
        MESSAGE("not built for this device's architecture: " << file);
        continue;
      }
      Module m(file);
      CHECK(wb::mismatches(wb::fillAndScale(m.function("fill"), m.function("scale"), 100000, 2, 3, 1), 7.0f) == 0);
    }
  }

  TEST_CASE("cuModuleLoadData and cuModuleLoadDataEx (with JIT log options) load PTX from memory") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");  // checked, NUL-terminated
    CUmodule plain = nullptr;
    CHECK(cuModuleLoadData(&plain, ptx.data()) == CUDA_SUCCESS);
    CHECK(cuModuleUnload(plain) == CUDA_SUCCESS);

    char info[4096] = {}, error[4096] = {};
    CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
    void* values[] = {info, reinterpret_cast<void*>(sizeof info), error, reinterpret_cast<void*>(sizeof error),
                      reinterpret_cast<void*>(1)};
    CUmodule module = nullptr;
    REQUIRE(cuModuleLoadDataEx(&module, ptx.data(), 5, options, values) == CUDA_SUCCESS);
    CHECK(error[0] == '\0');  // nothing went wrong, so nothing was written there
    CUfunction fill = nullptr, scale = nullptr;
    CHECK(cuModuleGetFunction(&fill, module, "fill") == CUDA_SUCCESS);
    CHECK(cuModuleGetFunction(&scale, module, "scale") == CUDA_SUCCESS);
    CHECK(wb::mismatches(wb::fillAndScale(fill, scale, 4096, 2, 3, 1), 7.0f) == 0);
    CHECK(cuModuleUnload(module) == CUDA_SUCCESS);
  }

  TEST_CASE("PTX with an error is CUDA_ERROR_INVALID_PTX, and the JIT's error log says what is wrong") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const char broken[] = ".version 7.0\n.target sm_75\n.address_size 64\n"
                          ".visible .entry broken() { this_is_not_an_instruction; }\n";
    char error[4096] = {};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error, reinterpret_cast<void*>(sizeof error)};
    CUmodule module = nullptr;
    CHECK(cuModuleLoadDataEx(&module, broken, 2, options, values) == CUDA_ERROR_INVALID_PTX);
    MESSAGE("JIT error log: " << error);
    CHECK(std::string(error).find("this_is_not_an_instruction") != std::string::npos);
  }

  // NVIDIA's lazy-loading guide: lazy is the default from CUDA 12.2 on Linux (12.3 on Windows); the
  // course accepts drivers from 12.0, whose default is eager.
  TEST_CASE("the loading mode is what CUDA_MODULE_LOADING asks for; unset, lazy from a CUDA 12.2 driver on") {
    wbt::initDriver();
    CUmoduleLoadingMode mode;
    REQUIRE(cuModuleGetLoadingMode(&mode) == CUDA_SUCCESS);
    const char* env = std::getenv("CUDA_MODULE_LOADING");
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    if (env && std::string(env) == "EAGER") {
      CHECK(mode == CU_MODULE_EAGER_LOADING);
    } else if (env && std::string(env) == "LAZY") {
      CHECK(mode == CU_MODULE_LAZY_LOADING);
    } else if (driver >= 12020) {
      CHECK(mode == CU_MODULE_LAZY_LOADING);
    } else {
      MESSAGE("driver " << driver << " predates lazy loading by default; mode " << mode);
    }
  }
}

TEST_SUITE("errors") {
  TEST_CASE("a missing file is CUDA_ERROR_FILE_NOT_FOUND") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    CUmodule m = nullptr;
    CHECK(cuModuleLoad(&m, "/nonexistent/vector_ops.fatbin") == CUDA_ERROR_FILE_NOT_FOUND);
  }

  TEST_CASE("a file that is not an image is CUDA_ERROR_INVALID_IMAGE") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    char path[] = "/tmp/workbook-test-not-an-image-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const char text[] = "plain text, not a CUDA image\n";
    REQUIRE(write(fd, text, sizeof text - 1) == static_cast<ssize_t>(sizeof text - 1));
    close(fd);
    CUmodule m = nullptr;
    CHECK(cuModuleLoad(&m, path) == CUDA_ERROR_INVALID_IMAGE);
    unlink(path);
  }

  TEST_CASE("a cubin for another major architecture version is CUDA_ERROR_NO_BINARY_FOR_GPU") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    const unsigned major = ownArch(wbt::device(0)) / 10;
    std::string foreign;  // every build has one, a build for one architecture too (WORKBOOK_OTHER_ARCH)
    for (unsigned arch : wb::cubinArchitectures())
      if (arch / 10 != major) foreign = std::to_string(arch);
    REQUIRE_FALSE(foreign.empty());
    CUmodule m = nullptr;
    CHECK(cuModuleLoad(&m, wb::verifiedImagePath("vector_ops.sm_" + foreign + ".cubin").c_str()) ==
          CUDA_ERROR_NO_BINARY_FOR_GPU);
  }

  TEST_CASE("an unknown or C++-mangled kernel name is CUDA_ERROR_NOT_FOUND") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    Module m("vector_ops.fatbin");
    CUfunction f = nullptr;
    CHECK(cuModuleGetFunction(&f, m.get(), "no_such_kernel") == CUDA_ERROR_NOT_FOUND);
    CHECK(cuModuleGetFunction(&f, m.get(), "_Z4fillPffj") == CUDA_ERROR_NOT_FOUND);
  }

  TEST_CASE("with no current context cuModuleLoad has nowhere to load: CUDA_ERROR_INVALID_CONTEXT") {
    wbt::initDriver();
    REQUIRE(wbt::current() == nullptr);
    CUmodule m = nullptr;
    CHECK(cuModuleLoad(&m, wb::verifiedImagePath("vector_ops.fatbin").c_str()) == CUDA_ERROR_INVALID_CONTEXT);
  }
}

TEST_SUITE("contexts") {
  // The reference lists both CUDA_ERROR_INVALID_HANDLE and CUDA_ERROR_INVALID_CONTEXT for
  // cuLaunchKernel and does not say which this is: only the refusal is asserted.
  TEST_CASE("a function from one context launched while another is current is refused") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    CUfunction fill = nullptr;
    {
      wbt::Pushed current(primary.get());
      Module m("vector_ops.fatbin");
      fill = m.function("fill");
      wbt::OwnedContext other(wbt::device(0));  // now current
      const CUresult rc = wb::tryLaunchFill(fill);
      MESSAGE("the launch returned " << wb::errorName(rc));
      CHECK(rc != CUDA_SUCCESS);
    }
  }

  TEST_CASE("the same file loaded in two contexts gives two modules; each works only in its own") {
    wbt::initDriver();
    wbt::OwnedContext a(wbt::device(0));
    Module inA("vector_ops.fatbin");
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
    wbt::OwnedContext b(wbt::device(0));
    Module inB("vector_ops.fatbin");
    CHECK(inA.get() != inB.get());
    CHECK(inA.function("fill") != inB.function("fill"));
    CHECK(wb::mismatches(wb::fillAndScale(inB.function("fill"), inB.function("scale"), 1000, 2, 3, 1), 7.0f) == 0);
    wbt::Pushed backToA(a.get());
    CHECK(wb::mismatches(wb::fillAndScale(inA.function("fill"), inA.function("scale"), 1000, 2, 3, 1), 7.0f) == 0);
  }
}

TEST_SUITE("multi-device") {
  TEST_CASE("one module per device's primary context: each computes right, and none launches on another device") {
    const int count = wbt::initDriver();
    REQUIRE(count >= 2);
    MESSAGE("running on " << count << " devices");
    std::vector<std::unique_ptr<wbt::RetainedPrimary>> primaries;
    std::vector<CUmodule> modules;
    for (int i = 0; i < count; ++i) {
      primaries.push_back(std::make_unique<wbt::RetainedPrimary>(wbt::device(i)));
      wbt::Pushed current(primaries.back()->get());
      CUmodule m = nullptr;
      REQUIRE(cuModuleLoad(&m, wb::verifiedImagePath("vector_ops.fatbin").c_str()) == CUDA_SUCCESS);
      modules.push_back(m);
      CUfunction fill = nullptr, scale = nullptr;
      CU_CHECK(cuModuleGetFunction(&fill, m, "fill"));
      CU_CHECK(cuModuleGetFunction(&scale, m, "scale"));
      CHECK(wb::mismatches(wb::fillAndScale(fill, scale, 100000, 2, 3, 1), 7.0f) == 0);
    }
    CUfunction fromDevice0 = nullptr;
    CU_CHECK(cuModuleGetFunction(&fromDevice0, modules[0], "fill"));
    {
      wbt::Pushed onDevice1(primaries[1]->get());
      const CUresult rc = wb::tryLaunchFill(fromDevice0);
      MESSAGE("the launch on device 1 returned " << wb::errorName(rc));
      CHECK(rc != CUDA_SUCCESS);
    }
    for (int i = 0; i < count; ++i) {
      wbt::Pushed current(primaries[i]->get());
      CHECK(cuModuleUnload(modules[i]) == CUDA_SUCCESS);
    }
  }
}

// Named "damaged-images": the sanitize target leaves it out; it runs the lesson program, not the driver.
TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}

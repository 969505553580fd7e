// Lesson 07's claims: a library loads with no context, its CUkernel runs in every context
// (including ones created after the load), and it is worth nothing after cuLibraryUnload.
#include "damaged_images.hpp"
#include "support.hpp"

#include <cstddef>
#include <set>
#include <string>

extern const unsigned char vector_ops_fatbin[];
extern const std::size_t vector_ops_fatbin_size;

namespace {

class Library {
 public:
  Library() {
    CU_CHECK(cuLibraryLoadFromFile(&lib_, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr, nullptr, 0, nullptr,
                                   nullptr, 0));
  }
  ~Library() {
    if (lib_) cuLibraryUnload(lib_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  CUkernel kernel(const char* name) const {
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, lib_, name));
    return k;
  }
  CUlibrary get() const { return lib_; }
  void unload() {
    CU_CHECK(cuLibraryUnload(lib_));
    lib_ = nullptr;
  }

 private:
  CUlibrary lib_ = nullptr;
};

CUfunction asFunction(CUkernel k) { return reinterpret_cast<CUfunction>(k); }

}  // namespace

TEST_SUITE("no-context") {
  TEST_CASE("cuLibraryLoadFromFile and cuLibraryLoadData work with no context current, and find kernels by name") {
    wbt::initDriver();
    REQUIRE(wbt::current() == nullptr);
    Library fromFile;
    CHECK(fromFile.get() != nullptr);
    CUlibrary fromData = nullptr;
    CHECK(vector_ops_fatbin_size > 0);
    REQUIRE(cuLibraryLoadData(&fromData, vector_ops_fatbin, nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
    CUkernel k = nullptr;
    CHECK(cuLibraryGetKernel(&k, fromData, "scale") == CUDA_SUCCESS);
    CHECK(cuLibraryGetKernel(&k, fromData, "no_such_kernel") == CUDA_ERROR_NOT_FOUND);
    CHECK(cuLibraryUnload(fromData) == CUDA_SUCCESS);
    CHECK(wbt::current() == nullptr);  // loading made no context current
  }

#if CUDA_VERSION >= 12040
  TEST_CASE("cuLibraryEnumerateKernels lists exactly the kernels of the image, by their extern C names") {
    wbt::initDriver();
    Library lib;
    unsigned count = 0;
    REQUIRE(cuLibraryGetKernelCount(&count, lib.get()) == CUDA_SUCCESS);
    std::vector<CUkernel> kernels(count);
    REQUIRE(cuLibraryEnumerateKernels(kernels.data(), count, lib.get()) == CUDA_SUCCESS);
    std::set<std::string> names;
    for (CUkernel k : kernels) {
      const char* name = nullptr;
      REQUIRE(cuKernelGetName(&name, k) == CUDA_SUCCESS);
      names.insert(name);
    }
    CHECK(names == std::set<std::string>{"fill", "scale"});
  }
#endif
}

TEST_SUITE("launch") {
  TEST_CASE("one CUkernel runs in the primary context and in a context created after the load") {
    wbt::initDriver();
    Library lib;
    const CUkernel fill = lib.kernel("fill"), scale = lib.kernel("scale");
    {
      wbt::RetainedPrimary primary(wbt::device(0));
      wbt::Pushed current(primary.get());
      CHECK(wb::mismatches(wb::fillAndScale(asFunction(fill), asFunction(scale), 100000, 2, 3, 1), 7.0f) == 0);
    }
    wbt::OwnedContext later(wbt::device(0));
    CHECK(wb::mismatches(wb::fillAndScale(asFunction(fill), asFunction(scale), 100000, 2, 3, 1), 7.0f) == 0);
  }

  // Whether two calls return the same handle is unspecified: the identities below are what driver
  // 580 did, named as observed. That each context's CUfunction is usable is what the API promises.
  TEST_CASE("observed on driver 580: cuKernelGetFunction gives each context its own CUfunction, the same one each time") {
    wbt::initDriver();
    Library lib;
    const CUkernel fill = lib.kernel("fill");
    wbt::OwnedContext a(wbt::device(0));
    CUfunction inA = nullptr;
    REQUIRE(cuKernelGetFunction(&inA, fill) == CUDA_SUCCESS);
    wbt::OwnedContext b(wbt::device(0));
    CUfunction inB = nullptr;
    REQUIRE(cuKernelGetFunction(&inB, fill) == CUDA_SUCCESS);
    CHECK(inA != nullptr);
    CHECK(inA != inB);
    CUfunction again = nullptr;
    CHECK(cuKernelGetFunction(&again, fill) == CUDA_SUCCESS);
    CHECK(again == inB);  // stable within a context
  }
}

// In a child process (see wbt::runInChild): after cuLibraryUnload the reference does not say what
// using its CUkernel does (it is unspecified), and on driver 580 launching one that had already run
// in the current context crashed the process. The child exits 10 when the launch returned an error
// and 11 when it "worked".
TEST_CASE("child: launch a CUkernel after cuLibraryUnload" * doctest::skip(!wbt::inChild())) {
  wbt::initDriver();
  Library lib;
  const CUkernel fill = lib.kernel("fill");
  wbt::RetainedPrimary primary(wbt::device(0));
  wbt::Pushed current(primary.get());
  REQUIRE(wb::tryLaunchFill(asFunction(fill)) == CUDA_SUCCESS);
  lib.unload();
  const CUresult rc = wb::tryLaunchFill(asFunction(fill));
  std::_Exit(rc == CUDA_SUCCESS ? 11 : 10);
}

// Named "unspecified": the sanitize target leaves these suites out, since the child may crash.
TEST_SUITE("unspecified") {
  TEST_CASE("after cuLibraryUnload the CUkernel does not launch: the launch fails or the child process dies") {
    const wbt::ChildEnd end = wbt::runInChild("child: launch a CUkernel after cuLibraryUnload");
    MESSAGE("the child " << (end.crashed ? "crashed" : "exited with " + std::to_string(end.code)) << ":\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK((end.crashed || end.code == 10));
    CHECK(end.code != 11);
  }
}

TEST_SUITE("multi-device") {
  TEST_CASE("one CUkernel, loaded once, runs in every device's primary context") {
    const int count = wbt::initDriver();
    REQUIRE(count >= 2);
    MESSAGE("running on " << count << " devices");
    Library lib;
    const CUkernel fill = lib.kernel("fill"), scale = lib.kernel("scale");
    std::set<CUfunction> perContext;
    for (int i = 0; i < count; ++i) {
      CAPTURE(i);
      wbt::RetainedPrimary primary(wbt::device(i));
      wbt::Pushed current(primary.get());
      CHECK(wb::mismatches(wb::fillAndScale(asFunction(fill), asFunction(scale), 100000, 2, 3, 1), 7.0f) == 0);
      CUfunction f = nullptr;
      CHECK(cuKernelGetFunction(&f, fill) == CUDA_SUCCESS);
      perContext.insert(f);
    }
    CHECK(perContext.size() == static_cast<size_t>(count));
  }
}

// Named "damaged-images": the sanitize target leaves it out; it runs the lesson program, not the driver.
TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}

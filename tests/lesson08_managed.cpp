// Lesson 08's claims: a __managed__ variable is one pointer for every context and device, and
// kernels in several contexts add up in it; a __device__ variable is one copy per context.
#include "damaged_images.hpp"
#include "support.hpp"

#include <memory>
#include <vector>

namespace {

struct Counters {
  Counters() {
    CU_CHECK(cuLibraryLoadFromFile(&lib, wb::verifiedImagePath("counters.fatbin").c_str(), nullptr, nullptr, 0, nullptr,
                                   nullptr, 0));
    CU_CHECK(cuLibraryGetKernel(&count, lib, "count"));
  }
  ~Counters() { cuLibraryUnload(lib); }
  Counters(const Counters&) = delete;
  Counters& operator=(const Counters&) = delete;

  CUdeviceptr managed() const {  // in the current context
    CUdeviceptr p = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetManaged(&p, &bytes, lib, "managedCounter"));
    REQUIRE(bytes == sizeof(unsigned long long));
    return p;
  }
  CUdeviceptr global() const {  // in the current context
    CUdeviceptr p = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetGlobal(&p, &bytes, lib, "deviceCounter"));
    REQUIRE(bytes == sizeof(unsigned long long));
    return p;
  }
  void launch(unsigned n) const {  // in the current context, waited for
    void* args[] = {&n};
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                            nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
  CUlibrary lib = nullptr;
  CUkernel count = nullptr;
};

unsigned long long readDevice(CUdeviceptr p) {
  unsigned long long v = 0;
  CU_CHECK(cuMemcpyDtoH(&v, p, sizeof v));
  return v;
}

}  // namespace

TEST_SUITE("managed") {
  TEST_CASE("cuLibraryGetManaged returns the same pointer in every context") {
    wbt::initDriver();
    Counters c;
    wbt::RetainedPrimary primary(wbt::device(0));
    CUdeviceptr inPrimary = 0;
    {
      wbt::Pushed current(primary.get());
      inPrimary = c.managed();
    }
    wbt::OwnedContext other(wbt::device(0));
    CHECK(c.managed() == inPrimary);
    unsigned type = 0;
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_IS_MANAGED, inPrimary) == CUDA_SUCCESS);
    CHECK(type == 1);
  }

  TEST_CASE("the host writes the variable directly, and kernels in two contexts add up in it") {
    wbt::initDriver();
    Counters c;
    wbt::RetainedPrimary primary(wbt::device(0));
    wbt::OwnedContext other(wbt::device(0));  // current
    auto* counter = reinterpret_cast<unsigned long long*>(c.managed());
    *counter = 5;  // no kernel is running
    c.launch(1000);
    {
      wbt::Pushed current(primary.get());
      c.launch(2345);
    }
    CHECK(*counter == 5 + 1000 + 2345);  // read after both contexts synchronised
  }
}

TEST_SUITE("device-variable") {
  TEST_CASE("a __device__ variable has one copy per context, each counting only its own launches") {
    wbt::initDriver();
    Counters c;
    wbt::OwnedContext a(wbt::device(0));
    const CUdeviceptr inA = c.global();
    CU_CHECK(cuMemsetD8(inA, 0, sizeof(unsigned long long)));
    c.launch(300);
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
    wbt::OwnedContext b(wbt::device(0));
    const CUdeviceptr inB = c.global();
    CU_CHECK(cuMemsetD8(inB, 0, sizeof(unsigned long long)));
    c.launch(700);
    CHECK(inA != inB);
    CHECK(readDevice(inB) == 700);
    wbt::Pushed backToA(a.get());
    CHECK(readDevice(inA) == 300);
  }
}

TEST_SUITE("multi-device") {
  TEST_CASE("kernels on every device update the one managed variable and the counts add up") {
    const int count = wbt::initDriver();
    REQUIRE(count >= 2);
    MESSAGE("running on " << count << " devices");
    Counters c;
    std::vector<std::unique_ptr<wbt::RetainedPrimary>> primaries;
    unsigned long long* counter = nullptr;
    for (int i = 0; i < count; ++i) {
      primaries.push_back(std::make_unique<wbt::RetainedPrimary>(wbt::device(i)));
      wbt::Pushed current(primaries.back()->get());
      auto* here = reinterpret_cast<unsigned long long*>(c.managed());
      if (!counter) counter = here;
      CHECK(here == counter);
    }
    *counter = 0;
    unsigned long long expected = 0;
    for (int i = 0; i < count; ++i) {
      wbt::Pushed current(primaries[i]->get());
      c.launch(1000u * (i + 1));
      expected += 1000u * (i + 1);
    }
    CHECK(*counter == expected);
  }
}

// Named "damaged-images": the sanitize target leaves it out; it runs the lesson program, not the driver.
TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}

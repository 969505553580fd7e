// Lesson 02's claims: CU_CHECK reports each provoked error with the right fields, evaluates its
// expression once, and still reports a code nobody knows.
#include "support.hpp"

#include <string>

namespace {

struct Caught {
  bool threw = false;
  CUresult code = CUDA_SUCCESS;
  std::string name, description, expression, file, what;
  int line = 0;
};

template <class F>
Caught catchFrom(F&& f) {
  Caught c;
  try {
    f();
  } catch (const wb::DriverError& e) {
    c = {true, e.code(), e.name(), e.description(), e.expression(), e.file(), e.what(), e.line()};
  }
  return c;
}

std::string driverText(CUresult code) {
  const char* text = nullptr;
  REQUIRE(cuGetErrorString(code, &text) == CUDA_SUCCESS);
  return text;
}

}  // namespace

// One process per suite (ctest), so this one sees the driver before anything initialised it. The
// description is asked of the driver before cuInit: the reference says every call returns
// CUDA_ERROR_NOT_INITIALIZED then, and on driver 580 cuGetErrorString answered all the same.
TEST_SUITE("before-init") {
  TEST_CASE("a call before cuInit throws CUDA_ERROR_NOT_INITIALIZED with every field filled "
            "(observed on driver 580: cuGetErrorString answers before cuInit)") {
    int count = -1;
    int line = __LINE__ + 1;
    const Caught c = catchFrom([&] { CU_CHECK(cuDeviceGetCount(&count)); });
    REQUIRE(c.threw);
    CHECK(c.code == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(c.name == "CUDA_ERROR_NOT_INITIALIZED");
    CHECK(c.description == driverText(CUDA_ERROR_NOT_INITIALIZED));  // the driver can describe it
    CHECK(c.expression == "cuDeviceGetCount(&count)");
    CHECK(c.file == "tests/lesson02_check_macro.cpp");
    CHECK(c.line == line);
    CHECK(c.what == "tests/lesson02_check_macro.cpp:" + std::to_string(line) +
                        ": cuDeviceGetCount(&count) failed: CUDA_ERROR_NOT_INITIALIZED (3): " + c.description);
    CHECK(count == -1);
  }

  TEST_CASE("cuInit(1) throws CUDA_ERROR_INVALID_VALUE") {
    const Caught c = catchFrom([] { CU_CHECK(cuInit(1)); });
    REQUIRE(c.threw);
    CHECK(c.code == CUDA_ERROR_INVALID_VALUE);
    CHECK(c.name == "CUDA_ERROR_INVALID_VALUE");
    CHECK(c.expression == "cuInit(1)");
  }
}

TEST_SUITE("checked-call") {
  TEST_CASE("popping an empty context stack throws CUDA_ERROR_INVALID_CONTEXT") {
    wbt::initDriver();
    REQUIRE(wbt::current() == nullptr);
    CUcontext popped = nullptr;
    const Caught c = catchFrom([&] { CU_CHECK(cuCtxPopCurrent(&popped)); });
    REQUIRE(c.threw);
    CHECK(c.code == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(c.name == "CUDA_ERROR_INVALID_CONTEXT");
    CHECK(c.description == driverText(CUDA_ERROR_INVALID_CONTEXT));
    CHECK(c.what.find(": cuCtxPopCurrent(&popped) failed: CUDA_ERROR_INVALID_CONTEXT (201): ") != std::string::npos);
    CHECK(popped == nullptr);
  }

  TEST_CASE("cuGetErrorName on an unknown code fails and leaves the name NULL; CU_CHECK still reports it") {
    wbt::initDriver();
    const auto unknown = static_cast<CUresult>(9999);
    const char* name = nullptr;
    CHECK(cuGetErrorName(unknown, &name) == CUDA_ERROR_INVALID_VALUE);
    CHECK(name == nullptr);
    const Caught c = catchFrom([&] { CU_CHECK(unknown); });
    REQUIRE(c.threw);
    CHECK(c.code == unknown);
    CHECK(c.name == "unknown CUresult");
    CHECK(c.what.find("(9999)") != std::string::npos);
  }

  TEST_CASE("the expression is evaluated once, whether it succeeds or fails") {
    wbt::initDriver();
    int calls = 0;
    int count = 0;
    CHECK_NOTHROW(CU_CHECK((++calls, cuDeviceGetCount(&count))));
    CHECK(calls == 1);
    CUcontext popped = nullptr;
    CHECK_THROWS_AS(CU_CHECK((++calls, cuCtxPopCurrent(&popped))), wb::DriverError);
    CHECK(calls == 2);
  }

  // A driver older than the toolkit does not know the newest codes (cuGetErrorName then fails with
  // CUDA_ERROR_INVALID_VALUE): those are counted and reported, and every code it does name must
  // carry the header's name.
  TEST_CASE("every code the driver names has the name generated from cuda.h") {
    wbt::initDriver();
    int named = 0, unknownToDriver = 0;
    for (CUresult code : wb::headerErrorCodes()) {
      const char* fromDriver = nullptr;
      CAPTURE(static_cast<int>(code));
      if (cuGetErrorName(code, &fromDriver) != CUDA_SUCCESS || !fromDriver) {
        ++unknownToDriver;
        continue;
      }
      ++named;
      CHECK(std::string(fromDriver) == wb::headerErrorName(code));
    }
    MESSAGE(named << " codes named by the driver, " << unknownToDriver << " unknown to it");
    CHECK(named > 0);
  }
}

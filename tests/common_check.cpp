// The checked-call header on a machine with no driver: this binary runs with the toolkit's stub
// libcuda first on LD_LIBRARY_PATH, where every call, cuGetErrorName included, returns
// CUDA_ERROR_STUB_LIBRARY. The header must still name the error, describe it, and say where.
#include <doctest/doctest.h>

#include "workbook.hpp"

#include <string>

namespace {

// Runs CU_CHECK on f() and returns the exception it threw (failing the test if none).
template <class F>
wb::DriverError thrownBy(F&& f, int& line) {
  try {
    line = __LINE__ + 1;
    CU_CHECK(f());
  } catch (const wb::DriverError& e) {
    return e;
  }
  FAIL("CU_CHECK did not throw");
  throw;  // unreachable: FAIL ends the test
}

}  // namespace

TEST_SUITE("stub-driver") {
  TEST_CASE("the loaded libcuda.so.1 is the toolkit's stub, which cannot name its own errors") {
    int version = -1;
    REQUIRE(cuDriverGetVersion(&version) == CUDA_ERROR_STUB_LIBRARY);
    const char* name = nullptr;
    CHECK(cuGetErrorName(CUDA_ERROR_STUB_LIBRARY, &name) == CUDA_ERROR_STUB_LIBRARY);
    const char* text = nullptr;
    CHECK(cuGetErrorString(CUDA_ERROR_STUB_LIBRARY, &text) == CUDA_ERROR_STUB_LIBRARY);
  }

  TEST_CASE("a failing call throws DriverError carrying code, name, description, expression, file and line") {
    int line = 0;
    bool threw = false;
    try {
      line = __LINE__ + 1;
      CU_CHECK(cuInit(0));
    } catch (const wb::DriverError& e) {
      threw = true;
      CHECK(e.code() == CUDA_ERROR_STUB_LIBRARY);
      CHECK(static_cast<int>(e.code()) == 34);
      CHECK(e.name() == "CUDA_ERROR_STUB_LIBRARY");
      CHECK(e.description().find("stub library") != std::string::npos);
      CHECK(e.expression() == "cuInit(0)");
      CHECK(e.file() == "tests/common_check.cpp");
      CHECK(e.line() == line);
      CHECK(std::string(e.what()) == "tests/common_check.cpp:" + std::to_string(line) +
                                         ": cuInit(0) failed: CUDA_ERROR_STUB_LIBRARY (34): " + e.description());
    }
    CHECK(threw);
  }

  TEST_CASE("the expression is evaluated exactly once, on success and on failure") {
    int calls = 0;
    auto succeed = [&] { ++calls; return CUDA_SUCCESS; };
    CHECK_NOTHROW(CU_CHECK(succeed()));
    CHECK(calls == 1);

    calls = 0;
    auto fail = [&] { ++calls; return cuInit(0); };
    CHECK_THROWS_AS(CU_CHECK(fail()), wb::DriverError);
    CHECK(calls == 1);
  }

  TEST_CASE("every code is named from the toolkit's cuda.h when the driver cannot name it") {
    struct Known { CUresult code; const char* name; };
    // The compiler's view of the enum against the table generated from the same header.
    const Known known[] = {{CUDA_SUCCESS, "CUDA_SUCCESS"},
                           {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
                           {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
                           {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
                           {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE"},
                           {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
                           {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
                           {CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND"},
                           {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
                           {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
                           {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY"},
                           {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"}};
    for (const auto& k : known) {
      CAPTURE(k.name);
      CHECK(wb::errorName(k.code) == k.name);
      REQUIRE(wb::headerErrorDescription(k.code) != nullptr);
      CHECK(std::string(wb::headerErrorDescription(k.code)).size() > 10);
    }
  }

  TEST_CASE("a code that neither the driver nor the toolkit knows is still reported, by its number") {
    const auto unknown = static_cast<CUresult>(9999);
    CHECK(wb::headerErrorName(unknown) == nullptr);
    int line = 0;
    const wb::DriverError e = thrownBy([&] { return unknown; }, line);
    CHECK(e.code() == unknown);
    CHECK(e.name() == "unknown CUresult");
    CHECK(e.description().find("9999") != std::string::npos);
    CHECK(std::string(e.what()).find("failed: unknown CUresult (9999): ") != std::string::npos);
  }

  TEST_CASE("a lesson that meets the stub ends with the no-GPU exit code") {
    int line = 0;
    const wb::DriverError e = thrownBy([] { return cuInit(0); }, line);
    CHECK(wb::reportFatal(e) == wb::kExitNoGpu);
  }

  TEST_CASE("the cuCtxCreate bridge compiles against this toolkit and reaches the driver") {
    CUcontext ctx = nullptr;
    CHECK(wb::createContext(&ctx, 0, 0) == CUDA_ERROR_STUB_LIBRARY);
    CHECK(ctx == nullptr);
  }
}

// The ledger on a machine with no driver (ctest common.ledger): the toolkit's stub libcuda answers
// every call with CUDA_ERROR_STUB_LIBRARY, so nothing is ever held, but every call is counted and a
// FailCall hands out its error on exactly the call it names. Proves the ledger stands between the
// code and the driver: a check that asks it cannot be answered by a ledger that never saw a call.
#include <doctest/doctest.h>

#include "ledger.hpp"

TEST_SUITE("ledger") {
  TEST_CASE("every call of an entry point it stands before is counted, by the name the source uses") {
    const long before = wbx::calls("cuMemAlloc");
    CUdeviceptr p = 0;
    CHECK(cuMemAlloc(&p, 16) == CUDA_ERROR_STUB_LIBRARY);
    CHECK(cuMemAlloc(&p, 16) == CUDA_ERROR_STUB_LIBRARY);
    CHECK(wbx::calls("cuMemAlloc") == before + 2);
    CHECK(wbx::calls("cuMemAlloc_v2") == 0);
  }

  TEST_CASE("a FailCall fails the nth call only, without reaching the driver, and is disarmed at scope exit") {
    CUevent e = nullptr;
    {
      wbx::FailCall fail("cuEventCreate", CUDA_ERROR_OUT_OF_MEMORY, 2);
      CHECK(cuEventCreate(&e, 0) == CUDA_ERROR_STUB_LIBRARY);
      CHECK_FALSE(fail.fired());
      CHECK(cuEventCreate(&e, 0) == CUDA_ERROR_OUT_OF_MEMORY);
      CHECK(fail.fired());
      CHECK(cuEventCreate(&e, 0) == CUDA_ERROR_STUB_LIBRARY);
    }
    wbx::FailCall other("cuStreamCreate", CUDA_ERROR_INVALID_VALUE);
    CHECK(cuEventCreate(&e, 0) == CUDA_ERROR_STUB_LIBRARY);  // another entry point: untouched
  }

  TEST_CASE("a failed call holds nothing, and a difference names each kind") {
    const wbx::Holdings before = wbx::holdings();
    CUstream s = nullptr;
    CHECK(cuStreamCreate(&s, 0) == CUDA_ERROR_STUB_LIBRARY);
    CHECK(wbx::holdings().differenceFrom(before) == "");
    wbx::Holdings more = before;
    more.count[static_cast<int>(wbx::Held::Events)] += 2;
    more.count[static_cast<int>(wbx::Held::Streams)] -= 1;
    CHECK(more.differenceFrom(before) == "1 stream fewer, 2 events more");
  }
}

// Lesson 01's claims: what works before cuInit, what cuInit accepts, and what every device reports.
#include "support.hpp"

#include <cstring>
#include <set>
#include <string>

// Runs in its own process (ALONE_SUITES in lessons/CMakeLists.txt) so that nothing has called cuInit yet.
TEST_SUITE("before-init") {
  // The reference: before cuInit any call returns CUDA_ERROR_NOT_INITIALIZED; cuDriverGetVersion's
  // documented errors do not include it. That it answers before cuInit is what driver 580 did.
  TEST_CASE("before cuInit calls return CUDA_ERROR_NOT_INITIALIZED, cuInit(1) is rejected and changes nothing "
            "(and, observed on driver 580, cuDriverGetVersion answers)") {
    int before = 0;
    REQUIRE(cuDriverGetVersion(&before) == CUDA_SUCCESS);
    CHECK(before >= 12000);  // CUDA 12.0 is the oldest toolkit the course builds with

    int count = -1;
    CHECK(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(count == -1);
    CUdevice dev = -1;
    CHECK(cuDeviceGet(&dev, 0) == CUDA_ERROR_NOT_INITIALIZED);

    CHECK(cuInit(1) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED);  // the failed cuInit initialised nothing

    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    CHECK(cuDeviceGetCount(&count) == CUDA_SUCCESS);
    CHECK(count >= 1);
    int after = 0;
    CHECK(cuDriverGetVersion(&after) == CUDA_SUCCESS);
    CHECK(after == before);
    CHECK(cuInit(0) == CUDA_SUCCESS);  // a second cuInit(0) is harmless
  }
}

TEST_SUITE("devices") {
  TEST_CASE("every device has a name, a unique UUID, a compute capability, memory and multiprocessors") {
    const int count = wbt::initDriver();
    std::set<std::string> uuids;
    for (int i = 0; i < count; ++i) {
      CAPTURE(i);
      const CUdevice dev = wbt::device(i);
      char name[256] = {};
      CHECK(cuDeviceGetName(name, sizeof name, dev) == CUDA_SUCCESS);
      CHECK(std::strlen(name) > 0);
      CUuuid uuid = {};
      CHECK(cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS);
      const std::string bytes(uuid.bytes, sizeof uuid.bytes);
      CHECK(bytes != std::string(sizeof uuid.bytes, '\0'));
      uuids.insert(bytes);
      CHECK(wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) >= 7);  // sm_75 is the oldest built
      CHECK(wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) >= 0);
      CHECK(wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) > 0);
      size_t total = 0;
      CHECK(cuDeviceTotalMem(&total, dev) == CUDA_SUCCESS);
      CHECK(total > 0);
    }
    CHECK(uuids.size() == static_cast<size_t>(count));
  }

  // What the reference promises: unified addressing in every 64-bit process on these devices, and
  // concurrent managed access only where managed memory is there at all. Whether a device has
  // concurrent managed access depends on the platform (Tegra devices such as sm_87 do not), so it is
  // reported, not asserted.
  TEST_CASE("on 64-bit Linux every device has unified addressing; concurrent managed access implies managed memory") {
    const int count = wbt::initDriver();
    for (int i = 0; i < count; ++i) {
      CAPTURE(i);
      const CUdevice dev = wbt::device(i);
      CHECK(wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) == 1);
      const int managed = wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
      const int concurrent = wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
      CHECK((concurrent == 0 || managed == 1));
      MESSAGE("device " << i << ": managed memory " << managed << ", concurrent managed access " << concurrent
                        << ", can map host memory " << wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY));
    }
  }

  TEST_CASE("an ordinal past the last device, or a negative one, is CUDA_ERROR_INVALID_DEVICE") {
    const int count = wbt::initDriver();
    CUdevice dev = -1;
    CHECK(cuDeviceGet(&dev, count) == CUDA_ERROR_INVALID_DEVICE);
    CHECK(cuDeviceGet(&dev, -1) == CUDA_ERROR_INVALID_DEVICE);
    CHECK_THROWS_WITH_AS(CU_CHECK(cuDeviceGet(&dev, count)), doctest::Contains("CUDA_ERROR_INVALID_DEVICE (101)"),
                         wb::DriverError);
  }
}

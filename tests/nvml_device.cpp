// wb::nvml on a GPU machine (ctest common.nvml-device): its declarations match nvml.h where the
// machine has it, and NVML's answer for device 0's PCIe link is a link that exists (or a reason,
// and the case says it skipped).
#include <doctest/doctest.h>

#include "nvml.hpp"
#include "nvml_abi.hpp"
#include "support.hpp"

#include <cstddef>

#if __has_include(<nvml.h>)
#include <nvml.h>
// The course's hand-written declarations (common/nvml_abi.hpp) against NVIDIA's header.
static_assert(sizeof(wb::nvml::abi::PciInfo) == sizeof(nvmlPciInfo_t), "nvmlPciInfo_t");
static_assert(offsetof(wb::nvml::abi::PciInfo, domain) == offsetof(nvmlPciInfo_t, domain), "nvmlPciInfo_t.domain");
static_assert(offsetof(wb::nvml::abi::PciInfo, busId) == offsetof(nvmlPciInfo_t, busId), "nvmlPciInfo_t.busId");
static_assert(sizeof(wb::nvml::abi::FieldValue) == sizeof(nvmlFieldValue_t), "nvmlFieldValue_t");
static_assert(offsetof(wb::nvml::abi::FieldValue, valueType) == offsetof(nvmlFieldValue_t, valueType), "valueType");
static_assert(offsetof(wb::nvml::abi::FieldValue, nvmlReturn) == offsetof(nvmlFieldValue_t, nvmlReturn), "nvmlReturn");
static_assert(offsetof(wb::nvml::abi::FieldValue, value) == offsetof(nvmlFieldValue_t, value), "value");
static_assert(wb::nvml::abi::kFieldNvLinkSpeedCommon == NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON, "field id");
static_assert(wb::nvml::abi::kValueUnsignedInt == NVML_VALUE_TYPE_UNSIGNED_INT, "value type");
static_assert(wb::nvml::abi::kMaxNvLinks >= NVML_NVLINK_MAX_LINKS, "every link is asked about");
static_assert(wb::nvml::abi::kSuccess == NVML_SUCCESS, "NVML_SUCCESS");
#endif

TEST_SUITE("nvml-device") {
  TEST_CASE("nvml.h, where this machine has it, declares what common/nvml_abi.hpp declares") {
#if __has_include(<nvml.h>)
    CHECK(true);  // the static_asserts above compiled
#else
    wbt::skipCase("no nvml.h on this machine to compare the declarations with");
#endif
  }

  TEST_CASE("device 0's PCIe link is one that exists, or NVML says why not") {
    wbt::initDriver();
    char busId[32] = {0};
    CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, wbt::device(0)));
    std::string why;
    const auto link = wb::nvml::pcieLink(busId, why);
    if (!link) return wbt::skipCase("NVML did not say: " + why);
    MESSAGE(busId << ": " << link->describe());
    CHECK(link->nowGeneration >= 1);
    CHECK(link->nowGeneration <= link->generation);
    CHECK(link->nowWidth >= 1);
    CHECK(link->nowWidth <= link->width);
    CHECK(link->bytesPerSecond() > 0);
  }
}

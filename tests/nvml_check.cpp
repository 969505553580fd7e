// wb::nvml without a GPU (ctest common.nvml): the limit a link sets is arithmetic on its
// generation and width, and a machine without NVML gets a reason, never a number.
#include <doctest/doctest.h>

#include "nvml.hpp"

#include <dlfcn.h>

TEST_SUITE("nvml") {
  TEST_CASE("a PCIe link's limit per direction: GT/s per lane x lanes x encoding / 8") {
    wb::nvml::PcieLink gen5x16{5, 16, 5, 16};
    CHECK(gen5x16.bytesPerSecond() == doctest::Approx(32e9 * 16 * 128 / 130 / 8));
    CHECK(gen5x16.describe() == "PCIe Gen5 x16 (63.0 GB/s per direction after encoding)");
    wb::nvml::PcieLink gen3x8{3, 8, 1, 8};  // a Gen4 x16 card in a Gen3 x8 slot, at rest: the slot sets it
    CHECK(gen3x8.describe() == "PCIe Gen3 x8 (7.9 GB/s per direction after encoding), trained to Gen1 x8 when read");
    CHECK(gen3x8.bytesPerSecond() == doctest::Approx(8e9 * 8 * 128 / 130 / 8));
    wb::nvml::PcieLink gen2x16{2, 16, 2, 16};
    CHECK(gen2x16.bytesPerSecond() == doctest::Approx(5e9 * 16 * 0.8 / 8));
    wb::nvml::PcieLink unknown{9, 16, 9, 16};
    CHECK(unknown.bytesPerSecond() == 0);
    CHECK(unknown.describe() == "PCIe Gen9 x16");
  }

  TEST_CASE("NVLinks: links x the rate of one") {
    wb::nvml::NvLinks nv{18, 26.562e9};
    CHECK(nv.bytesPerSecond() == doctest::Approx(18 * 26.562e9));
    CHECK(nv.describe() == "18 NVLinks of 26.6 GB/s (478.1 GB/s per direction)");
  }

  TEST_CASE("without NVML the answer is a reason") {
    void* present = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (present) {
      dlclose(present);
      MESSAGE("this machine has NVML: the GPU test common.nvml-device asks it");
      return;
    }
    std::string why;
    CHECK_FALSE(wb::nvml::pcieLink("0000:00:00.0", why).has_value());
    CHECK(why.find("libnvidia-ml.so.1") != std::string::npos);
    why.clear();
    CHECK_FALSE(wb::nvml::nvlinksBetween("0000:00:00.0", "0000:00:01.0", why).has_value());
    CHECK(why.find("libnvidia-ml.so.1") != std::string::npos);
  }
}

// The kernel images were built, for the architectures asked for, and can be found from any working
// directory. Needs no driver: it reads the files the way the driver's loader would start to.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "image_reader.hpp"
#include "images.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<unsigned char> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class T>
T at(const std::vector<unsigned char>& bytes, std::size_t offset) {
  REQUIRE(offset + sizeof(T) <= bytes.size());
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

std::set<unsigned> builtArchs() {
  const auto archs = wb::builtArchitectures();
  return {archs.begin(), archs.end()};
}

constexpr std::uint16_t kEmCuda = 190;  // e_machine of NVIDIA CUDA ELF files

}  // namespace

TEST_SUITE("kernel-images") {
  TEST_CASE("the image folder is absolute, so lessons find it from any working directory") {
    CHECK(wb::kernelDir().front() == '/');
  }

  TEST_CASE("every kernel was built as a fatbin holding each architecture plus PTX of the highest") {
    const auto archs = builtArchs();
    REQUIRE_FALSE(archs.empty());
    for (const auto& kernel : split(WORKBOOK_KERNELS)) {
      CAPTURE(kernel);
      const auto fat = readFile(wb::kernelImage(kernel + ".fatbin"));
      REQUIRE(at<std::uint32_t>(fat, 0) == 0xBA55ED50u);  // the fatbin magic
      const auto headerSize = at<std::uint16_t>(fat, 6);
      const auto fatSize = at<std::uint64_t>(fat, 8);
      REQUIRE(headerSize + fatSize <= fat.size());

      // Each entry: kind (1 = PTX, 2 = ELF) at 0, its header size at 4, payload size at 8, arch at 28.
      std::set<unsigned> elfArchs, ptxArchs;
      for (std::size_t entry = headerSize; entry < headerSize + fatSize;) {
        const auto kind = at<std::uint16_t>(fat, entry);
        const auto entryHeader = at<std::uint32_t>(fat, entry + 4);
        const auto payload = at<std::uint64_t>(fat, entry + 8);
        const auto arch = at<std::uint32_t>(fat, entry + 28);
        REQUIRE((kind == 1 || kind == 2));
        (kind == 2 ? elfArchs : ptxArchs).insert(arch);
        entry += entryHeader + payload;
      }
      CHECK(elfArchs == archs);
      CHECK(ptxArchs == std::set<unsigned>{*archs.rbegin()});
    }
  }

  TEST_CASE("every kernel has one cubin per architecture, holding that architecture's machine code") {
    for (const auto& kernel : split(WORKBOOK_KERNELS)) {
      for (unsigned arch : builtArchs()) {
        CAPTURE(kernel);
        CAPTURE(arch);
        const auto elf = readFile(wb::kernelImage(kernel + ".sm_" + std::to_string(arch) + ".cubin"));
        REQUIRE(elf.size() > 64);
        CHECK(std::memcmp(elf.data(), "\x7f" "ELF", 4) == 0);
        CHECK(at<std::uint16_t>(elf, 18) == kEmCuda);
        CHECK(wb::cubinArchitecture(elf) == arch);
      }
    }
  }

  TEST_CASE("vector_ops has a cubin of another major version too, whatever WORKBOOK_CUDA_ARCHS names") {
    // Lessons 06 and 12 and exercise 12 load a cubin the device cannot run; a build for one
    // architecture (README step 2) gets one more for that (cmake/WorkbookKernels.cmake).
    std::set<unsigned> majors;
    for (unsigned arch : wb::cubinArchitectures()) {
      CAPTURE(arch);
      const auto elf = readFile(wb::kernelImage("vector_ops.sm_" + std::to_string(arch) + ".cubin"));
      REQUIRE(elf.size() > 64);
      CHECK(wb::cubinArchitecture(elf) == arch);
      majors.insert(arch / 10);
    }
    CHECK(majors.size() >= 2);
    for (unsigned arch : wb::builtArchitectures()) {
      const auto all = wb::cubinArchitectures();
      CHECK(std::find(all.begin(), all.end(), arch) != all.end());
    }
  }

  TEST_CASE("every kernel has PTX for the lowest architecture, with its extern \"C\" entry points") {
    const unsigned lowest = *builtArchs().begin();
    for (const auto& kernel : split(WORKBOOK_KERNELS)) {
      CAPTURE(kernel);
      const auto bytes = readFile(wb::kernelImage(kernel + ".ptx"));
      const std::string ptx(bytes.begin(), bytes.end());
      CHECK(ptx.find(".target sm_" + std::to_string(lowest)) != std::string::npos);
      CHECK(ptx.find(".visible .entry ") != std::string::npos);
      CHECK(ptx.find(".entry _Z") == std::string::npos);  // no C++-mangled entry point
    }
  }
}

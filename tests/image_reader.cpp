// The image reader (common/image_reader.hpp) against crafted files: each kind of damage is
// rejected with its own reason before any driver could see it, and the real images pass. Needs no
// driver and no GPU: it runs in CI.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "image_reader.hpp"
#include "images.hpp"
#include "scratch.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

std::vector<char> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes a crafted file into the scratch folder and returns its path.
std::string write(const wb::ScratchDir& dir, const std::string& name, const std::vector<char>& bytes) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::vector<char> head(const std::vector<char>& bytes, size_t n) { return {bytes.begin(), bytes.begin() + n}; }

std::vector<char> randomBytes(size_t n) {
  std::mt19937 gen(12345);
  std::vector<char> bytes(n);
  for (auto& b : bytes) b = static_cast<char>(gen() & 0xff);
  return bytes;
}

bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// The real images this build made, as file names.
std::vector<std::string> builtImages() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(wb::kernelDir())) {
    const std::string ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".fatbin" || ext == ".cubin" || ext == ".ptx"))
      files.push_back(e.path().filename());
  }
  return files;
}

}  // namespace

TEST_SUITE("image-reader") {
  TEST_CASE("every image the build made passes every check") {
    const auto files = builtImages();
    REQUIRE(files.size() >= 3);
    for (const auto& file : files) {
      CAPTURE(file);
      CHECK(wb::imageProblem(wb::kernelImage(file)) == "");
      CHECK(wb::verifiedImagePath(file) == wb::kernelImage(file));
      const auto bytes = wb::readVerifiedImage(file);
      if (wb::imageKindOf(file) == wb::ImageKind::Ptx) CHECK(bytes.back() == '\0');  // a C string for the driver
    }
  }

  TEST_CASE("each kind of damage is rejected with its own reason") {
    const wb::ScratchDir s;
    const auto fatbin = readFile(wb::kernelImage("vector_ops.fatbin"));
    const auto cubin = readFile(wb::kernelImage("vector_ops.sm_" + std::to_string(wb::builtArchitectures()[0]) + ".cubin"));
    const auto ptx = readFile(wb::kernelImage("vector_ops.ptx"));
    const std::string full = std::to_string(fatbin.size());

    std::vector<char> huge = fatbin;  // a header that claims a 1 TiB payload
    const std::uint64_t tib = std::uint64_t{1} << 40;
    std::memcpy(huge.data() + 8, &tib, sizeof tib);
    std::vector<char> longer = fatbin;
    longer.resize(fatbin.size() + 100, '\0');
    std::vector<char> noVersion(ptx);
    const std::string ptxText(ptx.begin(), ptx.end());
    const size_t at = ptxText.find(".version");
    REQUIRE(at != std::string::npos);
    noVersion[at + 1] = 'V';  // ".Version" is no directive
    std::filesystem::create_directory(s.path() + "/a-folder.fatbin");
    std::vector<char> elfThenRandom = randomBytes(cubin.size());
    std::memcpy(elfThenRandom.data(), "\x7f" "ELF\x07", 5);  // EI_CLASS 7: neither 32- nor 64-bit

    struct Crafted {
      std::string what, path, reason;  // reason: how the problem must start
    };
    const std::vector<Crafted> crafted = {
        {"an empty file", write(s, "empty.fatbin", {}), "empty (0 bytes)"},
        {"300 bytes of a real fatbin", write(s, "cut300.fatbin", head(fatbin, 300)),
         "cut short: header says " + full + " bytes, file has 300"},
        {"half of a real fatbin", write(s, "half.fatbin", head(fatbin, fatbin.size() / 2)),
         "cut short: header says " + full + " bytes, file has " + std::to_string(fatbin.size() / 2)},
        {"a fatbin header alone", write(s, "header.fatbin", head(fatbin, 10)), "cut short: a fatbin header is 16 bytes"},
        {"a header claiming 1 TiB", write(s, "huge.fatbin", huge),
         "cut short: header says " + std::to_string(tib + 16) + " bytes, file has " + full},
        {"a fatbin with bytes after its end", write(s, "longer.fatbin", longer), "longer than its header says"},
        {"random bytes named .fatbin", write(s, "random.fatbin", randomBytes(fatbin.size())), "not a fatbin: magic is"},
        {"zeros of the right size", write(s, "zeros.fatbin", std::vector<char>(fatbin.size(), '\0')),
         "not a fatbin: magic is 0x00000000"},
        {"a cubin cut to 300 bytes", write(s, "cut300.cubin", head(cubin, 300)),
         "cut short: the section header table ends at byte"},
        {"a cubin cut to its ELF magic", write(s, "magic.cubin", head(cubin, 40)), "cut short: an ELF header is 64 bytes"},
        {"random bytes after an ELF magic", write(s, "random.cubin", elfThenRandom), "not a 64-bit ELF"},
        {"zeros named .cubin", write(s, "zeros.cubin", std::vector<char>(cubin.size(), '\0')), "not a cubin"},
        // Cut at fixed places, not at a fraction: where half of the PTX ends depends on the kernels.
        {"PTX cut inside a kernel body", write(s, "inbody.ptx", head(ptx, ptxText.find('{') + 1)),
         "cut short or damaged: unbalanced braces"},
        {"PTX cut in the middle of a line", write(s, "midline.ptx", head(ptx, ptxText.find(".target") + 9)),
         "cut short: the last line"},
        {"binary bytes named .ptx", write(s, "random.ptx", randomBytes(500)), "not PTX text"},
        {"text with no .version", write(s, "noversion.ptx", noVersion), "not PTX: no .version directive"},
        {"a directory", s.path() + "/a-folder.fatbin", "a directory, not an image file"},
        {"a missing file", s.path() + "/missing.fatbin", "no such file"},
    };
    std::set<std::string> reasons;
    for (const auto& c : crafted) {
      CAPTURE(c.what);
      const std::string problem = wb::imageProblem(c.path);
      CAPTURE(problem);
      CHECK(startsWith(problem, c.reason));
      reasons.insert(problem);
    }
    CHECK(reasons.size() == crafted.size());  // no two kinds of damage share a message
  }

  TEST_CASE("a name that is no image kind is refused before the file is read") {
    CHECK_THROWS_AS(wb::imageKindOf("/tmp/vector_ops.so"), wb::ImageError);
  }

  TEST_CASE("the error names the file, the folder, where the folder came from and what to do") {
    const wb::ScratchDir s;
    write(s, "vector_ops.fatbin", head(readFile(wb::kernelImage("vector_ops.fatbin")), 300));
    REQUIRE(setenv("CUDA_WORKBOOK_KERNEL_DIR", s.path().c_str(), 1) == 0);
    for (const char* file : {"vector_ops.fatbin", "counters.fatbin"}) {
      CAPTURE(file);
      try {
        wb::verifiedImagePath(file);
        FAIL("a damaged or missing image was accepted");
      } catch (const wb::ImageError& e) {
        const std::string message = e.what();
        CAPTURE(message);
        CHECK(e.path() == s.path() + "/" + file);
        CHECK(message.find(s.path() + "/" + file + ": " + e.problem()) == 0);
        CHECK(message.find("comes from CUDA_WORKBOOK_KERNEL_DIR") != std::string::npos);
        CHECK(message.find("unset CUDA_WORKBOOK_KERNEL_DIR") != std::string::npos);
      }
    }
    CHECK_THROWS_AS(wb::readVerifiedImage("vector_ops.fatbin"), wb::ImageError);
    REQUIRE(unsetenv("CUDA_WORKBOOK_KERNEL_DIR") == 0);
    CHECK(wb::verifiedImagePath("vector_ops.fatbin") == wb::kernelImage("vector_ops.fatbin"));
  }

  TEST_CASE("a damaged image in the build's own folder says to rebuild") {
    REQUIRE(unsetenv("CUDA_WORKBOOK_KERNEL_DIR") == 0);
    try {
      wb::verifiedImagePath("no_such_kernel.fatbin");
      FAIL("a missing image was accepted");
    } catch (const wb::ImageError& e) {
      CHECK(e.problem() == "no such file");
      CHECK(std::string(e.what()).find("--target kernel-images") != std::string::npos);
    }
  }

  TEST_CASE("bytes in memory (an image compiled into a program) get the same checks") {
    const auto fatbin = readFile(wb::kernelImage("vector_ops.fatbin"));
    CHECK_NOTHROW(wb::verifyImageBytes(fatbin.data(), fatbin.size(), wb::ImageKind::Fatbin, "embedded"));
    CHECK_THROWS_AS(wb::verifyImageBytes(fatbin.data(), 300, wb::ImageKind::Fatbin, "embedded"), wb::ImageError);
  }

  TEST_CASE("a cubin names its architecture and the kernels it defines; a damaged one is refused, not read") {
    for (unsigned arch : wb::cubinArchitectures()) {
      CAPTURE(arch);
      const auto cubin = readFile(wb::kernelImage("vector_ops.sm_" + std::to_string(arch) + ".cubin"));
      CHECK(wb::cubinArchitecture(cubin) == arch);
      const std::vector<std::string> functions = wb::cubinFunctions(cubin);
      CHECK(std::set<std::string>(functions.begin(), functions.end()) == std::set<std::string>{"fill", "scale"});
      CHECK_THROWS_AS(wb::cubinArchitecture(head(cubin, 300)), std::invalid_argument);
      CHECK_THROWS_AS(wb::cubinFunctions(head(cubin, cubin.size() / 2)), std::invalid_argument);
    }
  }
}

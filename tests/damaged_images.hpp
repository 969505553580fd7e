// The check every lesson that loads kernel images must pass: pointed (CUDA_WORKBOOK_KERNEL_DIR) at
// an empty folder, or at copies of the images cut to 300 bytes or cut in half, the program stops
// within seconds with wb::kExitBadImage and a message naming the file, its folder and where the
// folder came from. Without the reader in common/image_reader.hpp the driver hangs or crashes on
// some of these (DESIGN.md, "Damaged images").
#pragma once

#include "process.hpp"
#include "scratch.hpp"
#include "support.hpp"

#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <iterator>

namespace wbt {

// Copies every image of the build's kernel folder into dir, keeping the first bytes of each that
// keep(size) says.
template <class Keep>
void copyImagesCut(const std::string& dir, Keep keep) {
  for (const auto& entry : std::filesystem::directory_iterator(wb::kernelDir())) {
    const std::string name = entry.path().filename();
    if (!entry.is_regular_file() || name.find(".CMake") != std::string::npos) continue;
    const std::string ext = entry.path().extension();
    if (ext != ".fatbin" && ext != ".cubin" && ext != ".ptx") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::ofstream(dir + "/" + name, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep(bytes.size())));
  }
}

inline void checkProgramRefusesDamagedImages(const std::string& program) {
  static constexpr unsigned kLimitSeconds = 20;
  struct Case {
    const char* what;
    size_t (*keep)(size_t);  // nullptr: an empty folder
    const char* problem;
  };
  const Case cases[] = {
      {"an empty folder", nullptr, "no such file"},
      {"images cut to 300 bytes", [](size_t n) { return n < 300 ? n : size_t{300}; }, "cut short"},
      {"images cut in half", [](size_t n) { return n / 2; }, "cut short"},
  };
  // The three runs are separate processes, started together rather than one after another.
  std::vector<std::unique_ptr<wb::ScratchDir>> dirs;
  std::vector<std::future<wb::ProcessEnd>> runs;
  for (const Case& c : cases) {
    dirs.push_back(std::make_unique<wb::ScratchDir>());
    const std::string dir = dirs.back()->path();
    if (c.keep) copyImagesCut(dir, c.keep);
    runs.push_back(std::async(std::launch::async, [program, dir] {
      return wb::runProcess({program}, {"CUDA_WORKBOOK_KERNEL_DIR=" + dir}, kLimitSeconds);
    }));
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const Case& c = cases[i];
    const std::string dir = dirs[i]->path();
    const wb::ProcessEnd end = runs[i].get();
    CAPTURE(c.what);
    CAPTURE(end.output);
    CHECK_MESSAGE(!end.timedOut, "still running after " << kLimitSeconds << " s: it hung");
    CHECK(end.signal == 0);
    CHECK(end.code == wb::kExitBadImage);
    CHECK(end.output.find(dir + "/") != std::string::npos);  // the file, by its full path
    CHECK(end.output.find(c.problem) != std::string::npos);
    CHECK(end.output.find("comes from CUDA_WORKBOOK_KERNEL_DIR") != std::string::npos);
  }
}

}  // namespace wbt

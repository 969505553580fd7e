// The checks of lesson 07's exercises (lessons/07-library-load/exercises.cpp). Launches a learner's
// kernel could be refused in are made here, with the CUresult asserted: a refusal is a failed check,
// not an exception out of the learner's code. A damaged image reaches the driver only in a child.
#include "check.hpp"
#include "scratch.hpp"
#include "07-library-load/exercises.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

// The fatbin compiled into this program (EMBED in the lesson's manifest entry).
extern const unsigned char vector_ops_fatbin[];
extern const std::size_t vector_ops_fatbin_size;

namespace {

// fill(out, 2, n) then scale(out, 3, 1, n) in the current context: what cuLaunchKernel answered
// (the first refusal), and how many of the n results are not 2 * 3 + 1.
struct Outcome {
  CUresult launch = CUDA_SUCCESS;
  size_t wrong = 0;
};

Outcome fillAndScale(CUfunction fill, CUfunction scale) {
  unsigned n = 100000;
  float value = 2, factor = 3, offset = 1;
  wbt::DeviceBuffer out(n * sizeof(float));
  CUdeviceptr p = out.get();
  void* fillArgs[] = {&p, &value, &n};
  void* scaleArgs[] = {&p, &factor, &offset, &n};
  const unsigned threads = 256, blocks = (n + threads - 1) / threads;
  Outcome o;
  o.launch = cuLaunchKernel(fill, blocks, 1, 1, threads, 1, 1, 0, nullptr, fillArgs, nullptr);
  if (o.launch == CUDA_SUCCESS)
    o.launch = cuLaunchKernel(scale, blocks, 1, 1, threads, 1, 1, 0, nullptr, scaleArgs, nullptr);
  CU_CHECK(cuCtxSynchronize());  // also when scale was refused: fill may still be writing out
  if (o.launch != CUDA_SUCCESS) return o;
  std::vector<float> back(n);
  CU_CHECK(cuMemcpyDtoH(back.data(), p, n * sizeof(float)));
  o.wrong = wb::mismatches(back, value * factor + offset);
  return o;
}

// The same with fill and scale found in a library, as CUkernels (launchable in any context).
Outcome fillAndScale(CUlibrary library) {
  CUkernel fill = nullptr, scale = nullptr;
  CU_CHECK(cuLibraryGetKernel(&fill, library, "fill"));
  CU_CHECK(cuLibraryGetKernel(&scale, library, "scale"));
  return fillAndScale(reinterpret_cast<CUfunction>(fill), reinterpret_cast<CUfunction>(scale));
}

bool primaryActive(CUdevice dev) {
  unsigned flags = 0;
  int active = 0;
  CU_CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
  return active != 0;
}

// A library the learner's function returned, unloaded at scope exit.
struct Unloaded {
  CUlibrary library;
  ~Unloaded() {
    if (library) cuLibraryUnload(library);
  }
};

// Writes the first keep bytes of the course's vector_ops.fatbin to path.
void writeFatbin(const std::string& path, size_t keep) {
  const std::vector<char> image = wb::readVerifiedImage("vector_ops.fatbin");
  std::ofstream out(path, std::ios::binary);
  out.write(image.data(), static_cast<std::streamsize>(std::min(keep, image.size())));
  REQUIRE(out.good());
}

// The child's work: the learner's function on an override cut to 300 bytes. Returns the exit code
// the parent reads: 10 fell back and computed right, 11 loaded the damaged file, 12 fell back and
// computed wrong (or a launch was refused), 13 returned no library.
int loadWithDamagedOverride() {
  wbt::initDriver();
  wb::ScratchDir dir;
  const std::string path = dir.path() + "/vector_ops.fatbin";
  writeFatbin(path, 300);
  const ex07::LoadedLibrary loaded = ex07::loadPreferringOverride(path, vector_ops_fatbin, vector_ops_fatbin_size);
  if (loaded.fromOverride) return 11;  // not unloaded: the driver holds a damaged image, the child ends now
  if (!loaded.library) return 13;
  Unloaded owner{loaded.library};
  wbt::OwnedContext later(wbt::device(0));
  const Outcome o = fillAndScale(loaded.library);
  return o.launch == CUDA_SUCCESS && o.wrong == 0 ? 10 : 12;
}

}  // namespace

EXERCISE("kernel-anywhere", "A kernel loaded once and launched in contexts created after the load",
         "Load with cuLibraryLoadFromFile in the constructor (no context needed) and unload with cuLibraryUnload in "
         "the destructor; in function(), cuLibraryGetKernel and return the CUkernel cast to CUfunction, which the "
         "driver resolves in the context current at each launch. Do not hand out cuKernelGetFunction's CUfunction: "
         "it belongs to the context that was current when you asked, and other contexts refuse it.") {
  TEST_CASE("constructed with no context current it makes none; fill and scale compute right in every device's primary context and in a context created after the load") {
    const int count = wbt::initDriver();
    const CUdevice dev0 = wbt::device(0);
    const bool retainedBefore = primaryActive(dev0);
    ex07::KernelSet set(wb::verifiedImagePath("vector_ops.fatbin"));
    CHECK_MESSAGE(wbt::current() == nullptr, "the constructor left a context current: loading a library needs none");
    CHECK_MESSAGE(primaryActive(dev0) == retainedBefore,
                  "the constructor retained device 0's primary context: loading a library needs no context");

    // Every primary context stays retained to the end, so a CUfunction handed out in one is still a
    // valid handle when another context refuses it (a destroyed context's handle would be undefined).
    std::vector<std::unique_ptr<wbt::RetainedPrimary>> primaries;
    for (int i = 0; i < count; ++i) primaries.push_back(std::make_unique<wbt::RetainedPrimary>(wbt::device(i)));
    for (int i = 0; i < count; ++i) {
      CAPTURE(i);
      wbt::Pushed current(primaries[static_cast<size_t>(i)]->get());
      const Outcome o = fillAndScale(set.function("fill"), set.function("scale"));
      const std::string launch = wb::errorName(o.launch);
      CAPTURE(launch);
      CHECK_MESSAGE(o.launch == CUDA_SUCCESS, "a primary context refused a function() from the KernelSet");
      CHECK(o.wrong == 0);
    }
    wbt::OwnedContext later(dev0);  // created after the load, and current
    const Outcome o = fillAndScale(set.function("fill"), set.function("scale"));
    const std::string launch = wb::errorName(o.launch);
    CAPTURE(launch);
    CHECK_MESSAGE(o.launch == CUDA_SUCCESS, "a context created after the load refused what function() returned: "
                                            "a CUfunction of another context?");
    CHECK(o.wrong == 0);
  }
}

EXERCISE("image-fallback", "Kernels from an override file when it is intact, else from the image built into the program",
         "Ask wb::imageProblem(overridePath) first: an empty answer means the file exists and is an intact fatbin, "
         "so cuLibraryLoadFromFile it; otherwise wb::verifyImageBytes(embedded, embeddedSize, wb::ImageKind::Fatbin, "
         "...) and cuLibraryLoadData. Falling back only when the driver returns an error is the trap: for a fatbin "
         "cut short, cuLibraryLoadFromFile returns CUDA_SUCCESS (it loads lazily) and the damage shows later.") {
  TEST_CASE("with no override file it loads the embedded image, makes no context current, and fill and scale compute right in a context created after the load") {
    wbt::initDriver();
    wb::ScratchDir dir;
    const std::string path = dir.path() + "/vector_ops.fatbin";  // no such file
    const ex07::LoadedLibrary loaded = ex07::loadPreferringOverride(path, vector_ops_fatbin, vector_ops_fatbin_size);
    Unloaded owner{loaded.library};
    CHECK_MESSAGE(wbt::current() == nullptr, "loading left a context current: a library needs none");
    CHECK_MESSAGE(!loaded.fromOverride, "there is no override file, yet fromOverride says it was loaded");
    REQUIRE_MESSAGE(loaded.library != nullptr, "no library returned");
    wbt::OwnedContext later(wbt::device(0));
    const Outcome o = fillAndScale(loaded.library);
    CHECK(o.launch == CUDA_SUCCESS);
    CHECK(o.wrong == 0);
  }

  TEST_CASE("an intact override file is loaded in place of the embedded image") {
    wbt::initDriver();
    wb::ScratchDir dir;
    const std::string path = dir.path() + "/vector_ops.fatbin";
    writeFatbin(path, static_cast<size_t>(-1));
    const ex07::LoadedLibrary loaded = ex07::loadPreferringOverride(path, vector_ops_fatbin, vector_ops_fatbin_size);
    Unloaded owner{loaded.library};
    CHECK_MESSAGE(loaded.fromOverride, "an intact fatbin at overridePath was not the one loaded");
    CHECK(wbt::current() == nullptr);
    REQUIRE_MESSAGE(loaded.library != nullptr, "no library returned");
    wbt::OwnedContext later(wbt::device(0));
    const Outcome o = fillAndScale(loaded.library);
    CHECK(o.launch == CUDA_SUCCESS);
    CHECK(o.wrong == 0);
  }

  // The driver may accept, crash on or hang on a damaged image (lesson 06's table), so the learner's
  // function meets one only in a child, ended after 10 seconds (a right answer takes well under one).
  TEST_CASE("an override file cut to 300 bytes is never loaded: the embedded image is, and computes right") {
    const wbx::ChildResult end = wbx::runInChild("child: loadPreferringOverride with an override cut to 300 bytes", 10);
    INFO("the child " << (end.timedOut ? "hung" : end.crashed ? "crashed" : "exited with " + std::to_string(end.code))
                      << "; its output:\n"
                      << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK_FALSE(end.crashed);
    CHECK_MESSAGE(end.code != 11,
                  "the damaged override was loaded (fromOverride): the driver took it, so ask the reader first");
    CHECK_MESSAGE(end.code != 13, "no library returned for a damaged override: fall back to the embedded image");
    CHECK(end.code == 10);
  }

  TEST_CASE("child: loadPreferringOverride with an override cut to 300 bytes" * doctest::skip(!wbt::inChild())) {
    const int code = loadWithDamagedOverride();  // wb::NotDone and other exceptions end the case as usual
    if (code == 11) std::_Exit(code);  // the driver holds a damaged image: skip its teardown
    std::exit(code);
  }
}

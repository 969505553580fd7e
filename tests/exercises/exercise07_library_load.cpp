// The checks of lesson 07's exercises (lessons/07-library-load/exercises.cpp). Launches a learner's
// kernel could be refused in are made here, with the CUresult asserted: a refusal is a failed check,
// not an exception out of the learner's code. A damaged image reaches the driver only in a child.
// Each case's name begins with the requirements it verifies.
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

// The child's work: the learner's function on an override of the first keep bytes of the fatbin
// (300: cut short; 0: an empty file). Returns the exit code the parent reads: 10 fell back and
// computed right, 11 loaded the damaged file, 12 fell back and computed wrong (or a launch was
// refused), 13 returned no library, 14 held more than the library.
int loadWithDamagedOverride(size_t keep) {
  wbt::initDriver();
  wb::ScratchDir dir;
  const std::string path = dir.path() + "/vector_ops.fatbin";
  writeFatbin(path, keep);
  const wbx::Holdings before = wbx::holdings();
  const ex07::LoadedLibrary loaded = ex07::loadPreferringOverride(path, vector_ops_fatbin, vector_ops_fatbin_size);
  if (loaded.fromOverride) return 11;  // not unloaded: the driver holds a damaged image, the child ends now
  if (!loaded.library) return 13;
  Unloaded owner{loaded.library};
  if (wbx::holdings().differenceFrom(before) != "1 library more" || wbt::current() != nullptr) return 14;
  wbt::OwnedContext later(wbt::device(0));
  const Outcome o = fillAndScale(loaded.library);
  return o.launch == CUDA_SUCCESS && o.wrong == 0 ? 10 : 12;
}

}  // namespace

EXERCISE("kernel-anywhere", "A kernel loaded once and launched in contexts created after the load",
         "Load with cuLibraryLoadFromFile in the constructor (no context needed; touch no context) and unload with "
         "cuLibraryUnload in the destructor; in function(), cuLibraryGetKernel and return the CUkernel cast to "
         "CUfunction, which the driver resolves in the context current at each launch. Do not hand out "
         "cuKernelGetFunction's CUfunction, cached or not: it belongs to the context that was current when you "
         "asked, and other contexts refuse it.") {
  TEST_CASE("R1 R2 R3: the constructor needs no context, makes, retains and leaves none, and holds one library until the destructor") {
    wbt::initDriver();
    const CUdevice dev0 = wbt::device(0);
    const std::string path = wb::verifiedImagePath("vector_ops.fatbin");
    REQUIRE(wbt::current() == nullptr);
    const bool activeBefore = primaryActive(dev0);
    const wbx::Holdings before = wbx::holdings();
    std::string heldAfterConstruction;
    bool noneCurrent = false, primaryUntouched = false;
    {
      ex07::KernelSet set(path);
      heldAfterConstruction = wbx::holdings().differenceFrom(before);
      noneCurrent = wbt::current() == nullptr;
      primaryUntouched = primaryActive(dev0) == activeBefore;
    }
    const std::string heldAfterDestruction = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(noneCurrent, "the constructor left a context current: loading a library needs none");
    CHECK_MESSAGE(primaryUntouched, "the constructor retained device 0's primary context: loading a library needs no context");
    CHECK_MESSAGE(heldAfterConstruction == "1 library more", "the constructor should hold the one library, and nothing else");
    CHECK_MESSAGE(heldAfterDestruction == "", "the destructor did not give back what the constructor took");

    wbt::OwnedContext caller(dev0);  // current: the constructor must leave it so
    const std::vector<CUcontext> stack = wbx::contextStack();
    std::vector<CUcontext> stackAfter;
    {
      ex07::KernelSet set(path);
      stackAfter = wbx::contextStack();
    }
    CHECK_MESSAGE(stackAfter == stack, "constructed with a context current, the constructor changed the thread's context stack");
    CHECK(wbx::contextStack() == stack);
  }

  TEST_CASE("R4: what function() returns, asked with no context or in any primary context, launches in every device's primary context and in a context created after the load") {
    const int count = wbt::initDriver();
    const CUdevice dev0 = wbt::device(0);
    ex07::KernelSet set(wb::verifiedImagePath("vector_ops.fatbin"));  // no context current

    // Every context stays alive to the end, so a CUfunction handed out in one is still a valid
    // handle when another context refuses it (a destroyed context's handle would be undefined).
    std::vector<std::unique_ptr<wbt::RetainedPrimary>> primaries;
    for (int i = 0; i < count; ++i) primaries.push_back(std::make_unique<wbt::RetainedPrimary>(wbt::device(i)));
    struct Asked {
      std::string where;
      CUfunction fill, scale;
    };
    std::vector<Asked> asked;
    asked.push_back({"with no context current", set.function("fill"), set.function("scale")});
    for (int i = 0; i < count; ++i) {
      wbt::Pushed current(primaries[static_cast<size_t>(i)]->get());
      asked.push_back({"in device " + std::to_string(i) + "'s primary context", set.function("fill"), set.function("scale")});
    }
    wbt::OwnedContext later(dev0);  // created after the load and after every request above
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
    struct Place {
      std::string name;
      CUcontext ctx;
    };
    std::vector<Place> places;
    for (int i = 0; i < count; ++i)
      places.push_back({"device " + std::to_string(i) + "'s primary context", primaries[static_cast<size_t>(i)]->get()});
    places.push_back({"a context created after the load", later.get()});
    for (const Place& place : places) {
      wbt::Pushed current(place.ctx);
      for (const Asked& a : asked) {
        const Outcome o = fillAndScale(a.fill, a.scale);
        const std::string launch = wb::errorName(o.launch), launchedIn = place.name, askedFor = a.where;
        CAPTURE(askedFor);
        CAPTURE(launchedIn);
        CAPTURE(launch);
        CHECK_MESSAGE(o.launch == CUDA_SUCCESS, "a context refused what function() returned: a CUfunction of another context?");
        CHECK(o.wrong == 0);
      }
    }
    wbt::Pushed current(later.get());  // and asked for in the context created after the load, launched there
    const Outcome o = fillAndScale(set.function("fill"), set.function("scale"));
    CHECK(o.launch == CUDA_SUCCESS);
    CHECK(o.wrong == 0);
  }
}

EXERCISE("image-fallback", "Kernels from an override file when it is intact, else from the image built into the program",
         "Ask wb::imageProblem(overridePath) first (it takes any path): an empty answer means the file exists and "
         "is an intact fatbin, so cuLibraryLoadFromFile it; otherwise wb::verifyImageBytes(embedded, embeddedSize, "
         "wb::ImageKind::Fatbin, ...) and cuLibraryLoadData. Falling back only when the driver returns an error is "
         "the trap: for a fatbin cut short, cuLibraryLoadFromFile returns CUDA_SUCCESS (it loads lazily) and the "
         "damage shows later. Neither load needs a context: touch none.") {
  TEST_CASE("R2 R4: with no override file it loads the embedded image, holds the library and nothing else, makes no context current, and fill and scale compute right in a context created after the load") {
    wbt::initDriver();
    wb::ScratchDir dir;
    const std::string path = dir.path() + "/vector_ops.fatbin";  // no such file
    const wbx::Holdings before = wbx::holdings();
    const ex07::LoadedLibrary loaded = ex07::loadPreferringOverride(path, vector_ops_fatbin, vector_ops_fatbin_size);
    Unloaded owner{loaded.library};
    const std::string held = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(wbt::current() == nullptr, "loading left a context current: a library needs none");
    CHECK_MESSAGE(!loaded.fromOverride, "there is no override file, yet fromOverride says it was loaded");
    CHECK_MESSAGE(held == "1 library more", "the call should hold the library it returns, and nothing else");
    REQUIRE_MESSAGE(loaded.library != nullptr, "no library returned");
    wbt::OwnedContext later(wbt::device(0));
    const Outcome o = fillAndScale(loaded.library);
    CHECK(o.launch == CUDA_SUCCESS);
    CHECK(o.wrong == 0);
  }

  TEST_CASE("R1 R4: an intact override file is loaded in place of the embedded image, holding the library and nothing else") {
    wbt::initDriver();
    wb::ScratchDir dir;
    const std::string path = dir.path() + "/vector_ops.fatbin";
    writeFatbin(path, static_cast<size_t>(-1));
    const wbx::Holdings before = wbx::holdings();
    const ex07::LoadedLibrary loaded = ex07::loadPreferringOverride(path, vector_ops_fatbin, vector_ops_fatbin_size);
    Unloaded owner{loaded.library};
    const std::string held = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(loaded.fromOverride, "an intact fatbin at overridePath was not the one loaded");
    CHECK(wbt::current() == nullptr);
    CHECK(held == "1 library more");
    REQUIRE_MESSAGE(loaded.library != nullptr, "no library returned");
    wbt::OwnedContext later(wbt::device(0));
    const Outcome o = fillAndScale(loaded.library);
    CHECK(o.launch == CUDA_SUCCESS);
    CHECK(o.wrong == 0);
  }

  TEST_CASE("R2 R4: called with a context current, it leaves the thread's context stack as it was, and the library computes there") {
    wbt::initDriver();
    wb::ScratchDir dir;
    const std::string path = dir.path() + "/vector_ops.fatbin";  // no such file
    wbt::OwnedContext caller(wbt::device(0));                      // current
    const std::vector<CUcontext> stack = wbx::contextStack();
    const wbx::Holdings before = wbx::holdings();
    const ex07::LoadedLibrary loaded = ex07::loadPreferringOverride(path, vector_ops_fatbin, vector_ops_fatbin_size);
    Unloaded owner{loaded.library};
    const std::string held = wbx::holdings().differenceFrom(before);
    const std::vector<CUcontext> stackAfter = wbx::contextStack();
    CHECK_MESSAGE(stackAfter == stack, "the caller's context stack changed: the caller's context is no longer current");
    CHECK(!loaded.fromOverride);
    CHECK(held == "1 library more");
    REQUIRE(loaded.library != nullptr);
    wbt::Pushed in(caller.get());  // whatever the call did to the stack, launch in the caller's context
    const Outcome o = fillAndScale(loaded.library);
    CHECK(o.launch == CUDA_SUCCESS);
    CHECK(o.wrong == 0);
  }

  // The driver may accept, crash on or hang on a damaged image (lesson 06's table), so the learner's
  // function meets one only in a child, ended after 10 seconds (a right answer takes well under one).
  TEST_CASE("R2 R4: an override file cut to 300 bytes is never loaded: the embedded image is, and computes right") {
    const wbx::ChildResult end = wbx::runInChild("child: loadPreferringOverride with an override cut to 300 bytes", 10);
    INFO("the child " << (end.timedOut ? "hung" : end.crashed ? "crashed" : "exited with " + std::to_string(end.code))
                      << "; its output:\n"
                      << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK_FALSE(end.crashed);
    CHECK_MESSAGE(end.code != 11,
                  "the damaged override was loaded (fromOverride): the driver took it, so ask the reader first");
    CHECK_MESSAGE(end.code != 13, "no library returned for a damaged override: fall back to the embedded image");
    CHECK_MESSAGE(end.code != 14, "the fallback held more than the library it returned, or left a context current");
    CHECK(end.code == 10);
  }

  TEST_CASE("child: loadPreferringOverride with an override cut to 300 bytes" * doctest::skip(!wbt::inChild())) {
    const int code = loadWithDamagedOverride(300);  // wb::NotDone and other exceptions end the case as usual
    if (code == 11) std::_Exit(code);  // the driver holds a damaged image: skip its teardown
    std::exit(code);
  }

  // An empty file is the other damage the task names: what the driver does with one is not the
  // check's business, so it too meets the learner's function only in a child.
  TEST_CASE("R2 R4: an empty override file is never loaded: the embedded image is, and computes right") {
    const wbx::ChildResult end = wbx::runInChild("child: loadPreferringOverride with an empty override", 10);
    INFO("the child " << (end.timedOut ? "hung" : end.crashed ? "crashed" : "exited with " + std::to_string(end.code))
                      << "; its output:\n"
                      << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK_FALSE(end.crashed);
    CHECK_MESSAGE(end.code != 11, "the empty override was loaded (fromOverride): ask the reader first");
    CHECK_MESSAGE(end.code != 13, "no library returned for an empty override: fall back to the embedded image");
    CHECK_MESSAGE(end.code != 14, "the fallback held more than the library it returned, or left a context current");
    CHECK(end.code == 10);
  }

  TEST_CASE("child: loadPreferringOverride with an empty override" * doctest::skip(!wbt::inChild())) {
    const int code = loadWithDamagedOverride(0);  // wb::NotDone and other exceptions end the case as usual
    if (code == 11) std::_Exit(code);  // the driver holds a damaged image: skip its teardown
    std::exit(code);
  }

  // The embedded bytes are whole; only the size says 300. So a learner who skips the check hands the
  // driver an intact image, and the mistake shows as a load where a throw belongs, in this process.
  TEST_CASE("R3: an embedded image that does not pass the reader is never loaded: wb::ImageError, and nothing held") {
    wbt::initDriver();
    wb::ScratchDir dir;
    const std::string path = dir.path() + "/vector_ops.fatbin";  // no such file
    const wbx::Holdings before = wbx::holdings();
    bool imageError = false;
    std::string held, other;
    try {
      const ex07::LoadedLibrary loaded = ex07::loadPreferringOverride(path, vector_ops_fatbin, 300);
      held = wbx::holdings().differenceFrom(before);
      if (loaded.library) cuLibraryUnload(loaded.library);
    } catch (const wb::ImageError&) {
      imageError = true;
      held = wbx::holdings().differenceFrom(before);
    } catch (const wb::NotDone&) {
      throw;  // the starting body: reported as not done
    } catch (const std::exception& e) {
      other = e.what();
      held = wbx::holdings().differenceFrom(before);
    }
    CAPTURE(other);
    CHECK_MESSAGE(imageError, "an embedded image said to be 300 bytes long was not refused with wb::ImageError");
    CHECK_MESSAGE(held == "", "something was loaded or held for an embedded image that does not pass the reader");
  }
}

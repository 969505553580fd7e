// The checks of lesson 06's exercises (lessons/06-module-load/exercises.cpp). Every image comes
// from the course's checked reader; no function is ever launched outside its own context.
#include "check.hpp"
#include "06-module-load/exercises.hpp"

#include <string>
#include <vector>

namespace {

// The primary context of device 0, current for the test.
struct Primary {
  wbt::RetainedPrimary retained{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{retained.get()};
};

// Unloads what a load under test returned, if it says it loaded.
struct Unload {
  const ex06::PtxLoad& loaded;
  ~Unload() {
    if (loaded.result == CUDA_SUCCESS && loaded.module) cuModuleUnload(loaded.module);
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// fill then scale in the current context: every element should be 2 * 3 + 1.
bool computes(CUfunction fill, CUfunction scale) {
  return wb::mismatches(wb::fillAndScale(fill, scale, 4096, 2.0f, 3.0f, 1.0f), 7.0f) == 0;
}

// Loads the image file into the current context and runs fill and scale from it: the image runs here.
bool runs(const std::string& file) {
  CUmodule module = nullptr;
  if (cuModuleLoad(&module, wb::verifiedImagePath(file).c_str()) != CUDA_SUCCESS) return false;
  CUfunction fill = nullptr, scale = nullptr;
  const bool found = cuModuleGetFunction(&fill, module, "fill") == CUDA_SUCCESS &&
                     cuModuleGetFunction(&scale, module, "scale") == CUDA_SUCCESS;
  bool right = false;
  try {
    right = found && computes(fill, scale);
  } catch (const wb::DriverError&) {
    right = false;  // reported as "does not run"; the module is unloaded all the same
  }
  cuModuleUnload(module);
  return right;
}

ex06::Image cubin(unsigned arch) { return {"k.sm_" + std::to_string(arch) + ".cubin", arch, false}; }
ex06::Image ptx(unsigned arch) { return {"k.compute_" + std::to_string(arch) + ".ptx", arch, true}; }

const char* const kBroken = ".version 7.0\n.target sm_75\n.address_size 64\n"
                            ".visible .entry broken() { this_is_not_an_instruction; }\n";
const char* const kAlsoBroken = ".version 7.0\n.target sm_75\n.address_size 64\n"
                                ".visible .entry broken() { neither_is_this_one; }\n";

}  // namespace

EXERCISE("jit-log", "Loading PTX with the JIT's error log returned to the caller",
         "A char buffer (zeroed) and its size as two options of cuModuleLoadDataEx: CU_JIT_ERROR_LOG_BUFFER with "
         "the buffer, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES with reinterpret_cast<void*>(size). The log is the C "
         "string in the buffer, not the whole buffer; the CUresult's description (wb::errorDescription) is not "
         "the JIT's log.") {
  TEST_CASE("PTX with a mistake: CUDA_ERROR_INVALID_PTX, no module, and a log of its own that names the mistake") {
    Primary ctx;
    const ex06::PtxLoad first = ex06::loadPtx(kBroken);
    Unload unloadFirst{first};
    const ex06::PtxLoad second = ex06::loadPtx(kAlsoBroken);
    Unload unloadSecond{second};
    INFO("the first log: " << first.errorLog);
    CHECK(first.result == CUDA_ERROR_INVALID_PTX);
    CHECK(first.module == nullptr);
    CHECK_MESSAGE(contains(first.errorLog, "this_is_not_an_instruction"), "the log does not name the bad instruction: is it the JIT's log?");
    CHECK_MESSAGE(!contains(first.errorLog, std::string(1, '\0')), "the log holds NUL bytes: it is the whole buffer, not the text the JIT wrote");
    CHECK(second.result == CUDA_ERROR_INVALID_PTX);
    CHECK(second.module == nullptr);
    CHECK(contains(second.errorLog, "neither_is_this_one"));
    CHECK_MESSAGE(!contains(second.errorLog, "this_is_not_an_instruction"), "the second load's log still holds the first load's errors");
  }

  TEST_CASE("PTX without a mistake: the module is in the current context, its kernels compute, and the log is empty") {
    Primary ctx;
    const std::vector<char> image = wb::readVerifiedImage("vector_ops.ptx");  // checked, NUL-terminated
    const ex06::PtxLoad loaded = ex06::loadPtx(std::string(image.data()));
    Unload unload{loaded};
    REQUIRE(loaded.result == CUDA_SUCCESS);
    REQUIRE(loaded.module != nullptr);
    CHECK(loaded.errorLog.empty());
    CUfunction fill = nullptr, scale = nullptr;
    CU_CHECK(cuModuleGetFunction(&fill, loaded.module, "fill"));
    CU_CHECK(cuModuleGetFunction(&scale, loaded.module, "scale"));
    CHECK(computes(fill, scale));
  }
}

EXERCISE("module-cache", "A kernel cache that loads a module once per context",
         "cuCtxGetCurrent, then look the context up in a std::map<CUcontext, CUmodule>; if it is not there, "
         "cuModuleLoadData(&module, image_.data()) and remember it; then cuModuleGetFunction. One module for every "
         "context is the mistake: its functions launch only in the context it was loaded in. Unload each module "
         "with cuCtxPushCurrent(its context) ... cuCtxPopCurrent.") {
  TEST_CASE("the primary context and a context of the check's own each get a module of their own, loaded once, whose kernels compute there") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    wbt::RetainedPrimary primary(dev);
    wbt::OwnedContext own(dev);
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));  // nothing current: each step below pushes the context it uses
    ex06::ModuleCache cache("vector_ops.fatbin");  // declared after the contexts: goes before them
    CUfunction fillPrimary = nullptr, scalePrimary = nullptr, fillOwn = nullptr, scaleOwn = nullptr;
    {
      wbt::Pushed in(primary.get());
      fillPrimary = cache.function("fill");
      scalePrimary = cache.function("scale");
    }
    {
      wbt::Pushed in(own.get());
      fillOwn = cache.function("fill");
      scaleOwn = cache.function("scale");
    }
    {
      wbt::Pushed in(primary.get());
      cache.function("fill");  // asked again: the module is there already
    }
    const size_t loaded = cache.modules();
    CAPTURE(loaded);
    CHECK_MESSAGE(loaded == 2, "two contexts asked, so two modules: one each, each loaded once");
    REQUIRE_MESSAGE(fillOwn != fillPrimary, "the second context got the first context's function: it cannot launch there");
    {
      wbt::Pushed in(primary.get());
      CHECK_MESSAGE(computes(fillPrimary, scalePrimary), "the primary context's kernels gave wrong values");
    }
    {
      wbt::Pushed in(own.get());
      CHECK_MESSAGE(computes(fillOwn, scaleOwn), "the own context's kernels gave wrong values");
    }
  }
}

EXERCISE("image-choice", "Choosing the image a device can run from per-architecture cubins and PTX",
         "A cubin runs when image.arch / 10 == deviceArch / 10 and image.arch % 10 <= deviceArch % 10; PTX runs "
         "when image.arch <= deviceArch. Best: the highest-arch cubin that runs, else the highest-arch PTX that "
         "runs, else nullptr. A newer GPU runs older PTX, but not a cubin of an older major version.") {
  TEST_CASE("devices from 7.5 to 12.0: the newest runnable cubin, else the newest runnable PTX, else none") {
    struct Case {
      unsigned device;
      std::vector<ex06::Image> images;
      std::string expected;  // the file, or "" for none
    };
    const std::vector<Case> cases = {
        {90, {cubin(75), cubin(80), cubin(86), cubin(89), cubin(90), ptx(75)}, "k.sm_90.cubin"},
        {89, {cubin(90), cubin(80), ptx(75), cubin(86)}, "k.sm_86.cubin"},
        {86, {cubin(89), ptx(80), cubin(80)}, "k.sm_80.cubin"},
        {90, {cubin(75), cubin(80), cubin(86), ptx(75)}, "k.compute_75.ptx"},
        {100, {cubin(90), ptx(90)}, "k.compute_90.ptx"},
        {120, {ptx(90), cubin(100)}, "k.compute_90.ptx"},
        {90, {ptx(75), ptx(86)}, "k.compute_86.ptx"},
        {89, {ptx(89), cubin(80)}, "k.sm_80.cubin"},
        {75, {cubin(80), ptx(80)}, ""},
    };
    std::vector<std::string> chosen;
    for (const Case& c : cases) {
      const ex06::Image* image = ex06::chooseImage(c.device, c.images);
      chosen.push_back(image ? image->file : "");
    }
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::string& got = chosen[i];
      const std::string& expected = cases[i].expected;
      const unsigned device = cases[i].device;
      CAPTURE(device);
      CAPTURE(got);
      CHECK(got == expected);
    }
  }

  TEST_CASE("from this build's images: the choice for this GPU, and the choice without its major version's cubins, load and compute") {
    Primary ctx;
    const CUdevice dev = wbt::device(0);
    const unsigned own = 10 * wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
                         wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    const std::vector<unsigned> built = wb::builtArchitectures();  // lowest first; vector_ops.ptx is for the lowest
    std::vector<ex06::Image> all, otherMajors;
    for (unsigned arch : built) {
      const ex06::Image image{"vector_ops.sm_" + std::to_string(arch) + ".cubin", arch, false};
      all.push_back(image);
      if (arch / 10 != own / 10) otherMajors.push_back(image);
    }
    all.push_back({"vector_ops.ptx", built.front(), true});
    otherMajors.push_back(all.back());
    const ex06::Image* best = ex06::chooseImage(own, all);
    const ex06::Image* fallback = ex06::chooseImage(own, otherMajors);
    CAPTURE(own);
    REQUIRE_MESSAGE(best != nullptr, "nothing chosen, though the PTX runs on every device this build supports");
    REQUIRE_MESSAGE(fallback != nullptr, "nothing chosen, though the PTX runs on every device this build supports");
    const std::string bestFile = best->file, fallbackFile = fallback->file;
    CAPTURE(bestFile);
    CAPTURE(fallbackFile);
    CHECK_MESSAGE(fallback->ptx, "without a cubin of this GPU's major version only the PTX can run");
    CHECK_MESSAGE(runs(bestFile), "the image chosen for this GPU does not load or compute here");
    CHECK_MESSAGE(runs(fallbackFile), "the image chosen without this GPU's major version does not load or compute here");
  }
}

// The checks of lesson 06's exercises (lessons/06-module-load/exercises.cpp). Every image comes
// from the course's checked reader. A function is launched only where the check wants to know
// whether its context takes it, and a refusal there is a failed check, not an exception. Each
// case's name begins with the requirements it verifies.
#include "check.hpp"
#include "scratch.hpp"
#include "06-module-load/exercises.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

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

// The same, as a sentence for the check: "" when the values are right, else what went wrong (a
// refused launch included).
std::string outcome(CUfunction fill, CUfunction scale) {
  try {
    return computes(fill, scale) ? "" : "wrong values";
  } catch (const wb::DriverError& e) {
    return e.what();
  }
}

// Loads the image file into the current context and runs fill and scale from it: the image runs here.
bool runs(const std::string& file) {
  CUmodule module = nullptr;
  if (cuModuleLoad(&module, wb::verifiedImagePath(file).c_str()) != CUDA_SUCCESS) return false;
  CUfunction fill = nullptr, scale = nullptr;
  const bool found = cuModuleGetFunction(&fill, module, "fill") == CUDA_SUCCESS &&
                     cuModuleGetFunction(&scale, module, "scale") == CUDA_SUCCESS;
  const bool right = found && outcome(fill, scale).empty();
  cuModuleUnload(module);
  return right;
}

// What function() threw: CUDA_SUCCESS when it returned, the code of a DriverError, or
// CUDA_ERROR_UNKNOWN for an exception of another kind.
CUresult thrownBy(ex06::ModuleCache& cache, const char* name) {
  try {
    cache.function(name);
    return CUDA_SUCCESS;
  } catch (const wb::DriverError& e) {
    return e.code();
  } catch (const wb::NotDone&) {
    throw;  // the starting body: reported as not done
  } catch (const std::exception&) {
    return CUDA_ERROR_UNKNOWN;
  }
}

// CUDA_WORKBOOK_KERNEL_DIR pointed at a folder of the check's own for a scope, and put back after.
class KernelDirOverride {
 public:
  explicit KernelDirOverride(const std::string& dir) {
    if (const char* old = std::getenv("CUDA_WORKBOOK_KERNEL_DIR")) had_ = true, old_ = old;
    setenv("CUDA_WORKBOOK_KERNEL_DIR", dir.c_str(), 1);
  }
  ~KernelDirOverride() {
    if (had_)
      setenv("CUDA_WORKBOOK_KERNEL_DIR", old_.c_str(), 1);
    else
      unsetenv("CUDA_WORKBOOK_KERNEL_DIR");
  }
  KernelDirOverride(const KernelDirOverride&) = delete;
  KernelDirOverride& operator=(const KernelDirOverride&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

ex06::Image cubin(unsigned arch) { return {"k.sm_" + std::to_string(arch) + ".cubin", arch, false}; }
ex06::Image ptx(unsigned arch) { return {"k.compute_" + std::to_string(arch) + ".ptx", arch, true}; }

// Whether image is the address of one of the elements of images (nullptr is not).
bool pointsInto(const std::vector<ex06::Image>& images, const ex06::Image* image) {
  for (const ex06::Image& element : images)
    if (&element == image) return true;
  return false;
}

std::string brokenPtx(const std::string& instruction) {
  return ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry broken() { " + instruction + "; }\n";
}

const std::string kShortName = "this_is_not_an_instruction";
// 120 characters: its log is longer than the short one's by far more than the name's tail.
const std::string kLongName = [] {
  const std::string start = "this_made_up_instruction_has_a_name_of_one_hundred_and_twenty_characters_";
  return start + std::string(120 - start.size(), 'x');
}();

}  // namespace

EXERCISE("jit-log", "Loading PTX with the JIT's error log returned to the caller",
         "A char buffer (zeroed) and its size as two options of cuModuleLoadDataEx: CU_JIT_ERROR_LOG_BUFFER with "
         "the buffer, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES with reinterpret_cast<void*>(size). Build both arrays on "
         "every call: the driver writes the size it used back into the size slot. The log is the C string in the "
         "buffer, not the whole buffer; the CUresult's description (wb::errorDescription) is not the JIT's log. "
         "Load into whatever context is current: push, retain or create none.") {
  TEST_CASE("R2 R3 R4 R5: PTX with a mistake, in a created context: CUDA_ERROR_INVALID_PTX, no module, and a whole log of its own that names the mistake") {
    wbt::initDriver();
    wbt::OwnedContext own(wbt::device(0));  // current: not a primary context
    const std::vector<CUcontext> stack = wbx::contextStack();
    const wbx::Holdings before = wbx::holdings();
    const ex06::PtxLoad first = ex06::loadPtx(brokenPtx(kShortName));
    Unload unloadFirst{first};
    const ex06::PtxLoad second = ex06::loadPtx(brokenPtx(kLongName));
    Unload unloadSecond{second};
    const std::string held = wbx::holdings().differenceFrom(before);
    INFO("the first log: " << first.errorLog);
    INFO("the second log: " << second.errorLog);
    CHECK(first.result == CUDA_ERROR_INVALID_PTX);
    CHECK(first.module == nullptr);
    CHECK_MESSAGE(contains(first.errorLog, kShortName), "the log does not name the bad instruction: is it the JIT's error log?");
    CHECK_MESSAGE(!contains(first.errorLog, std::string(1, '\0')), "the log holds NUL bytes: it is the whole buffer, not the text the JIT wrote");
    CHECK(second.result == CUDA_ERROR_INVALID_PTX);
    CHECK(second.module == nullptr);
    CHECK_MESSAGE(contains(second.errorLog, kLongName),
                  "the second log does not name its 120-character instruction in full: was it cut short?");
    CHECK(!contains(second.errorLog, std::string(1, '\0')));
    CHECK_MESSAGE(!contains(second.errorLog, kShortName), "the second load's log still holds the first load's errors");
    CHECK_MESSAGE(held == "", "a load that failed left something held");
    CHECK_MESSAGE(wbx::contextStack() == stack, "loadPtx changed the thread's context stack");
  }

  TEST_CASE("R1 R4 R5: PTX without a mistake, in a created context, after broken PTX: the module is in that context, its kernels compute there, and the log is empty") {
    // Device 0's primary context stays alive, so a module loaded there by mistake is still a module.
    const CUdevice dev = wbt::deviceKeepingPrimary(0);
    wbt::OwnedContext own(dev);  // current: not the primary context
    const std::vector<CUcontext> stack = wbx::contextStack();
    const std::vector<char> image = wb::readVerifiedImage("vector_ops.ptx");  // checked, NUL-terminated
    const ex06::PtxLoad broken = ex06::loadPtx(brokenPtx(kShortName));  // its log must not carry over
    Unload unloadBroken{broken};
    const wbx::Holdings before = wbx::holdings();
    const ex06::PtxLoad loaded = ex06::loadPtx(std::string(image.data()));
    Unload unload{loaded};
    const std::string held = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(wbx::contextStack() == stack, "loadPtx changed the thread's context stack");
    REQUIRE(loaded.result == CUDA_SUCCESS);
    REQUIRE(loaded.module != nullptr);
    CHECK_MESSAGE(loaded.errorLog.empty(), "PTX that compiles has an empty error log: is it the earlier load's?");
    CHECK_MESSAGE(held == "1 module more", "loadPtx should hold exactly the module it returns");
    std::string result = "cuModuleGetFunction refused the module's kernels";
    CUfunction fill = nullptr, scale = nullptr;
    if (cuModuleGetFunction(&fill, loaded.module, "fill") == CUDA_SUCCESS &&
        cuModuleGetFunction(&scale, loaded.module, "scale") == CUDA_SUCCESS)
      result = outcome(fill, scale);
    CHECK_MESSAGE(result == "", "the module's kernels do not compute in the current context: was it loaded into another one?");
  }
}

EXERCISE("module-cache", "A kernel cache that loads a module once per context",
         "cuCtxGetCurrent, then look the context up in a std::map<CUcontext, CUmodule>; if it is not there, "
         "cuModuleLoadData(&module, image_.data()) and only then remember it; then CU_CHECK(cuModuleGetFunction). "
         "One module for every context (or every device) is the mistake: its functions launch only in the context "
         "it was loaded in. With no current context, throw CUDA_ERROR_INVALID_CONTEXT. Unload each module with "
         "cuCtxPushCurrent(its context) ... cuCtxPopCurrent, never cuCtxSetCurrent.") {
  TEST_CASE("R2 R6 R7: every context gets a module of its own, loaded once, whose kernels compute there; the destructor unloads them all, each in its context, and leaves the caller's stack as it was") {
    const int count = wbt::initDriver();
    const CUdevice dev = wbt::deviceKeepingPrimary(0);
    wbt::RetainedPrimary primary(dev);
    wbt::OwnedContext own(dev);
    wbt::OwnedContext bystander(dev);  // on the caller's stack when the cache goes; never asked for a function
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
    CU_CHECK(cuCtxPopCurrent(&popped));  // nothing current: each step below pushes the context it uses
    std::unique_ptr<wbt::RetainedPrimary> second;  // device 1's primary context, where there are two GPUs
    if (count >= 2) second = std::make_unique<wbt::RetainedPrimary>(wbt::device(1));
    const size_t expectedModules = second ? 3 : 2;
    const wbx::Holdings before = wbx::holdings();
    auto cache = std::make_unique<ex06::ModuleCache>("vector_ops.fatbin");  // goes before the contexts
    CUfunction fillPrimary = nullptr, scalePrimary = nullptr, fillOwn = nullptr, scaleOwn = nullptr;
    CUfunction fillSecond = nullptr, scaleSecond = nullptr;
    std::string stacksChanged;  // where a request changed the caller's stack
    const auto ask = [&](CUcontext ctx, const char* where, CUfunction* fill, CUfunction* scale) {
      wbt::Pushed in(ctx);
      const std::vector<CUcontext> stack = wbx::contextStack();
      *fill = cache->function("fill");
      if (scale) *scale = cache->function("scale");
      if (wbx::contextStack() != stack) stacksChanged += std::string(stacksChanged.empty() ? "" : ", ") + where;
    };
    ask(primary.get(), "the primary context", &fillPrimary, &scalePrimary);
    ask(own.get(), "the own context", &fillOwn, &scaleOwn);
    CUfunction again = nullptr;
    ask(primary.get(), "the primary context, again", &again, nullptr);  // the module is there already
    if (second) ask(second->get(), "device 1's primary context", &fillSecond, &scaleSecond);
    CAPTURE(stacksChanged);
    CHECK_MESSAGE(stacksChanged.empty(), "function() changed the caller's context stack");
    const size_t loaded = cache->modules();
    const long heldModules = wbx::holdings()[wbx::Held::Modules] - before[wbx::Held::Modules];
    CAPTURE(loaded);
    CAPTURE(heldModules);
    CHECK_MESSAGE(loaded == expectedModules, "one module per context that asked, each loaded once");
    CHECK_MESSAGE(heldModules == static_cast<long>(expectedModules),
                  "the process holds more or fewer modules than one per context: a load per request?");
    REQUIRE_MESSAGE(fillOwn != fillPrimary, "the second context got the first context's function: it cannot launch there");
    std::string primaryResult, ownResult, secondResult;
    {
      wbt::Pushed in(primary.get());
      primaryResult = outcome(fillPrimary, scalePrimary);
    }
    {
      wbt::Pushed in(own.get());
      ownResult = outcome(fillOwn, scaleOwn);
    }
    if (second) {
      REQUIRE_MESSAGE(fillSecond != fillPrimary, "device 1's context got device 0's function: it cannot launch there");
      wbt::Pushed in(second->get());
      secondResult = outcome(fillSecond, scaleSecond);
    }
    CHECK_MESSAGE(primaryResult == "", "the primary context's kernels do not compute there");
    CHECK_MESSAGE(ownResult == "", "the own context's kernels do not compute there");
    CHECK_MESSAGE(secondResult == "", "device 1's kernels do not compute there");
    std::vector<CUcontext> stackBefore, stackAfter;
    long madeCurrent = 0;  // cuCtxPushCurrent and cuCtxSetCurrent calls of the destructor
    {
      wbt::Pushed below(primary.get());
      wbt::Pushed top(bystander.get());
      stackBefore = wbx::contextStack();
      const long pushes = wbx::calls("cuCtxPushCurrent"), sets = wbx::calls("cuCtxSetCurrent");
      cache.reset();
      madeCurrent = wbx::calls("cuCtxPushCurrent") - pushes + wbx::calls("cuCtxSetCurrent") - sets;
      stackAfter = wbx::contextStack();
    }
    CAPTURE(madeCurrent);
    CHECK_MESSAGE(stackAfter == stackBefore, "the destructor changed the caller's context stack");
    CHECK_MESSAGE(madeCurrent >= static_cast<long>(loaded),
                  "the destructor did not make each module's context current: cuModuleUnload unloads from the current context");
    CHECK_MESSAGE(wbx::holdings().differenceFrom(before) == "", "the destructor did not unload every module");
  }

  TEST_CASE("R3: with no context current: CUDA_ERROR_INVALID_CONTEXT, and nothing loaded, retained or made current") {
    wbt::deviceKeepingPrimary(0);  // alive, so a module put there by mistake is still a module
    REQUIRE(wbt::current() == nullptr);
    ex06::ModuleCache cache("vector_ops.fatbin");
    const wbx::Holdings before = wbx::holdings();
    const CUresult thrown = thrownBy(cache, "fill");
    const std::string error = wb::errorName(thrown);
    CAPTURE(error);
    CHECK_MESSAGE(thrown != CUDA_SUCCESS, "function() returned a function with no context current: whose context is it in?");
    CHECK(thrown == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cache.modules() == 0);
    CHECK(wbt::current() == nullptr);
    CHECK_MESSAGE(wbx::holdings().differenceFrom(before) == "", "function() with no context current left something held");
  }

  TEST_CASE("R4 R5 R7: a load that fails is thrown and leaves nothing, the stack as it was; the next request loads; a name the image lacks is thrown") {
    wbt::initDriver();
    wbt::OwnedContext own(wbt::device(0));  // current
    ex06::ModuleCache cache("vector_ops.fatbin");
    const std::vector<CUcontext> stack = wbx::contextStack();
    CUresult thrown = CUDA_SUCCESS;
    bool fired = false;
    {
      wbx::FailCall fail("cuModuleLoadData", CUDA_ERROR_OUT_OF_MEMORY);
      thrown = thrownBy(cache, "fill");
      fired = fail.fired();
    }
    CHECK_MESSAGE(wbx::contextStack() == stack, "function() threw and left the caller's context stack changed");
    if (!fired) {
      MESSAGE("function() did not load with cuModuleLoadData: its failure was not tried");
    } else {
      CHECK_MESSAGE(thrown == CUDA_ERROR_OUT_OF_MEMORY, "the failed cuModuleLoadData was not thrown as it came");
      CHECK_MESSAGE(cache.modules() == 0, "a load that failed is counted as a module");
    }
    CUfunction fill = nullptr, scale = nullptr;
    fill = cache.function("fill");
    scale = cache.function("scale");
    CHECK(cache.modules() == 1);
    CHECK_MESSAGE(outcome(fill, scale) == "", "after a failed load, the next request's kernels do not compute");
    const CUresult unknown = thrownBy(cache, "no_such_kernel");
    const std::string error = wb::errorName(unknown);
    CAPTURE(error);
    CHECK_MESSAGE(unknown != CUDA_SUCCESS, "function() returned something for a name the image lacks");
    CHECK_MESSAGE(unknown != CUDA_ERROR_UNKNOWN, "not a wb::DriverError: throw what CU_CHECK throws");
  }

  // The damaged image never reaches the driver here: the constructor only reads, and the check asks
  // for no function from a cache whose constructor did not refuse it.
  TEST_CASE("R1: an image cut short is refused by the constructor with the reader's wb::ImageError") {
    const std::vector<char> image = wb::readVerifiedImage("vector_ops.fatbin");  // from the build, intact
    wb::ScratchDir dir;
    {
      std::ofstream out(dir.path() + "/vector_ops.fatbin", std::ios::binary);
      out.write(image.data(), static_cast<std::streamsize>(std::min<size_t>(300, image.size())));
      REQUIRE(out.good());
    }
    bool refused = false;
    std::string other;
    {
      KernelDirOverride kernels(dir.path());
      try {
        ex06::ModuleCache cache("vector_ops.fatbin");
      } catch (const wb::ImageError&) {
        refused = true;
      } catch (const wb::NotDone&) {
        throw;  // the starting body: reported as not done
      } catch (const std::exception& e) {
        other = e.what();
      }
    }
    CAPTURE(other);
    CHECK_MESSAGE(refused, "a fatbin cut to 300 bytes was taken: read it with wb::readVerifiedImage, which checks it");
  }
}

EXERCISE("image-choice", "Choosing the image a device can run from per-architecture cubins and PTX",
         "A cubin runs when image.arch / 10 == deviceArch / 10 and image.arch % 10 <= deviceArch % 10; PTX runs "
         "when image.arch <= deviceArch. Best: the highest-arch cubin that runs, else the highest-arch PTX that "
         "runs, else nullptr. A newer GPU runs older PTX, but not a cubin of an older major version. Walk the list "
         "by const reference and return &element: a pointer into the caller's vector.") {
  TEST_CASE("R1 R2 R3 R4 R5 R6: devices from 7.5 to 12.1: the newest runnable cubin, else the newest runnable PTX, else none, as an element of the list") {
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
        {80, {ptx(86), ptx(75)}, "k.compute_75.ptx"},  // a newer minor's PTX does not run
        {86, {ptx(89), cubin(90)}, ""},
        {89, {ptx(89), cubin(80)}, "k.sm_80.cubin"},
        {89, {cubin(90), ptx(89)}, "k.compute_89.ptx"},
        {75, {cubin(80), ptx(80)}, ""},
        {90, {}, ""},
        {103, {ptx(120), cubin(90), cubin(100)}, "k.sm_100.cubin"},
        {121, {cubin(120), ptx(121), ptx(90)}, "k.sm_120.cubin"},
        {120, {cubin(121), ptx(100), ptx(90)}, "k.compute_100.ptx"},
    };
    for (const Case& c : cases) {
      const ex06::Image* image = ex06::chooseImage(c.device, c.images);
      const unsigned device = c.device;
      const std::string& expected = c.expected;
      // Only an element of the list is read: a pointer to anything else may point anywhere.
      const bool element = pointsInto(c.images, image);
      const std::string got = element ? image->file : image ? "(a pointer outside the list)" : "";
      CAPTURE(device);
      CAPTURE(got);
      CHECK(got == expected);
      if (image) CHECK_MESSAGE(element, "the answer is not an element of images: a pointer to a copy?");
    }
  }

  TEST_CASE("R1 R2 R3: from this build's images: the choice for this GPU, and the choice without its major version's cubins, load and compute") {
    const CUdevice dev = wbt::deviceKeepingPrimary(0);
    wbt::RetainedPrimary primary(dev);
    wbt::Pushed current(primary.get());
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
    REQUIRE_MESSAGE(pointsInto(all, best), "the answer is not an element of images");
    REQUIRE_MESSAGE(pointsInto(otherMajors, fallback), "the answer is not an element of images");
    const std::string bestFile = best->file, fallbackFile = fallback->file;
    CAPTURE(bestFile);
    CAPTURE(fallbackFile);
    CHECK_MESSAGE(fallback->ptx, "without a cubin of this GPU's major version only the PTX can run");
    CHECK_MESSAGE(runs(bestFile), "the image chosen for this GPU does not load or compute here");
    CHECK_MESSAGE(runs(fallbackFile), "the image chosen without this GPU's major version does not load or compute here");
  }
}

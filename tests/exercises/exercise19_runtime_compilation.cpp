// The checks of lesson 19's exercises (lessons/19-runtime-compilation/exercises.cpp). Each calls the
// learner's function first. Kernels are checked by launching them and comparing every value; the
// cache is checked by counting the calls of the compiler it is given, never by timing.
#include "check.hpp"
#include "scratch.hpp"
#include "19-runtime-compilation/exercises.hpp"

#include <nvrtc.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

// The primary context of device 0, current.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUdevice dev() const { return primary.device(); }
  int arch() const {
    return 10 * wbt::attribute(dev(), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
           wbt::attribute(dev(), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  }
};

// Unloads a library the learner's function returned, at scope exit.
struct Unload {
  CUlibrary lib;
  ~Unload() {
    if (lib) cuLibraryUnload(lib);
  }
};

template <class T>
std::vector<T> ramp(unsigned n = 4096) {
  std::vector<T> v(n);
  for (unsigned i = 0; i < n; ++i) v[i] = static_cast<T>(i % 100);
  return v;
}

// Launches kernel(T* x, unsigned n) over the ramp; how many values differ from want(x).
template <class T, class F>
size_t wrongValues(CUkernel kernel, F want) {
  std::vector<T> values = ramp<T>();
  const std::vector<T> in = values;
  wbt::DeviceBuffer x(values.size() * sizeof(T));
  CU_CHECK(cuMemcpyHtoD(x.get(), values.data(), x.size()));
  CUdeviceptr p = x.get();
  unsigned n = static_cast<unsigned>(values.size());
  void* args[] = {&p, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                          nullptr));
  CU_CHECK(cuMemcpyDtoH(values.data(), x.get(), x.size()));
  size_t wrong = 0;
  for (size_t i = 0; i < values.size(); ++i) wrong += values[i] != want(in[i]);
  return wrong;
}

// NVRTC for the check's own references: the cubin (or nothing) and each expression's lowered name.
struct Reference {
  nvrtcResult result = NVRTC_SUCCESS;
  std::string log;
  std::vector<char> cubin;
  std::vector<std::string> lowered;
};

Reference nvrtc(const std::string& source, const std::vector<std::string>& options,
                const std::vector<std::string>& nameExpressions = {}) {
  nvrtcProgram prog = nullptr;
  REQUIRE(nvrtcCreateProgram(&prog, source.c_str(), "reference.cu", 0, nullptr, nullptr) == NVRTC_SUCCESS);
  Reference r;
  for (const std::string& e : nameExpressions) nvrtcAddNameExpression(prog, e.c_str());
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  r.result = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 1) {
    r.log.resize(size);
    nvrtcGetProgramLog(prog, &r.log[0]);
  }
  if (r.result == NVRTC_SUCCESS && nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS && size > 0) {
    r.cubin.resize(size);
    nvrtcGetCUBIN(prog, r.cubin.data());
  }
  for (const std::string& e : nameExpressions) {
    const char* lowered = nullptr;
    r.lowered.emplace_back(nvrtcGetLoweredName(prog, e.c_str(), &lowered) == NVRTC_SUCCESS ? lowered : "");
  }
  nvrtcDestroyProgram(&prog);
  return r;
}

const char* const kBroken = R"(extern "C" __global__ void broken(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = undefined_factor * x[i];
}
)";

const char* const kGoodThatWarns = R"(extern "C" __global__ void triple(float* x, unsigned n) {
  int unused = 7;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 3.0f * x[i];
}
)";

const char* const kTemplate = R"(namespace ops {
template <typename T, int Factor>
__global__ void scale(T* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * T(Factor) + T(1);
}
}  // namespace ops
)";

std::string cachedSource(int plus) {
  return R"(extern "C" __global__ void bump(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] + )" + std::to_string(plus) + R"(.0f;
}
)";
}

}  // namespace

EXERCISE("compile-or-log", "A compile that hands back its log on failure and a loaded library on success",
         "nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr); the option "
         "\"--gpu-architecture=sm_\" + std::to_string(10 * major + minor) from cuDeviceGetAttribute; keep what "
         "nvrtcCompileProgram returns instead of throwing on it, read the log (nvrtcGetProgramLogSize, "
         "nvrtcGetProgramLog) whatever it returned, and only on NVRTC_SUCCESS get the cubin (nvrtcGetCUBINSize, "
         "nvrtcGetCUBIN) and cuLibraryLoadData it. A checking macro around nvrtcCompileProgram throws the log away "
         "with the program. Destroy the program in a catch block too.") {
  TEST_CASE("a broken source gives back the log naming its line and no library; a good one a library that computes right, with its warning in the log") {
    Lab lab;
    ex19::Built bad;
    std::string thrown;
    try {
      bad = ex19::compileAndLoad(kBroken, "broken.cu", lab.dev());
    } catch (const wb::NotDone&) {
      throw;
    } catch (const std::exception& e) {
      thrown = e.what();
    }
    Unload badLib{bad.library};
    CHECK_MESSAGE(thrown.empty(), "compileAndLoad threw on a source that does not compile, so the caller never sees "
                                  "the log: " << thrown);
    CAPTURE(bad.log);
    CHECK(bad.library == nullptr);
    CHECK_MESSAGE(bad.log.find("broken.cu(3)") != std::string::npos,
                  "the log does not name broken.cu(3): was the program created with the name given?");
    const ex19::Built good = ex19::compileAndLoad(kGoodThatWarns, "triple.cu", lab.dev());
    Unload goodLib{good.library};
    CAPTURE(good.log);
    REQUIRE(good.library != nullptr);
    CHECK_MESSAGE(good.log.find("warning") != std::string::npos, "the warning NVRTC gave is not in the log");
    CUkernel triple = nullptr;
    REQUIRE(cuLibraryGetKernel(&triple, good.library, "triple") == CUDA_SUCCESS);
    CHECK(wrongValues<float>(triple, [](float v) { return 3.0f * v; }) == 0);
  }
}

EXERCISE("template-instances", "Template kernels instantiated and found by name expression",
         "Call nvrtcAddNameExpression(prog, e.c_str()) for each expression before nvrtcCompileProgram (that is "
         "what instantiates the template), and after it nvrtcGetLoweredName(prog, e.c_str(), &lowered) with the "
         "identical string; copy lowered into a std::string before nvrtcDestroyProgram. cuLibraryGetKernel takes "
         "the lowered name (\"_ZN3ops5scaleIfLi2EEEvPT_j\"), never the expression (\"ops::scale<float, 2>\").") {
  TEST_CASE("two instances of a namespaced template with a constant parameter: the lowered names NVRTC gives, each kernel computing x * Factor + 1 in its type") {
    Lab lab;
    const std::vector<std::string> expressions = {"ops::scale<float, 2>", "ops::scale<double, 3>"};
    const ex19::Instances got = ex19::instantiate(kTemplate, expressions, lab.dev());
    Unload lib{got.library};
    const Reference want =
        nvrtc(kTemplate, {"--gpu-architecture=sm_" + std::to_string(lab.arch())}, expressions);
    CAPTURE(want.log);
    REQUIRE(want.result == NVRTC_SUCCESS);
    REQUIRE(got.library != nullptr);
    REQUIRE(got.kernels.size() == 2);
    REQUIRE(got.loweredNames.size() == 2);
    CHECK(got.loweredNames[0] == want.lowered[0]);
    CHECK(got.loweredNames[1] == want.lowered[1]);
    CHECK(wrongValues<float>(got.kernels[0], [](float v) { return v * 2.0f + 1.0f; }) == 0);
    CHECK(wrongValues<double>(got.kernels[1], [](double v) { return v * 3.0 + 1.0; }) == 0);
  }
}

EXERCISE("disk-cache", "A disk cache of compiled kernels keyed by everything that changes the cubin",
         "Spell every field of CompileInputs into one key string (the options one by one, the source with its "
         "length), name the file by a hash of it (std::hash<std::string> will do), and store the key itself in the "
         "file before the cubin: a hit is a file whose stored key equals this key and whose cubin passes "
         "wb::imageProblem(data, size, wb::ImageKind::Cubin). Write to path + \".partial\" and std::rename it into "
         "place. A key that leaves out a field (the options, say) serves one set of inputs another's cubin.") {
  TEST_CASE("the same inputs hit without compiling; changing any one field misses; a damaged entry is compiled again; the cubin runs") {
    Lab lab;
    int nvrtcMajor = 0, nvrtcMinor = 0, driver = 0;
    REQUIRE(nvrtcVersion(&nvrtcMajor, &nvrtcMinor) == NVRTC_SUCCESS);
    CU_CHECK(cuDriverGetVersion(&driver));
    const int arch = lab.arch();
    const ex19::CompileInputs base{cachedSource(1), {"--gpu-architecture=sm_" + std::to_string(arch)},
                                   arch / 10, arch % 10, nvrtcMajor, nvrtcMinor, driver};
    unsigned calls = 0;
    std::vector<char> lastCompiled;
    const ex19::Compiler compiler = [&](const ex19::CompileInputs& in) {
      ++calls;
      const Reference r = nvrtc(in.source, in.options);
      REQUIRE(r.result == NVRTC_SUCCESS);
      lastCompiled = r.cubin;
      return r.cubin;
    };
    wb::ScratchDir dir;
    const std::vector<char> first = ex19::cachedCompile(dir.path(), base, compiler);
    CHECK(calls == 1);
    CHECK_MESSAGE(first == lastCompiled, "the first call did not return what the compiler made");
    const std::vector<char> again = ex19::cachedCompile(dir.path(), base, compiler);
    CHECK_MESSAGE(calls == 1, "the same inputs called the compiler again: no hit");
    CHECK(again == first);

    struct Variant {
      std::string what;
      ex19::CompileInputs inputs;
    };
    std::vector<Variant> variants(5, Variant{"", base});
    variants[0].what = "the source", variants[0].inputs.source = cachedSource(2);
    variants[1].what = "one option more", variants[1].inputs.options.push_back("--fmad=false");
    variants[2].what = "the compute capability", variants[2].inputs.ccMinor += 1;
    variants[3].what = "NVRTC's minor version", variants[3].inputs.nvrtcMinor += 1;
    variants[4].what = "the driver version", variants[4].inputs.driverVersion += 10;
    for (const Variant& v : variants) {
      CAPTURE(v.what);
      const unsigned before = calls;
      ex19::cachedCompile(dir.path(), v.inputs, compiler);
      CHECK_MESSAGE(calls == before + 1, "changing it alone did not miss: the key leaves it out");
    }
    const unsigned beforeBase = calls;
    CHECK(ex19::cachedCompile(dir.path(), base, compiler) == first);
    CHECK_MESSAGE(calls == beforeBase, "the first inputs missed after the others: did an entry overwrite theirs?");

    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path()))
      if (entry.is_regular_file()) std::filesystem::resize_file(entry.path(), entry.file_size() / 2);
    const unsigned beforeDamage = calls;
    std::vector<char> healed;
    CHECK_NOTHROW(healed = ex19::cachedCompile(dir.path(), base, compiler));
    CHECK_MESSAGE(calls == beforeDamage + 1, "a damaged entry was served instead of compiled again");
    CHECK(healed == first);
    REQUIRE(wb::imageProblem(healed.data(), healed.size(), wb::ImageKind::Cubin) == "");
    CUlibrary library = nullptr;
    REQUIRE(cuLibraryLoadData(&library, healed.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
    Unload unload{library};
    CUkernel bump = nullptr;
    REQUIRE(cuLibraryGetKernel(&bump, library, "bump") == CUDA_SUCCESS);
    CHECK(wrongValues<float>(bump, [](float v) { return v + 1.0f; }) == 0);
  }
}

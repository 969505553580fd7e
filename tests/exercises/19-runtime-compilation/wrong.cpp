// Deliberately wrong variants of lesson 19's exercises: each check must fail on them.
#include "exercises.hpp"

#include <nvrtc.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>

namespace ex19 {

namespace {

void check(nvrtcResult rc, const char* call) {
  if (rc != NVRTC_SUCCESS) throw std::runtime_error(std::string(call) + " failed: " + nvrtcGetErrorString(rc));
}

std::string archOption(CUdevice dev) {
  int major = 0, minor = 0;
  CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CU_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  return "--gpu-architecture=sm_" + std::to_string(10 * major + minor);
}

class Program {
 public:
  Program(const std::string& source, const char* name) {
    check(nvrtcCreateProgram(&prog_, source.c_str(), name, 0, nullptr, nullptr), "nvrtcCreateProgram");
  }
  ~Program() { nvrtcDestroyProgram(&prog_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return prog_; }
  nvrtcResult compileFor(CUdevice dev) {
    const std::string arch = archOption(dev);
    const char* options[] = {arch.c_str()};
    return nvrtcCompileProgram(prog_, 1, options);
  }
  std::string log() const {
    size_t size = 0;
    check(nvrtcGetProgramLogSize(prog_, &size), "nvrtcGetProgramLogSize");
    std::string log(size, '\0');
    if (size > 0) check(nvrtcGetProgramLog(prog_, &log[0]), "nvrtcGetProgramLog");
    log.resize(size > 0 ? size - 1 : 0);
    return log;
  }
  CUlibrary load() const {
    size_t size = 0;
    check(nvrtcGetCUBINSize(prog_, &size), "nvrtcGetCUBINSize");
    std::vector<char> cubin(size);
    check(nvrtcGetCUBIN(prog_, cubin.data()), "nvrtcGetCUBIN");
    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    return library;
  }

 private:
  nvrtcProgram prog_ = nullptr;
};

}  // namespace

// Wrong: "check every call": nvrtcCompileProgram goes through the same throwing check as every other
// NVRTC call, so a source that does not compile throws "nvrtcCompileProgram failed:
// NVRTC_ERROR_COMPILATION" before anyone reads the log, and the user never learns which line. The
// check's FAIL("compileAndLoad threw on a source that does not compile ...") catches it.
Built compileAndLoad(const std::string& source, const std::string& name, CUdevice dev) {
  Program prog(source, name.c_str());
  check(prog.compileFor(dev), "nvrtcCompileProgram");
  Built built;
  built.log = prog.log();
  built.library = prog.load();
  return built;
}

// Wrong: "a kernel's name is the name in the source": the name expressions are added, so the
// templates are instantiated, but each kernel is looked up by the expression itself
// ("ops::scale<float, 2>"). No symbol in the cubin is called that: cuLibraryGetKernel returns
// CUDA_ERROR_NOT_FOUND, CU_CHECK throws it, and the check fails with that error.
Instances instantiate(const std::string& source, const std::vector<std::string>& nameExpressions, CUdevice dev) {
  Program prog(source, "instances.cu");
  for (const std::string& e : nameExpressions) check(nvrtcAddNameExpression(prog.get(), e.c_str()), "nvrtcAddNameExpression");
  if (prog.compileFor(dev) != NVRTC_SUCCESS) throw std::runtime_error("instances.cu did not compile:\n" + prog.log());
  Instances out;
  out.library = prog.load();
  try {
    for (const std::string& e : nameExpressions) {
      CUkernel kernel = nullptr;
      CU_CHECK(cuLibraryGetKernel(&kernel, out.library, e.c_str()));
      out.kernels.push_back(kernel);
      out.loweredNames.push_back(e);
    }
  } catch (...) {
    cuLibraryUnload(out.library);
    throw;
  }
  return out;
}

// Wrong: "the source and the machine decide the cubin": the key leaves the options out. The same
// source with one option more (--fmad=false) then finds the entry made without it and is served that
// cubin: `calls == before + 1` fails for "one option more".
std::vector<char> cachedCompile(const std::string& dir, const CompileInputs& inputs, const Compiler& compile) {
  const std::string key = "nvrtc " + std::to_string(inputs.nvrtcMajor) + "." + std::to_string(inputs.nvrtcMinor) +
                          "\ndriver " + std::to_string(inputs.driverVersion) + "\ncompute capability " +
                          std::to_string(inputs.ccMajor) + "." + std::to_string(inputs.ccMinor) + "\nsource " +
                          std::to_string(inputs.source.size()) + "\n" + inputs.source;
  char name[32];
  std::snprintf(name, sizeof name, "%016zx.entry", std::hash<std::string>{}(key));
  const std::string path = dir + "/" + name, head = "ex19 cache entry\n" + std::to_string(key.size()) + "\n" + key;
  {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (bytes.size() > head.size() && bytes.compare(0, head.size(), head) == 0) {
      std::vector<char> cubin(bytes.begin() + static_cast<std::ptrdiff_t>(head.size()), bytes.end());
      if (wb::imageProblem(cubin.data(), cubin.size(), wb::ImageKind::Cubin).empty()) return cubin;
    }
  }
  std::vector<char> cubin = compile(inputs);
  const std::string partial = path + ".partial";
  std::ofstream out(partial, std::ios::binary);
  out << head;
  out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  out.close();
  if (!out || std::rename(partial.c_str(), path.c_str()) != 0) std::remove(partial.c_str());
  return cubin;
}

}  // namespace ex19

// Wrong (R3): returns the name expressions as the names, keeping the lowered ones to itself
//
// "The caller knows each instance by its expression; a mangled name is a detail of the compiler."
// The task asks for the lowered names: they are what a caller needs to find the kernel again in a
// library (cuLibraryGetKernel), to log which symbol ran, or to look it up in a profile. In the check
// `got.loweredNames[0] == want.lowered[0]` fails.
#include "exercises.hpp"

#include <nvrtc.h>

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

// An NVRTC program, destroyed when it goes out of scope: on every path, the throwing ones too.
class Program {
 public:
  Program(const std::string& source, const char* name) {
    check(nvrtcCreateProgram(&prog_, source.c_str(), name, 0, nullptr, nullptr), "nvrtcCreateProgram");
  }
  ~Program() { nvrtcDestroyProgram(&prog_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return prog_; }
  std::string log() const {
    size_t size = 0;
    if (nvrtcGetProgramLogSize(prog_, &size) != NVRTC_SUCCESS || size == 0) return "";
    std::string log(size, '\0');
    if (nvrtcGetProgramLog(prog_, &log[0]) != NVRTC_SUCCESS) return "";
    log.resize(size - 1);
    return log;
  }
  std::vector<char> cubin() const {
    size_t size = 0;
    check(nvrtcGetCUBINSize(prog_, &size), "nvrtcGetCUBINSize");
    std::vector<char> cubin(size);
    check(nvrtcGetCUBIN(prog_, cubin.data()), "nvrtcGetCUBIN");
    wb::verifyImageBytes(cubin.data(), cubin.size(), wb::ImageKind::Cubin, "NVRTC's cubin");
    return cubin;
  }

 private:
  nvrtcProgram prog_ = nullptr;
};

// A loaded library, unloaded at scope exit unless handed on.
class Loaded {
 public:
  explicit Loaded(const std::vector<char>& cubin) {
    CU_CHECK(cuLibraryLoadData(&library_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  }
  ~Loaded() {
    if (library_) cuLibraryUnload(library_);
  }
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;
  CUlibrary get() const { return library_; }
  CUlibrary release() {
    CUlibrary l = library_;
    library_ = nullptr;
    return l;
  }

 private:
  CUlibrary library_ = nullptr;
};

}  // namespace

// The name expressions go in before the compile (they are what instantiates the template), the
// lowered names come out after it, copied, since NVRTC releases them with the program. The
// library is handed to the caller only once every instance is found in it.
Instances instantiate(const std::string& source, const std::vector<std::string>& nameExpressions, CUdevice dev) {
  Program prog(source, "instances.cu");
  for (const std::string& e : nameExpressions) check(nvrtcAddNameExpression(prog.get(), e.c_str()), "nvrtcAddNameExpression");
  const std::string arch = archOption(dev);
  const char* options[] = {arch.c_str()};
  if (nvrtcCompileProgram(prog.get(), 1, options) != NVRTC_SUCCESS)
    throw std::runtime_error("instances.cu did not compile:\n" + prog.log());
  Instances out;
  std::vector<std::string> symbols;
  for (const std::string& e : nameExpressions) {
    const char* lowered = nullptr;
    check(nvrtcGetLoweredName(prog.get(), e.c_str(), &lowered), "nvrtcGetLoweredName");
    symbols.emplace_back(lowered);
    out.loweredNames.push_back(e);  // "the name the caller knows it by"
  }
  Loaded library(prog.cubin());
  for (const std::string& lowered : symbols) {
    CUkernel kernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&kernel, library.get(), lowered.c_str()));
    out.kernels.push_back(kernel);
  }
  out.library = library.release();
  return out;
}

}  // namespace ex19

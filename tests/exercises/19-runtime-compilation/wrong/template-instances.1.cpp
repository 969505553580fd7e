// Wrong (R2): looks each kernel up by its name expression, as if that were its name
//
// "A kernel's name is the name in the source." The name expressions are added, so the templates are
// instantiated, but no symbol in the cubin is called "ops::scale<float, 2>": cuLibraryGetKernel
// returns CUDA_ERROR_NOT_FOUND, CU_CHECK throws it, and the check fails with that error.
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

Instances instantiate(const std::string& source, const std::vector<std::string>& nameExpressions, CUdevice dev) {
  Program prog(source, "instances.cu");
  for (const std::string& e : nameExpressions) check(nvrtcAddNameExpression(prog.get(), e.c_str()), "nvrtcAddNameExpression");
  const std::string arch = archOption(dev);
  const char* options[] = {arch.c_str()};
  if (nvrtcCompileProgram(prog.get(), 1, options) != NVRTC_SUCCESS)
    throw std::runtime_error("instances.cu did not compile:\n" + prog.log());
  Instances out;
  for (const std::string& e : nameExpressions) {
    const char* lowered = nullptr;
    check(nvrtcGetLoweredName(prog.get(), e.c_str(), &lowered), "nvrtcGetLoweredName");
    out.loweredNames.emplace_back(lowered);
  }
  Loaded library(prog.cubin());
  for (const std::string& e : nameExpressions) {
    CUkernel kernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&kernel, library.get(), e.c_str()));
    out.kernels.push_back(kernel);
  }
  out.library = library.release();
  return out;
}

}  // namespace ex19

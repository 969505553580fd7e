// Wrong (R4): destroys the program by hand once the cubin is out, so a source that does not compile leaks it
//
// "Destroy it when done with it." The throw for a source that does not compile comes first: each
// bad source leaks a program, its log and its compiled state. `livePrograms() == programsBefore`
// fails after the check's source with a syntax error.
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

std::string logOf(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size == 0) return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, &log[0]) != NVRTC_SUCCESS) return "";
  log.resize(size - 1);
  return log;
}

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
  nvrtcProgram prog = nullptr;
  check(nvrtcCreateProgram(&prog, source.c_str(), "instances.cu", 0, nullptr, nullptr), "nvrtcCreateProgram");
  for (const std::string& e : nameExpressions) check(nvrtcAddNameExpression(prog, e.c_str()), "nvrtcAddNameExpression");
  const std::string arch = archOption(dev);
  const char* options[] = {arch.c_str()};
  if (nvrtcCompileProgram(prog, 1, options) != NVRTC_SUCCESS)
    throw std::runtime_error("instances.cu did not compile:\n" + logOf(prog));
  Instances out;
  for (const std::string& e : nameExpressions) {
    const char* lowered = nullptr;
    check(nvrtcGetLoweredName(prog, e.c_str(), &lowered), "nvrtcGetLoweredName");
    out.loweredNames.emplace_back(lowered);
  }
  size_t size = 0;
  check(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check(nvrtcGetCUBIN(prog, cubin.data()), "nvrtcGetCUBIN");
  nvrtcDestroyProgram(&prog);
  Loaded library(cubin);
  for (const std::string& lowered : out.loweredNames) {
    CUkernel kernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&kernel, library.get(), lowered.c_str()));
    out.kernels.push_back(kernel);
  }
  out.library = library.release();
  return out;
}

}  // namespace ex19

// Wrong (R4): loads the library straight into the result, so a failed lookup leaves it loaded
//
// "The caller unloads the library." Not one it never received: when a lookup throws, nobody holds
// the library any more, and it stays loaded for the life of the process. `heldAfterFailures == ""`
// fails ("1 library more") after the check fails the second lookup.
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
  const std::vector<char> cubin = prog.cubin();
  CU_CHECK(cuLibraryLoadData(&out.library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  for (const std::string& lowered : out.loweredNames) {
    CUkernel kernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&kernel, out.library, lowered.c_str()));
    out.kernels.push_back(kernel);
  }
  return out;
}

}  // namespace ex19

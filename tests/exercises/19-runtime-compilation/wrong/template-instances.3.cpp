// Wrong (R2): keeps the lowered names as the pointers NVRTC gave, and uses them after destroying the program
//
// "Destroy the program as soon as the cubin is out." The memory holding each lowered name is
// released with the program (nvrtc.h, nvrtcGetLoweredName): the names read afterwards are whatever
// that memory holds then. The check overwrites it at nvrtcDestroyProgram, so cuLibraryGetKernel
// finds no such kernel and CU_CHECK throws (with another allocator the names may even look right).
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
  std::vector<const char*> lowered(nameExpressions.size(), nullptr);
  std::vector<char> cubin;
  {
    Program prog(source, "instances.cu");
    for (const std::string& e : nameExpressions) check(nvrtcAddNameExpression(prog.get(), e.c_str()), "nvrtcAddNameExpression");
    const std::string arch = archOption(dev);
    const char* options[] = {arch.c_str()};
    if (nvrtcCompileProgram(prog.get(), 1, options) != NVRTC_SUCCESS)
      throw std::runtime_error("instances.cu did not compile:\n" + prog.log());
    for (size_t i = 0; i < nameExpressions.size(); ++i)
      check(nvrtcGetLoweredName(prog.get(), nameExpressions[i].c_str(), &lowered[i]), "nvrtcGetLoweredName");
    cubin = prog.cubin();
  }  // the program is gone: NVRTC needs no more than the cubin
  Instances out;
  Loaded library(cubin);
  for (const char* name : lowered) {
    CUkernel kernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&kernel, library.get(), name));
    out.kernels.push_back(kernel);
    out.loweredNames.emplace_back(name);
  }
  out.library = library.release();
  return out;
}

}  // namespace ex19

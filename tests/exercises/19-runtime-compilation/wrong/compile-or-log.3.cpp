// Wrong (R4): keeps the log's terminating NUL in the string
//
// "nvrtcGetProgramLogSize gives the size: make the string that size." It counts the NUL, so the
// std::string ends in a '\0' that a later `log + "\n"` or a comparison carries along:
// `bad.log.find('\0') == std::string::npos` fails.
#include "exercises.hpp"

#include <nvrtc.h>

#include <stdexcept>
#include <string>

namespace ex19 {

namespace {

void check(nvrtcResult rc, const char* call) {
  if (rc != NVRTC_SUCCESS) throw std::runtime_error(std::string(call) + " failed: " + nvrtcGetErrorString(rc));
}

// --gpu-architecture=sm_XY for dev: NVRTC then gives a cubin for exactly this GPU.
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
  // Compiles for dev; returns what nvrtcCompileProgram said, which is an answer, not an error.
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
    return log;
  }
  CUlibrary load() const {
    size_t size = 0;
    check(nvrtcGetCUBINSize(prog_, &size), "nvrtcGetCUBINSize");
    std::vector<char> cubin(size);
    check(nvrtcGetCUBIN(prog_, cubin.data()), "nvrtcGetCUBIN");
    wb::verifyImageBytes(cubin.data(), cubin.size(), wb::ImageKind::Cubin, "NVRTC's cubin");
    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    return library;
  }

 private:
  nvrtcProgram prog_ = nullptr;
};

}  // namespace

Built compileAndLoad(const std::string& source, const std::string& name, CUdevice dev) {
  Program prog(source, name.c_str());
  const nvrtcResult rc = prog.compileFor(dev);
  Built built;
  built.log = prog.log();
  if (rc == NVRTC_ERROR_COMPILATION) return built;
  check(rc, "nvrtcCompileProgram");
  built.library = prog.load();
  return built;
}

}  // namespace ex19

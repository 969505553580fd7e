// Wrong (R6): destroys the program by hand on the paths it returns by, so a throw leaks it
//
// "Create, compile, load, destroy." When the compile fails otherwise than with a compile error, or
// the load fails, the throw skips nvrtcDestroyProgram: each failed request leaks a program and
// everything NVRTC keeps for it. `livePrograms() == programsBefore` fails after the failed compile
// and after the failed load.
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

std::string logOf(nvrtcProgram prog) {
  size_t size = 0;
  check(nvrtcGetProgramLogSize(prog, &size), "nvrtcGetProgramLogSize");
  std::string log(size, '\0');
  if (size > 0) check(nvrtcGetProgramLog(prog, &log[0]), "nvrtcGetProgramLog");
  log.resize(size > 0 ? size - 1 : 0);
  return log;
}

}  // namespace

Built compileAndLoad(const std::string& source, const std::string& name, CUdevice dev) {
  nvrtcProgram prog = nullptr;
  check(nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
  const std::string arch = archOption(dev);
  const char* options[] = {arch.c_str()};
  const nvrtcResult rc = nvrtcCompileProgram(prog, 1, options);
  Built built;
  built.log = logOf(prog);
  if (rc == NVRTC_ERROR_COMPILATION) {
    nvrtcDestroyProgram(&prog);
    return built;
  }
  check(rc, "nvrtcCompileProgram");
  size_t size = 0;
  check(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check(nvrtcGetCUBIN(prog, cubin.data()), "nvrtcGetCUBIN");
  CU_CHECK(cuLibraryLoadData(&built.library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  nvrtcDestroyProgram(&prog);
  return built;
}

}  // namespace ex19

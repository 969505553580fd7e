// Reference solutions of lesson 19's exercises.
#include "exercises.hpp"

#include <nvrtc.h>
#include <unistd.h>

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
  nvrtcProgram get() const { return prog_; }
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
    log.resize(size > 0 ? size - 1 : 0);  // the size counts the terminating NUL
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

// The log is read whatever the compile returned: it is the one thing a user can act on. Only then
// is a compile error told apart from a failure of the call, which still throws.
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

// The name expressions go in before the compile (they are what instantiates the template), the
// lowered names come out after it, copied, since NVRTC frees them with the program.
Instances instantiate(const std::string& source, const std::vector<std::string>& nameExpressions, CUdevice dev) {
  Program prog(source, "instances.cu");
  for (const std::string& e : nameExpressions) check(nvrtcAddNameExpression(prog.get(), e.c_str()), "nvrtcAddNameExpression");
  const nvrtcResult rc = prog.compileFor(dev);
  if (rc != NVRTC_SUCCESS) throw std::runtime_error("instances.cu did not compile:\n" + prog.log());
  Instances out;
  for (const std::string& e : nameExpressions) {
    const char* lowered = nullptr;
    check(nvrtcGetLoweredName(prog.get(), e.c_str(), &lowered), "nvrtcGetLoweredName");
    out.loweredNames.emplace_back(lowered);
  }
  out.library = prog.load();
  try {
    for (const std::string& lowered : out.loweredNames) {
      CUkernel kernel = nullptr;
      CU_CHECK(cuLibraryGetKernel(&kernel, out.library, lowered.c_str()));
      out.kernels.push_back(kernel);
    }
  } catch (...) {
    cuLibraryUnload(out.library);
    throw;
  }
  return out;
}

namespace {

// Every field, spelled out: two inputs that differ anywhere have different keys.
std::string keyOf(const CompileInputs& in) {
  std::string key = "nvrtc " + std::to_string(in.nvrtcMajor) + "." + std::to_string(in.nvrtcMinor) + "\ndriver " +
                    std::to_string(in.driverVersion) + "\ncompute capability " + std::to_string(in.ccMajor) + "." +
                    std::to_string(in.ccMinor) + "\noptions " + std::to_string(in.options.size());
  for (const std::string& o : in.options) key += "\n" + std::to_string(o.size()) + " " + o;
  return key + "\nsource " + std::to_string(in.source.size()) + "\n" + in.source;
}

}  // namespace

// The file name is a hash of the key, only where to look; the entry holds the key itself, so a hit
// is exactly these inputs, and its cubin must pass the image reader, so a damaged entry is a miss.
// A new entry is written under a name of this process's own and renamed into place (atomic).
std::vector<char> cachedCompile(const std::string& dir, const CompileInputs& inputs, const Compiler& compile) {
  const std::string key = keyOf(inputs);
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
  const std::string partial = path + ".partial." + std::to_string(getpid());
  std::ofstream out(partial, std::ios::binary);
  out << head;
  out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  out.close();
  if (!out || std::rename(partial.c_str(), path.c_str()) != 0) std::remove(partial.c_str());  // still a compile
  return cubin;
}

}  // namespace ex19

// NVRTC and nvJitLink with their results checked, as lesson 19 teaches them; its program, its tests
// and its exercise checks compile and link through the same code. One compile: the log, every output
// the target produced and the lowered name of each name expression, copied out, the program destroyed
// on every path. The architectures NVRTC knows, whether it keeps a compile cache of its own, a link by
// nvJitLink with its error log, and which compiler libraries a program names and has loaded.
// Header-only: a target that includes it links CUDA::nvrtc, and CUDA::nvJitLink where it links.
#pragma once

#include <nvJitLink.h>
#include <nvrtc.h>

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace wb {

// NVRTC and nvJitLink return their own result types, not CUresult: a failed call throws, naming it.
inline void nvrtcCheck(nvrtcResult rc, const char* call, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) {
  if (rc != NVRTC_SUCCESS)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                             nvrtcGetErrorString(rc));
}

//! [compiled]
// What one NVRTC compilation gave back. A compile error is an answer, not a failure of the call:
// the result says so and the log says where.
struct Compiled {
  nvrtcResult result = NVRTC_SUCCESS;
  std::string log;                      // errors and warnings; may hold warnings on success too
  std::vector<char> cubin, ptx, ltoir;  // what the target produced; empty: this target gives none
  std::vector<std::string> lowered;     // the mangled name of each name expression, in order
};

// One of the program's outputs: NVRTC first says its size (0: none for this target), then copies it.
inline std::vector<char> nvrtcOutput(nvrtcProgram prog, nvrtcResult (*size)(nvrtcProgram, size_t*),
                                     nvrtcResult (*copy)(nvrtcProgram, char*), const char* what) {
  size_t bytes = 0;
  nvrtcCheck(size(prog, &bytes), what);
  std::vector<char> out(bytes);
  if (bytes > 0) nvrtcCheck(copy(prog, out.data()), what);
  return out;
}

inline std::string programLog(nvrtcProgram prog) {
  const std::vector<char> log =
      nvrtcOutput(prog, nvrtcGetProgramLogSize, nvrtcGetProgramLog, "nvrtcGetProgramLog");
  return log.empty() ? "" : std::string(log.data());  // the size counts the terminating NUL
}
//! [compiled]

// After a successful compile: the images this target produced, and each name expression's lowered
// name, copied out (NVRTC owns them until nvrtcDestroyProgram).
inline void readOutputs(nvrtcProgram prog, const std::vector<std::string>& nameExpressions, Compiled& c) {
  c.cubin = nvrtcOutput(prog, nvrtcGetCUBINSize, nvrtcGetCUBIN, "nvrtcGetCUBIN");
  c.ptx = nvrtcOutput(prog, nvrtcGetPTXSize, nvrtcGetPTX, "nvrtcGetPTX");
  c.ltoir = nvrtcOutput(prog, nvrtcGetLTOIRSize, nvrtcGetLTOIR, "nvrtcGetLTOIR");
  for (const std::string& e : nameExpressions) {
    const char* lowered = nullptr;
    nvrtcCheck(nvrtcGetLoweredName(prog, e.c_str(), &lowered), "nvrtcGetLoweredName");
    c.lowered.emplace_back(lowered);
  }
}

//! [no-cache]
// NVRTC 12.9 and newer keeps a cache of compiles of its own (the NVRTC user guide's section "Caching
// (CUDA 12.9+)"), used unless a compile passes --no-cache: "Disable the use of cache for both ptx
// and cubin code generation" (nvrtc.h). A compile it answers from there is no compile, so every
// compile meant as one passes --no-cache; lesson 19's step 10 (deeper.cpp) alone allows the cache,
// to time it.
// Older NVRTC has neither the cache nor the option, so it is passed only from 12.9 on.
enum class NvrtcCache { Off, Allowed };

inline bool nvrtcKeepsACache() {
  int major = 0, minor = 0;
  nvrtcCheck(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return major > 12 || (major == 12 && minor >= 9);
}
//! [no-cache]

// How many times this process has called nvrtcCompileProgram through nvrtcCompile: lesson 19 proves
// a hit of its cache by this count not moving, and a miss by it moving with NVRTC's own cache off.
inline unsigned nvrtcCompilations = 0;

//! [compile]
// One compilation: create the program from the source, compile it with the options, read the log
// and the outputs, and destroy the program on every path. Only a compile error or an option NVRTC
// does not know comes back as a result; any other failure throws.
inline Compiled nvrtcCompile(const std::string& source, const char* name,
                             const std::vector<std::string>& options,
                             const std::vector<std::string>& nameExpressions = {},
                             NvrtcCache cache = NvrtcCache::Off) {
  ++nvrtcCompilations;
  nvrtcProgram prog = nullptr;
  nvrtcCheck(nvrtcCreateProgram(&prog, source.c_str(), name, 0, nullptr, nullptr), "nvrtcCreateProgram");
  Compiled c;
  try {
    for (const std::string& e : nameExpressions)
      nvrtcCheck(nvrtcAddNameExpression(prog, e.c_str()), "nvrtcAddNameExpression");
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    if (cache == NvrtcCache::Off && nvrtcKeepsACache()) argv.push_back("--no-cache");
    c.result = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
    c.log = programLog(prog);
    if (c.result == NVRTC_SUCCESS)
      readOutputs(prog, nameExpressions, c);
    else if (c.result != NVRTC_ERROR_COMPILATION && c.result != NVRTC_ERROR_INVALID_OPTION)
      nvrtcCheck(c.result, "nvrtcCompileProgram");
  } catch (...) {
    nvrtcDestroyProgram(&prog);
    throw;
  }
  nvrtcCheck(nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");
  return c;
}
//! [compile]

//! [archs]
// The architectures this NVRTC can compile for, in ascending order (its header says so).
inline std::vector<int> nvrtcSupportedArchs() {
  int count = 0;
  nvrtcCheck(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(count));
  nvrtcCheck(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}
//! [archs]

// One input of a link: its kind (NVJITLINK_INPUT_CUBIN, NVJITLINK_INPUT_LTOIR), its bytes, and the
// name the error log gives it (may be null).
struct Piece {
  nvJitLinkInputType type;
  const std::vector<char>* bytes;
  const char* name;
};

struct Linked {
  nvJitLinkResult result = NVJITLINK_SUCCESS;
  std::string log;  // nvJitLink's error log: why a link failed
  std::vector<char> cubin;
};

inline std::string nvJitLinkErrorLog(nvJitLinkHandle link) {
  size_t size = 0;
  if (nvJitLinkGetErrorLogSize(link, &size) != NVJITLINK_SUCCESS || size == 0) return "";
  std::vector<char> log(size);
  if (nvJitLinkGetErrorLog(link, log.data()) != NVJITLINK_SUCCESS) return "";
  return std::string(log.data());
}

//! [nvjitlink]
// nvJitLink, the toolkit's linker: a library like NVRTC, no context and no driver involved. -arch
// names the target; -lto turns on link-time optimisation of LTO-IR inputs. A failed link is an
// answer with a log; the linked cubin is copied out before the handle is destroyed.
inline Linked linkWithNvJitLink(const std::vector<Piece>& pieces, const std::vector<std::string>& options) {
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  nvJitLinkHandle link = nullptr;
  Linked out;
  out.result = nvJitLinkCreate(&link, static_cast<uint32_t>(argv.size()), argv.data());
  if (out.result != NVJITLINK_SUCCESS)
    throw std::runtime_error("nvJitLinkCreate failed: nvJitLinkResult " + std::to_string(out.result));
  for (const Piece& p : pieces)
    if (out.result == NVJITLINK_SUCCESS)
      out.result = nvJitLinkAddData(link, p.type, p.bytes->data(), p.bytes->size(), p.name);
  if (out.result == NVJITLINK_SUCCESS) out.result = nvJitLinkComplete(link);
  size_t size = 0;
  if (out.result == NVJITLINK_SUCCESS) out.result = nvJitLinkGetLinkedCubinSize(link, &size);
  out.cubin.resize(out.result == NVJITLINK_SUCCESS ? size : 0);
  if (out.result == NVJITLINK_SUCCESS) out.result = nvJitLinkGetLinkedCubin(link, out.cubin.data());
  out.log = nvJitLinkErrorLog(link);
  nvJitLinkDestroy(&link);
  return out;
}
//! [nvjitlink]

// The NVRTC and nvJitLink libraries this process has loaded now, by path (dl_iterate_phdr walks
// every object the dynamic loader has mapped, those opened later with dlopen included).
inline std::vector<std::string> loadedCompilerLibraries() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string path = info->dlpi_name ? info->dlpi_name : "";
        if (path.find("libnvrtc") != std::string::npos || path.find("libnvJitLink") != std::string::npos)
          static_cast<std::vector<std::string>*>(out)->push_back(path);
        return 0;
      },
      &paths);
  return paths;
}

// The libraries this program names in its ELF file (DT_NEEDED of its dynamic section): what the
// dynamic loader maps before main, and what ldd lists.
inline std::vector<std::string> neededLibraries() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  const std::vector<char> elf{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> names;
  if (elf.size() < sizeof(Elf64_Ehdr)) return names;
  Elf64_Ehdr header;
  std::memcpy(&header, elf.data(), sizeof header);
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr dynamic, strings;
    std::memcpy(&dynamic, elf.data() + header.e_shoff + i * header.e_shentsize, sizeof dynamic);
    if (dynamic.sh_type != SHT_DYNAMIC) continue;
    std::memcpy(&strings, elf.data() + header.e_shoff + dynamic.sh_link * header.e_shentsize, sizeof strings);
    for (size_t at = dynamic.sh_offset; at + sizeof(Elf64_Dyn) <= dynamic.sh_offset + dynamic.sh_size;
         at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry;
      std::memcpy(&entry, elf.data() + at, sizeof entry);
      if (entry.d_tag == DT_NEEDED) names.emplace_back(elf.data() + strings.sh_offset + entry.d_un.d_val);
    }
  }
  return names;
}

}  // namespace wb

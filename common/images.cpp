#include "images.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace wb {

std::string kernelDir() {
  if (const char* env = std::getenv("CUDA_WORKBOOK_KERNEL_DIR"); env && *env) return env;
  return WORKBOOK_KERNEL_DIR;
}

std::string kernelImage(const std::string& file) { return kernelDir() + "/" + file; }

namespace {

// A CMake list of architectures, sorted, with commas for semicolons ("75,80,86").
std::vector<unsigned> architectures(const std::string& list) {
  std::vector<unsigned> archs;
  for (size_t at = 0; at < list.size();) {
    const size_t end = std::min(list.find(',', at), list.size());
    archs.push_back(static_cast<unsigned>(std::stoul(list.substr(at, end - at))));
    at = end + 1;
  }
  return archs;
}

}  // namespace

std::vector<unsigned> builtArchitectures() { return architectures(WORKBOOK_CUDA_ARCHS); }

std::vector<unsigned> cubinArchitectures() { return architectures(WORKBOOK_CUBIN_ARCHS); }

std::string imageToolkitVersion() { return WORKBOOK_TOOLKIT_VERSION; }

std::string bytes(std::size_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%zu B", n);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

std::string hex(unsigned long long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", v);
  return buf;
}

std::string hex(const void* p) { return hex(static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p))); }

}  // namespace wb

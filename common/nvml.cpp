// NVML opened at run time (nvml.hpp says why). The declarations below follow NVML's reference for
// the calls used; the GPU test common.nvml-header compares them with nvml.h where a machine has it.
#include "nvml.hpp"
#include "nvml_abi.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>

namespace wb::nvml {

namespace {

// The library and its entry points, opened once; nullptr members where it lacks one.
struct Library {
  void* handle = nullptr;
  std::string why;  // why it is not usable, when it is not
  abi::Return (*init)() = nullptr;
  abi::Return (*shutdown)() = nullptr;
  const char* (*errorString)(abi::Return) = nullptr;
  abi::Return (*byBusId)(const char*, abi::Device*) = nullptr;
  abi::Return (*currGeneration)(abi::Device, unsigned*) = nullptr;
  abi::Return (*currWidth)(abi::Device, unsigned*) = nullptr;
  abi::Return (*maxGeneration)(abi::Device, unsigned*) = nullptr;
  abi::Return (*maxWidth)(abi::Device, unsigned*) = nullptr;
  abi::Return (*nvlinkState)(abi::Device, unsigned, int*) = nullptr;
  abi::Return (*nvlinkRemote)(abi::Device, unsigned, abi::PciInfo*) = nullptr;
  abi::Return (*fieldValues)(abi::Device, int, abi::FieldValue*) = nullptr;

  ~Library() {
    if (shutdown && why.empty()) shutdown();
    if (handle) dlclose(handle);
  }
};

template <typename F>
void find(void* handle, F& into, const char* name) {
  into = reinterpret_cast<F>(dlsym(handle, name));
}

Library& library() {
  static Library lib;
  static std::once_flag opened;
  std::call_once(opened, [] {
    lib.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib.handle) {
      lib.why = "NVML (libnvidia-ml.so.1, installed with the NVIDIA driver) could not be opened";
      return;
    }
    find(lib.handle, lib.init, "nvmlInit_v2");
    find(lib.handle, lib.shutdown, "nvmlShutdown");
    find(lib.handle, lib.errorString, "nvmlErrorString");
    find(lib.handle, lib.byBusId, "nvmlDeviceGetHandleByPciBusId_v2");
    find(lib.handle, lib.currGeneration, "nvmlDeviceGetCurrPcieLinkGeneration");
    find(lib.handle, lib.currWidth, "nvmlDeviceGetCurrPcieLinkWidth");
    find(lib.handle, lib.maxGeneration, "nvmlDeviceGetMaxPcieLinkGeneration");
    find(lib.handle, lib.maxWidth, "nvmlDeviceGetMaxPcieLinkWidth");
    find(lib.handle, lib.nvlinkState, "nvmlDeviceGetNvLinkState");
    find(lib.handle, lib.nvlinkRemote, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    find(lib.handle, lib.fieldValues, "nvmlDeviceGetFieldValues");
    if (!lib.init || !lib.shutdown || !lib.byBusId) {
      lib.why = "the NVML library found lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2";
      lib.shutdown = nullptr;
      return;
    }
    if (const abi::Return rc = lib.init(); rc != abi::kSuccess) {
      lib.why = "nvmlInit_v2 returned " + std::to_string(rc) +
                (lib.errorString ? std::string(" (") + lib.errorString(rc) + ")" : std::string());
      lib.shutdown = nullptr;
    }
  });
  return lib;
}

std::string failed(const Library& lib, const char* call, abi::Return rc) {
  return std::string(call) + " returned " + std::to_string(rc) +
         (lib.errorString ? std::string(" (") + lib.errorString(rc) + ")" : std::string());
}

std::optional<abi::Device> device(Library& lib, const std::string& busId, std::string& why) {
  if (!lib.why.empty()) return why = lib.why, std::nullopt;
  abi::Device d = nullptr;
  if (const abi::Return rc = lib.byBusId(busId.c_str(), &d); rc != abi::kSuccess)
    return why = failed(lib, "nvmlDeviceGetHandleByPciBusId_v2", rc), std::nullopt;
  return d;
}

// Domain, bus and device of a bus id "dddd:bb:dd.f" (the function is always 0 for a GPU).
bool parseBusId(const std::string& id, unsigned& domain, unsigned& bus, unsigned& dev) {
  unsigned function = 0;
  return std::sscanf(id.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &function) == 4;
}

std::string gigabytes(double bytesPerSecond) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB/s", bytesPerSecond / 1e9);
  return text;
}

}  // namespace

double PcieLink::bytesPerSecond() const {
  // Per lane: Gen1 2.5 GT/s and Gen2 5 GT/s with 8b/10b encoding; Gen3 8, Gen4 16 and Gen5 32 GT/s
  // with 128b/130b; Gen6 64 GT/s in 256-byte flits of which 242 carry data.
  static const double gtPerSecond[] = {0, 2.5, 5, 8, 16, 32, 64};
  static const double efficiency[] = {0, 0.8, 0.8, 128.0 / 130, 128.0 / 130, 128.0 / 130, 242.0 / 256};
  if (generation < 1 || generation > 6) return 0;
  return gtPerSecond[generation] * 1e9 * width * efficiency[generation] / 8;
}

std::string PcieLink::describe() const {
  std::string text = "PCIe Gen" + std::to_string(generation) + " x" + std::to_string(width);
  if (bytesPerSecond() > 0) text += " (" + gigabytes(bytesPerSecond()) + " per direction after encoding)";
  if (nowGeneration && (nowGeneration != generation || nowWidth != width))
    text += ", trained to Gen" + std::to_string(nowGeneration) + " x" + std::to_string(nowWidth) + " when read";
  return text;
}

std::string NvLinks::describe() const {
  return std::to_string(links) + " NVLink" + (links == 1 ? "" : "s") + " of " + gigabytes(bytesPerSecondPerLink) + " (" +
         gigabytes(bytesPerSecond()) + " per direction)";
}

std::optional<PcieLink> pcieLink(const std::string& pciBusId, std::string& why) {
  Library& lib = library();
  const auto d = device(lib, pciBusId, why);
  if (!d) return std::nullopt;
  if (!lib.currGeneration || !lib.currWidth || !lib.maxGeneration || !lib.maxWidth)
    return why = "this NVML lacks the PCIe link queries", std::nullopt;
  PcieLink link;
  const std::pair<abi::Return (*)(abi::Device, unsigned*), unsigned*> queries[] = {
      {lib.currGeneration, &link.nowGeneration}, {lib.currWidth, &link.nowWidth},
      {lib.maxGeneration, &link.generation}, {lib.maxWidth, &link.width}};
  const char* names[] = {"nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth",
                         "nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkWidth"};
  for (int i = 0; i < 4; ++i)
    if (const abi::Return rc = queries[i].first(*d, queries[i].second); rc != abi::kSuccess)
      return why = failed(lib, names[i], rc), std::nullopt;
  if (link.generation == 0 || link.width == 0) return why = "NVML reported a PCIe link of generation or width 0", std::nullopt;
  return link;
}

std::optional<NvLinks> nvlinksBetween(const std::string& fromBusId, const std::string& toBusId, std::string& why) {
  Library& lib = library();
  const auto from = device(lib, fromBusId, why);
  if (!from) return std::nullopt;
  if (!lib.nvlinkState || !lib.nvlinkRemote || !lib.fieldValues)
    return why = "this NVML lacks the NVLink queries", std::nullopt;
  unsigned domain = 0, bus = 0, dev = 0;
  if (!parseBusId(toBusId, domain, bus, dev)) return why = "not a PCI bus id: " + toBusId, std::nullopt;
  NvLinks result;
  for (unsigned link = 0; link < abi::kMaxNvLinks; ++link) {
    int active = 0;
    abi::PciInfo remote{};
    if (lib.nvlinkState(*from, link, &active) != abi::kSuccess || !active) continue;  // no such link, or down
    if (lib.nvlinkRemote(*from, link, &remote) != abi::kSuccess) continue;
    result.links += remote.domain == domain && remote.bus == bus && remote.device == dev;
  }
  if (result.links == 0) return why = "no active NVLink joins " + fromBusId + " to " + toBusId, std::nullopt;
  abi::FieldValue speed{};
  speed.fieldId = abi::kFieldNvLinkSpeedCommon;
  if (const abi::Return rc = lib.fieldValues(*from, 1, &speed); rc != abi::kSuccess || speed.nvmlReturn != abi::kSuccess)
    return why = failed(lib, "nvmlDeviceGetFieldValues(NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON)",
                        rc != abi::kSuccess ? rc : speed.nvmlReturn),
           std::nullopt;
  if (speed.valueType != abi::kValueUnsignedInt || speed.value.uiVal == 0)
    return why = "NVML gave no common NVLink speed", std::nullopt;
  result.bytesPerSecondPerLink = speed.value.uiVal * 1e6;  // MB/s
  return result;
}

}  // namespace wb::nvml

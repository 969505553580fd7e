// The links a GPU is attached by, read from NVML: what a copy's bandwidth is measured against.
//
// NVML (libnvidia-ml.so.1) comes with the NVIDIA driver; its header, nvml.h, comes with the CUDA
// toolkit on some machines and not on others (this course's CI has none). So the library is opened
// at run time, the few calls the course makes are declared here by their documented signatures,
// and a machine without NVML, or an NVML that cannot answer (a virtual machine often cannot read
// the PCIe link), gets a reason instead of a number. Needs no CUDA library.
#pragma once

#include <optional>
#include <string>

namespace wb::nvml {

// A device's PCIe link as NVML reports it. A GPU at rest may train its link down to save power and
// trains it up again under load, so the limit a copy meets is the fastest link the device and its
// slot allow (NVML's "max" link), not the one read at rest.
struct PcieLink {
  unsigned generation = 0, width = 0;        // the fastest this device and this slot allow
  unsigned nowGeneration = 0, nowWidth = 0;  // as the link was when it was read
  // Bytes per second one direction can carry at generation and width, after the line encoding and
  // before packet headers (which a real copy also pays): GT/s per lane x lanes x encoding
  // efficiency / 8. The per-lane rates and encodings are the PCI Express specifications', not
  // NVIDIA's. 0 for a generation this table does not know.
  double bytesPerSecond() const;
  std::string describe() const;  // "PCIe Gen5 x16 (63.0 GB/s per direction after encoding)"
};

// The NVLinks that join two devices, and the rate of one link in one direction.
struct NvLinks {
  unsigned links = 0;               // active links from the first device that end at the second
  double bytesPerSecondPerLink = 0;  // NVML's common NVLink speed of the first device
  double bytesPerSecond() const { return links * bytesPerSecondPerLink; }
  std::string describe() const;  // "18 NVLinks of 26.6 GB/s (478.1 GB/s per direction)"
};

// Each answers for a device named by its PCI bus id (cuDeviceGetPCIBusId's "0000:3b:00.0"), or
// says in why what NVML could not say: not installed, not initialised, not supported for this
// device. NVML is opened and initialised at the first call and shut down at exit.
std::optional<PcieLink> pcieLink(const std::string& pciBusId, std::string& why);
std::optional<NvLinks> nvlinksBetween(const std::string& fromBusId, const std::string& toBusId, std::string& why);

}  // namespace wb::nvml

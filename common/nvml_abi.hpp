// NVML's types and constants as its reference defines them, for the few calls common/nvml.cpp
// makes: the course opens libnvidia-ml.so.1 at run time and cannot count on nvml.h. The GPU test
// common.nvml-header checks each against nvml.h on a machine that has it.
#pragma once

namespace wb::nvml::abi {

using Return = int;  // nvmlReturn_t
constexpr Return kSuccess = 0;  // NVML_SUCCESS
using Device = struct nvmlDevice_st*;  // nvmlDevice_t

constexpr unsigned kMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS (12 before R525: the calls refuse the rest)
constexpr unsigned kFieldNvLinkSpeedCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: MB/s per link
constexpr int kValueUnsignedInt = 1;  // NVML_VALUE_TYPE_UNSIGNED_INT

struct PciInfo {  // nvmlPciInfo_t
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

union Value {  // nvmlValue_t
  double dVal;
  int siVal;
  unsigned uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  unsigned short usVal;
};

struct FieldValue {  // nvmlFieldValue_t
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;  // nvmlValueType_t
  Return nvmlReturn;
  Value value;
};

}  // namespace wb::nvml::abi

// Wrong (R5): takes every CUDA_ERROR_INVALID_VALUE for "a version newer than the driver", without comparing the versions
//
// The reference names that case for INVALID_VALUE, so the code trusts the code alone; but the same
// code for a version the driver supports has another cause, and is turned into an answer that sends
// the caller looking for a newer driver. When the check makes cuGetProcAddress return
// CUDA_ERROR_INVALID_VALUE for CUDA 12.0, its `threw` fails (BeyondDriver came back).
#include "exercises.hpp"

namespace ex12 {

Resolved resolveEntryPoint(const char* symbol, int cudaVersion) {
  Resolved r;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = cuGetProcAddress(symbol, &r.pfn, cudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (rc == CUDA_ERROR_INVALID_VALUE) return {EntryPoint::BeyondDriver, nullptr};
  CU_CHECK(rc);
  switch (status) {
    case CU_GET_PROC_ADDRESS_SUCCESS: r.status = EntryPoint::Found; break;
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: r.status = EntryPoint::NotInVersion; break;
    default: r.status = EntryPoint::NotInDriver; break;
  }
  if (r.status != EntryPoint::Found) r.pfn = nullptr;
  return r;
}

}  // namespace ex12

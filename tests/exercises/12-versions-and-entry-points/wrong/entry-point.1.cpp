// Wrong (R3): reads the pointer instead of the status: "no pointer, so the driver lacks the function"
//
// For cuLibraryLoadData as of 11.8 the driver has the function (from 12.0 on), and the status says
// CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: the caller asked with the wrong version, and would
// blame the driver. The check's `tooOld.status == ex12::EntryPoint::NotInVersion` fails.
#include "exercises.hpp"

namespace ex12 {

Resolved resolveEntryPoint(const char* symbol, int cudaVersion) {
  void* pfn = nullptr;
  const CUresult rc = cuGetProcAddress(symbol, &pfn, cudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  if (rc == CUDA_ERROR_INVALID_VALUE) {
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    if (cudaVersion > driver) return {EntryPoint::BeyondDriver, nullptr};
  }
  CU_CHECK(rc);
  return pfn ? Resolved{EntryPoint::Found, pfn} : Resolved{EntryPoint::NotInDriver, nullptr};
}

}  // namespace ex12

// Wrong (R1): asks with CUDA_VERSION, the version the library was built with, instead of the version it is given
//
// Lesson 12's program asks with CUDA_VERSION, and the parameter looks redundant. But the version
// picks the signature: as of 11.8 cuLibraryLoadData must be NotInVersion, and as of CUDA_VERSION it
// is found. The check's `tooOld.status == ex12::EntryPoint::NotInVersion` fails (and BeyondDriver
// for versions past the driver).
#include "exercises.hpp"

namespace ex12 {

Resolved resolveEntryPoint(const char* symbol, int cudaVersion) {
  Resolved r;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = cuGetProcAddress(symbol, &r.pfn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  if (rc == CUDA_ERROR_INVALID_VALUE) {
    int driver = 0;
    CU_CHECK(cuDriverGetVersion(&driver));
    if (cudaVersion > driver) return {EntryPoint::BeyondDriver, nullptr};
  }
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

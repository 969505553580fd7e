// Reference solution of lesson 12's exercise entry-point (lessons/12-versions-and-entry-points/exercises.cpp).
#include "exercises.hpp"

namespace ex12 {

// The status says why there is no pointer; the pointer alone cannot. A version newer than the driver
// is the one case the reference gives for CUDA_ERROR_INVALID_VALUE: the same code for a version the
// driver supports has another cause (a bad argument), and like any other failure it is thrown.
Resolved resolveEntryPoint(const char* symbol, int cudaVersion) {
  Resolved r;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult rc = cuGetProcAddress(symbol, &r.pfn, cudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);
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

// Wrong (R4): compares only the major versions before the lookup, as minor version compatibility seems to allow
//
// "A 13.0 driver serves 13.x": true of programs (exercise version-check), not of cuGetProcAddress,
// which refuses any version greater than the driver's. Asked as of one minor version past the
// driver, the lookup fails with CUDA_ERROR_INVALID_VALUE, which CU_CHECK throws, and the check's
// BeyondDriver case fails with that error.
#include "exercises.hpp"

namespace ex12 {

Resolved resolveEntryPoint(const char* symbol, int cudaVersion) {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  if (cudaVersion / 1000 > driver / 1000) return {EntryPoint::BeyondDriver, nullptr};
  Resolved r;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CU_CHECK(cuGetProcAddress(symbol, &r.pfn, cudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status));
  switch (status) {
    case CU_GET_PROC_ADDRESS_SUCCESS: r.status = EntryPoint::Found; break;
    case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: r.status = EntryPoint::NotInVersion; break;
    default: r.status = EntryPoint::NotInDriver; break;
  }
  if (r.status != EntryPoint::Found) r.pfn = nullptr;
  return r;
}

}  // namespace ex12

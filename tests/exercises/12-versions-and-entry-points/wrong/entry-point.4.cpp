// Wrong (R4): asks the driver's version first and calls the driver's own version "beyond the driver" (>= for >)
//
// Comparing before the lookup is fine; the off-by-one is not: a library built with the toolkit of
// the driver's own version is told the driver is too old. The check's
// `own.status == ex12::EntryPoint::Found` fails for cuMemAlloc as of the driver's version.
#include "exercises.hpp"

namespace ex12 {

Resolved resolveEntryPoint(const char* symbol, int cudaVersion) {
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  if (cudaVersion >= driver) return {EntryPoint::BeyondDriver, nullptr};
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

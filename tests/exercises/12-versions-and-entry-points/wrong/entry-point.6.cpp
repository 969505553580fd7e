// Wrong (R2): takes every status but success for "asked with the wrong version"
//
// "The call succeeded, so the driver knows the name; no pointer means the version is too old."
// But a name the driver has never had also comes back with CUDA_SUCCESS and a status of its own
// (CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND): the library then tries other versions for a function no
// version has, where it should fall back. In "R1 R2 R3 R4: cuMemAlloc as of the driver's own
// version ...", the unknown name is NotInVersion and `unknown.status == ex12::EntryPoint::NotInDriver` fails.
#include "exercises.hpp"

namespace ex12 {

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
    default: r.status = EntryPoint::NotInVersion; break;  // the driver answered: the version is the problem
  }
  if (r.status != EntryPoint::Found) r.pfn = nullptr;
  return r;
}

}  // namespace ex12

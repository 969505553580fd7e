// Wrong (R1): puts the pool on the device of the current context instead of dev
//
// "The pool is for the device I am working on": cuCtxGetDevice answers for the context that is
// current, which need not be dev's. Asked for device 1 while device 0's context is current, it
// makes a pool on device 0, which device 1's stream cannot allocate from (or gets device 0's
// memory): `ordinal == 1` fails.
// Two devices: with one device, the current context's device is always dev.
#include "exercises.hpp"

namespace ex13 {

CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  (void)dev;
  CUdevice here = 0;
  CU_CHECK(cuCtxGetDevice(&here));
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = here;
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  cuuint64_t keep = workingSetBytes;
  const CUresult rc = cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  if (rc != CUDA_SUCCESS) {
    cuMemPoolDestroy(pool);
    CU_CHECK(rc);
  }
  return pool;
}

}  // namespace ex13

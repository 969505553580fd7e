// Wrong (R5): checks the threshold's set with CU_CHECK, so a pool whose threshold cannot be set is leaked
//
// Each call checked as it is made: when cuMemPoolSetAttribute fails, CU_CHECK throws and the pool,
// already created, is never destroyed. In the check's failure case `left.empty()` fails ("1 memory
// pool more").
#include "exercises.hpp"

namespace ex13 {

CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  cuuint64_t keep = workingSetBytes;
  CU_CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
  return pool;
}

}  // namespace ex13

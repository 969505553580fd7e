// Wrong (R2): creates a pool of its own and leaves its release threshold at the default
//
// "A pool of my own keeps its memory": it does not; the default threshold is 0, and every
// synchronisation gives the working set back, so each step maps it again. `threshold ==
// workingSet` fails (and on driver 580 `reserved[0] >= workingSet` too).
#include "exercises.hpp"

namespace ex13 {

CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  (void)workingSetBytes;
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  return pool;
}

}  // namespace ex13

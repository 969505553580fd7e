// Wrong (R1): resets the variable once per device, in that device's primary context
//
// "The variable lives on the device." Each context has its own copy: the two contexts created on
// device 0 keep theirs, and `left == 0` fails for them.
#include "exercises.hpp"

#include <set>

namespace ex08 {

namespace {

class Pushed {
 public:
  explicit Pushed(CUcontext ctx) { CU_CHECK(cuCtxPushCurrent(ctx)); }
  ~Pushed() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  Pushed(const Pushed&) = delete;
  Pushed& operator=(const Pushed&) = delete;
};

}  // namespace

void resetPerContext(CUlibrary counters, const std::vector<CUcontext>& contexts) {
  std::set<CUdevice> devices;
  for (CUcontext ctx : contexts) {
    Pushed current(ctx);
    CUdevice dev = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    devices.insert(dev);
  }
  for (CUdevice dev : devices) {
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    {
      Pushed current(primary);
      CUdeviceptr address = 0;
      size_t bytes = 0;
      CU_CHECK(cuLibraryGetGlobal(&address, &bytes, counters, "deviceCounter"));
      CU_CHECK(cuMemsetD8(address, 0, bytes));
    }
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  }
}

}  // namespace ex08

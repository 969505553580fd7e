// Wrong (R3): sets the limit to the request every time, also when the FIFO already holds more
//
// "Set it, then read what the driver kept." A request below the FIFO's size shrinks it, and once a
// printf kernel has run the driver refuses even a request the FIFO holds. The check asks for half
// of a FIFO it grew: `setsAfterHalf == sets` fails (and `half == have`, `now == have`).
#include "exercises.hpp"

#include <limits>
#include <stdexcept>

namespace ex24 {

namespace {

// Pushes a context for a scope and pops it at the end, also when a call in between throws, so the
// caller's context stack is as it was.
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

size_t ensurePrintfRoom(CUcontext context, size_t lines, size_t bytesPerLine) {
  if (lines == 0 || bytesPerLine == 0) throw std::invalid_argument("ensurePrintfRoom: lines and bytesPerLine must not be 0");
  if (lines > std::numeric_limits<size_t>::max() / bytesPerLine)
    throw std::invalid_argument("ensurePrintfRoom: lines * bytesPerLine does not fit in a size_t");
  const size_t wanted = lines * bytesPerLine;
  Pushed current(context);
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, wanted));
  size_t have = 0;
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  return have;
}

}  // namespace ex24

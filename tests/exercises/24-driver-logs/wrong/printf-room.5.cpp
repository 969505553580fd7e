// Wrong (R1): refuses a product of 0, and multiplies without checking for overflow
//
// A 0 in either argument makes the product 0, so one test seems to cover them; but lines *
// bytesPerLine wraps silently. SIZE_MAX / 2 + 1 lines of 2 bytes wrap to 0 and are refused, but
// SIZE_MAX / 4096 + 2 lines of 4096 bytes wrap to 4096, which any FIFO holds: the answer is its
// size. `o.invalidArgument` fails for that product (and `made == 0`).
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
  const size_t wanted = lines * bytesPerLine;
  if (wanted == 0) throw std::invalid_argument("ensurePrintfRoom: lines * bytesPerLine must not be 0");
  Pushed current(context);
  size_t have = 0;
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  if (have >= wanted) return have;
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, wanted));
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  return have;
}

}  // namespace ex24

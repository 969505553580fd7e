// Wrong (R4): asks cuCtxSetLimit for twice the request, to leave headroom
//
// "Lines are longer than the caller thinks": the FIFO is grown to double what was asked, which
// holds the request and more. But the task sets it to lines * bytesPerLine; the caller sized the
// FIFO from a measurement, and every context of a process that asks twice as much holds twice the
// device memory it meant to. In "R2 R4: ensurePrintfRoom grows the FIFO ...", `setTo == asked` fails.
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

// The FIFO's size is a limit of the context, and cuCtxGetLimit / cuCtxSetLimit answer for the
// current one: context is pushed for them and popped on every way out. The arguments are checked
// first, the product without computing it (lines * bytesPerLine wraps silently). The FIFO only
// grows: a request it already holds is answered with what it has, without cuCtxSetLimit, which the
// driver refuses once a printf kernel has run in the context.
size_t ensurePrintfRoom(CUcontext context, size_t lines, size_t bytesPerLine) {
  if (lines == 0 || bytesPerLine == 0) throw std::invalid_argument("ensurePrintfRoom: lines and bytesPerLine must not be 0");
  if (lines > std::numeric_limits<size_t>::max() / bytesPerLine)
    throw std::invalid_argument("ensurePrintfRoom: lines * bytesPerLine does not fit in a size_t");
  const size_t wanted = lines * bytesPerLine;
  Pushed current(context);
  size_t have = 0;
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  if (have >= wanted) return have;
  const size_t headroom = wanted <= std::numeric_limits<size_t>::max() / 2 ? 2 * wanted : wanted;
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, headroom));
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));  // what the driver kept: it may clamp or round
  return have;
}

}  // namespace ex24

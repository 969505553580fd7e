// Wrong (R5): pushes context without checking the push
//
// "A push of a context the caller handed over cannot fail." When it does (the ledger fails it), no
// context was pushed: the limit is read (and set) in the caller's own context, and the guard's pop
// then takes the caller's context off its stack. No error is thrown. In "R2 R5: when the push or a
// limit call fails ...", `o.driverError && o.code == f.error` fails for the push (and
// `stackAfter == stack`).
#include "exercises.hpp"

#include <limits>
#include <stdexcept>

namespace ex24 {

namespace {

// Pushes a context for a scope and pops it at the end, also when a call in between throws, so the
// caller's context stack is as it was.
class Pushed {
 public:
  explicit Pushed(CUcontext ctx) { cuCtxPushCurrent(ctx); }
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
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, wanted));
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));  // what the driver kept: it may clamp or round
  return have;
}

}  // namespace ex24

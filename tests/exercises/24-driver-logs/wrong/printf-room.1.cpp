// Wrong (R2): pushes context for the first read only: the limit is set and read back in the caller's current context
//
// The read is where context seems to matter, and the guard's braces close right after it. cuCtxSetLimit
// and cuCtxGetLimit answer for the current context: the caller's primary context gets the larger FIFO
// and context keeps its own. `callerNow == callerBefore` fails (and `got == now`, `now >= asked`).
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
  size_t have = 0;
  {
    Pushed current(context);
    CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  }
  if (have >= wanted) return have;
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, wanted));
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  return have;
}

}  // namespace ex24

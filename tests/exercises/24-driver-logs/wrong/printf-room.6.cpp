// Wrong (R1): checks the product for overflow but lets a 0 through (a request of 0 bytes, which any FIFO holds)
//
// The overflow test is guarded against dividing by 0, and a 0 then looks harmless: 0 bytes are
// always there, so the answer is the FIFO's size. The task refuses it, as a caller's mistake:
// `o.invalidArgument` fails for the zeros (and `made == 0`).
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
  if (bytesPerLine != 0 && lines > std::numeric_limits<size_t>::max() / bytesPerLine)
    throw std::invalid_argument("ensurePrintfRoom: lines * bytesPerLine does not fit in a size_t");
  const size_t wanted = lines * bytesPerLine;
  Pushed current(context);
  size_t have = 0;
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  if (have >= wanted) return have;
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, wanted));
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  return have;
}

}  // namespace ex24

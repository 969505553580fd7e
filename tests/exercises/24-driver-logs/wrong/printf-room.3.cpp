// Wrong (R2): pushes and pops context by hand with CU_CHECK between them, so a refused call leaves it pushed
//
// Right as long as nothing fails. When a limit call fails (the ledger fails cuCtxGetLimit, or the
// driver refuses the size after a printf kernel), CU_CHECK throws between the push and the pop and
// context stays on top of the caller's stack: `stackAfter == stack` fails after the failure.
#include "exercises.hpp"

#include <limits>
#include <stdexcept>

namespace ex24 {

size_t ensurePrintfRoom(CUcontext context, size_t lines, size_t bytesPerLine) {
  if (lines == 0 || bytesPerLine == 0) throw std::invalid_argument("ensurePrintfRoom: lines and bytesPerLine must not be 0");
  if (lines > std::numeric_limits<size_t>::max() / bytesPerLine)
    throw std::invalid_argument("ensurePrintfRoom: lines * bytesPerLine does not fit in a size_t");
  const size_t wanted = lines * bytesPerLine;
  CU_CHECK(cuCtxPushCurrent(context));
  size_t have = 0;
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  if (have < wanted) {
    CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, wanted));
    CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  }
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
  return have;
}

}  // namespace ex24

// Wrong (R2): makes context current with cuCtxSetCurrent, and leaves no context current afterwards
//
// "Bind it, work, unbind." cuCtxSetCurrent replaces the top of the caller's stack instead of pushing
// onto it, and cuCtxSetCurrent(nullptr) then pops it: the caller's primary context is gone from its
// stack. `stackAfter == stack` fails (and `setCurrentsAfter == setCurrents`).
#include "exercises.hpp"

#include <limits>
#include <stdexcept>

namespace ex24 {

size_t ensurePrintfRoom(CUcontext context, size_t lines, size_t bytesPerLine) {
  if (lines == 0 || bytesPerLine == 0) throw std::invalid_argument("ensurePrintfRoom: lines and bytesPerLine must not be 0");
  if (lines > std::numeric_limits<size_t>::max() / bytesPerLine)
    throw std::invalid_argument("ensurePrintfRoom: lines * bytesPerLine does not fit in a size_t");
  const size_t wanted = lines * bytesPerLine;
  CU_CHECK(cuCtxSetCurrent(context));
  size_t have = 0;
  CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  if (have < wanted) {
    CU_CHECK(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, wanted));
    CU_CHECK(cuCtxGetLimit(&have, CU_LIMIT_PRINTF_FIFO_SIZE));
  }
  CU_CHECK(cuCtxSetCurrent(nullptr));
  return have;
}

}  // namespace ex24

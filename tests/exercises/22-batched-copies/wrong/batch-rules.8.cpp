// Wrong (R9): tests "greater than the previous" as "at least the previous + 1", a sum that wraps
//
// `next < previous + 1` reads as the rule, and is right until previous is SIZE_MAX: the sum wraps to
// 0 and two equal indices of SIZE_MAX pass as increasing. In "R1 R2 R3 R4 R5 R6 R7 R9: every rule
// broken alone ...", {0, SIZE_MAX, SIZE_MAX} is answered IndexPastLastCopy where the rules say
// IndexNotIncreasing at 2.
#include "exercises.hpp"

#include <cstdint>

namespace ex22 {

// The rules in the order the task lists them. Comparisons only, never a sum: no value can wrap.
BatchCheck checkBatch(size_t count, const std::vector<AttrEntry>& entries) {
  const size_t n = entries.size();
  if (n == 0) return {BatchFault::NoAttributes, SIZE_MAX};
  if (n > count) return {BatchFault::MoreAttributesThanCopies, SIZE_MAX};
  if (entries[0].firstCopy != 0) return {BatchFault::FirstIndexNotZero, 0};
  for (size_t k = 1; k < n; ++k)
    if (entries[k].firstCopy < entries[k - 1].firstCopy + 1) return {BatchFault::IndexNotIncreasing, k};
  if (entries[n - 1].firstCopy >= count) return {BatchFault::IndexPastLastCopy, n - 1};
  for (size_t k = 0; k < n; ++k) {
    const unsigned order = entries[k].srcAccessOrder;
    if (order < 1 || order > 3) return {BatchFault::InvalidAccessOrder, k};  // STREAM 1, DURING_API_CALL 2, ANY 3
  }
  return {BatchFault::None, SIZE_MAX};
}

}  // namespace ex22

// Wrong (R3): lets the first entry start past copy 0
//
// "The copies before the first entry take the defaults", as a sparse table would have it; but the
// reference asks that attrsIdxs[0] be 0, so that every copy has attributes. In "R1 R2 R3 R4 R5 R6 R7
// R9: every rule broken alone ...", {1, 2} is answered None where the rules say FirstIndexNotZero.
#include "exercises.hpp"

#include <cstdint>

namespace ex22 {

// The rules in the order the task lists them. Comparisons only, never a sum: no value can wrap.
BatchCheck checkBatch(size_t count, const std::vector<AttrEntry>& entries) {
  const size_t n = entries.size();
  if (n == 0) return {BatchFault::NoAttributes, SIZE_MAX};
  if (n > count) return {BatchFault::MoreAttributesThanCopies, SIZE_MAX};
  for (size_t k = 1; k < n; ++k)
    if (entries[k].firstCopy <= entries[k - 1].firstCopy) return {BatchFault::IndexNotIncreasing, k};
  if (entries[n - 1].firstCopy >= count) return {BatchFault::IndexPastLastCopy, n - 1};
  for (size_t k = 0; k < n; ++k) {
    const unsigned order = entries[k].srcAccessOrder;
    if (order < 1 || order > 3) return {BatchFault::InvalidAccessOrder, k};  // STREAM 1, DURING_API_CALL 2, ANY 3
  }
  return {BatchFault::None, SIZE_MAX};
}

}  // namespace ex22

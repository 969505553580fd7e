// Wrong (R1): takes an empty list of attributes for "the defaults", and lets it through
//
// Many CUDA calls take no attributes to mean default ones; cuMemcpyBatchAsync does not: every copy
// needs attributes, and numAttrs 0 is refused. In "R1 R2 R3 R4 R5 R6 R7 R9: every rule broken alone
// ...", the batch {count 4, no entries} is answered None where the rules say NoAttributes.
#include "exercises.hpp"

#include <cstdint>

namespace ex22 {

// The rules in the order the task lists them. Comparisons only, never a sum: no value can wrap.
BatchCheck checkBatch(size_t count, const std::vector<AttrEntry>& entries) {
  const size_t n = entries.size();
  if (n == 0) return {BatchFault::None, SIZE_MAX};  // no attributes: the defaults
  if (n > count) return {BatchFault::MoreAttributesThanCopies, SIZE_MAX};
  if (entries[0].firstCopy != 0) return {BatchFault::FirstIndexNotZero, 0};
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

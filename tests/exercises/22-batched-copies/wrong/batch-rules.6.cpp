// Wrong (R8): checks the access orders first, then the indices
//
// Each rule on its own is right, and a batch that breaks one rule gets the right answer; a batch
// that breaks an index rule and an order rule gets InvalidAccessOrder where the task's order says
// the index rule wins. The check's two-rule cases fail.
#include "exercises.hpp"

#include <cstdint>

namespace ex22 {

BatchCheck checkBatch(size_t count, const std::vector<AttrEntry>& entries) {
  const size_t n = entries.size();
  if (n == 0) return {BatchFault::NoAttributes, SIZE_MAX};
  if (n > count) return {BatchFault::MoreAttributesThanCopies, SIZE_MAX};
  for (size_t k = 0; k < n; ++k) {
    const unsigned order = entries[k].srcAccessOrder;
    if (order < 1 || order > 3) return {BatchFault::InvalidAccessOrder, k};  // STREAM 1, DURING_API_CALL 2, ANY 3
  }
  if (entries[0].firstCopy != 0) return {BatchFault::FirstIndexNotZero, 0};
  for (size_t k = 1; k < n; ++k)
    if (entries[k].firstCopy <= entries[k - 1].firstCopy) return {BatchFault::IndexNotIncreasing, k};
  if (entries[n - 1].firstCopy >= count) return {BatchFault::IndexPastLastCopy, n - 1};
  return {BatchFault::None, SIZE_MAX};
}

}  // namespace ex22

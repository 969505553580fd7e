// Wrong (R7): reports the first copy an invalid attribute applies to, not the entry's position
//
// 12.8's failIdx named a copy, so "where" reads as a copy index here too: for an invalid
// srcAccessOrder at entry k this returns attrsIdxs[k]. The task asks for k; `got.at == want.at`
// fails at every invalid order past entry 0.
#include "exercises.hpp"

#include <cstdint>

namespace ex22 {

BatchCheck checkBatch(size_t count, const std::vector<AttrEntry>& entries) {
  const size_t n = entries.size();
  if (n == 0) return {BatchFault::NoAttributes, SIZE_MAX};
  if (n > count) return {BatchFault::MoreAttributesThanCopies, SIZE_MAX};
  if (entries[0].firstCopy != 0) return {BatchFault::FirstIndexNotZero, 0};
  for (size_t k = 1; k < n; ++k)
    if (entries[k].firstCopy <= entries[k - 1].firstCopy) return {BatchFault::IndexNotIncreasing, k};
  if (entries[n - 1].firstCopy >= count) return {BatchFault::IndexPastLastCopy, n - 1};
  for (size_t k = 0; k < n; ++k) {
    const unsigned order = entries[k].srcAccessOrder;
    if (order < 1 || order > 3) return {BatchFault::InvalidAccessOrder, entries[k].firstCopy};  // STREAM 1, DURING_API_CALL 2, ANY 3
  }
  return {BatchFault::None, SIZE_MAX};
}

}  // namespace ex22

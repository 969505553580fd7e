// Wrong (R4): takes equal neighbouring indices as increasing (< where <= belongs)
//
// "Each entry must be greater than the previous": the comparison written the way it reads, as
// `next < previous` for a fault, lets {0, 3, 3} through. Two entries that start at the same copy
// give it two sets of attributes. The check's case of equal neighbours expects IndexNotIncreasing.
#include "exercises.hpp"

#include <cstdint>

namespace ex22 {

BatchCheck checkBatch(size_t count, const std::vector<AttrEntry>& entries) {
  const size_t n = entries.size();
  if (n == 0) return {BatchFault::NoAttributes, SIZE_MAX};
  if (n > count) return {BatchFault::MoreAttributesThanCopies, SIZE_MAX};
  if (entries[0].firstCopy != 0) return {BatchFault::FirstIndexNotZero, 0};
  for (size_t k = 1; k < n; ++k)
    if (entries[k].firstCopy < entries[k - 1].firstCopy) return {BatchFault::IndexNotIncreasing, k};
  if (entries[n - 1].firstCopy >= count) return {BatchFault::IndexPastLastCopy, n - 1};
  for (size_t k = 0; k < n; ++k) {
    const unsigned order = entries[k].srcAccessOrder;
    if (order < 1 || order > 3) return {BatchFault::InvalidAccessOrder, k};  // STREAM 1, DURING_API_CALL 2, ANY 3
  }
  return {BatchFault::None, SIZE_MAX};
}

}  // namespace ex22

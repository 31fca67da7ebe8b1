// How a buffer of `count` elements splits into one contiguous block per rank: the layout shared by
// the ring algorithms, reduce-scatter, and the parameter server's shards.
#pragma once

#include <cstddef>

namespace switchyard {

/// @brief One rank's block of a partitioned buffer: elements [offset, offset + size).
struct block {
  std::size_t offset = 0;
  std::size_t size = 0;
};

/// @brief Block `index` of `count` elements split into `parts` blocks as evenly as possible:
/// the first `count % parts` blocks hold one element more than the others.
/// @code
/// block_of(10, 3, 0) == {0, 4};  block_of(10, 3, 1) == {4, 3};  block_of(10, 3, 2) == {7, 3};
/// @endcode
constexpr block block_of(std::size_t count, std::size_t parts, std::size_t index) noexcept {
  const std::size_t base = count / parts;
  const std::size_t extra = count % parts;
  const std::size_t offset = index * base + (index < extra ? index : extra);
  return {offset, base + (index < extra ? 1 : 0)};
}

}  // namespace switchyard

// Deprecated forwarding header, kept for the 0.2 series: the block layout moved to
// core/partition.hpp, and `collective::block` and `collective::block_of` became
// `switchyard::block` and `switchyard::block_of`, shared with the transports and the parameter
// server's shards.
#pragma once

#pragma GCC warning "switchyard/collective/partition.hpp is deprecated: include switchyard/core/partition.hpp (collective::block and collective::block_of are switchyard::block and switchyard::block_of)"

#include <switchyard/core/partition.hpp>

#include <cstddef>

namespace switchyard::collective {

/// @brief Deprecated: `switchyard::block`.
using block [[deprecated("use switchyard::block (switchyard/core/partition.hpp)")]] = switchyard::block;

/// @brief Deprecated: `switchyard::block_of`.
[[deprecated("use switchyard::block_of (switchyard/core/partition.hpp)")]] constexpr switchyard::block block_of(
    std::size_t count, std::size_t parts, std::size_t index) noexcept {
  return switchyard::block_of(count, parts, index);
}

}  // namespace switchyard::collective

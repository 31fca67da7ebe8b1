// The sizes by which `algorithm::automatic` chooses an all-reduce algorithm when it takes neither
// the transport's native one nor the hierarchical one, and a broadcast algorithm when it does not
// take the native one (docs/collectives.md#the-automatic-rule).
#pragma once

#include <switchyard/collective/detail/recursive_doubling.hpp>

#include <bit>
#include <cstddef>

namespace switchyard::collective {

/// @brief Below this many bytes `algorithm::automatic` picks recursive doubling over the ring (or
/// the hierarchical algorithm) when it does not take the transport's native all-reduce
/// (docs/performance.md has the measurements).
inline constexpr std::size_t ring_threshold_bytes = std::size_t{1} << 16;

/// @brief From this many ranks `algorithm::automatic` may take halving-doubling over the ring.
inline constexpr int halving_doubling_min_ranks = 8;

/// @brief Whether `algorithm::automatic`, choosing for a buffer of `bytes` (at least
/// `ring_threshold_bytes`) between the ring and halving-doubling over `ranks` ranks, takes
/// halving-doubling. Both move 2(p-1)/p of the buffer per rank; the ring pays 2(p-1) latencies,
/// halving-doubling 2 log2(p') over the largest power of two p' <= p, plus 2 latencies and 2 whole
/// buffers to fold in the p - p' other ranks. So: from `halving_doubling_min_ranks` ranks on, always
/// at a power of two, and elsewhere while those 2 buffers cost less than the 2(p - 2 - log2 p')
/// latencies saved, taking a latency to be worth `ring_threshold_bytes`: below
/// (p - 2 - log2 p') x 64 KiB. The hierarchical all-reduce chooses its step across nodes by it too.
/// @code
/// prefers_halving_doubling(1 << 20, 4);     // false: the ring below 8 ranks
/// prefers_halving_doubling(1 << 20, 256);   // true: a power of two
/// prefers_halving_doubling(1 << 20, 12);    // false: 1 MiB >= (12 - 2 - 3) x 64 KiB
/// @endcode
[[nodiscard]] constexpr bool prefers_halving_doubling(std::size_t bytes, int ranks) noexcept {
  if (ranks < halving_doubling_min_ranks) return false;
  const int power = detail::power_of_two_below(ranks);
  if (power == ranks) return true;
  const auto saved = static_cast<std::size_t>(ranks - 2 - std::countr_zero(static_cast<unsigned>(power)));
  return bytes < saved * ring_threshold_bytes;
}

/// @brief Whether `algorithm::automatic`, broadcasting `bytes` over `ranks` ranks without the
/// transport's native broadcast, scatters and all-gathers rather than sending the whole buffer down
/// the binomial tree. With L = ceil(log2 p) rounds, the tree costs L latencies and L buffers, the
/// scatter and the all-gather 2L latencies and about 2 buffers: so, from
/// `halving_doubling_min_ranks` ranks on (below, at most one buffer would be saved, and the
/// 4-host emulated cluster keeps the tree), when the L - 2 buffers saved cost more than the
/// L latencies added, taking a latency to be worth `ring_threshold_bytes`:
/// bytes x (L - 2) > L x 64 KiB.
/// @code
/// prefers_scatter_allgather(1 << 20, 4);      // false: the tree below 8 ranks
/// prefers_scatter_allgather(1 << 20, 128);    // true: 1 MiB x 5 > 7 x 64 KiB
/// prefers_scatter_allgather(64 << 10, 128);   // false: 64 KiB x 5 < 7 x 64 KiB
/// @endcode
[[nodiscard]] constexpr bool prefers_scatter_allgather(std::size_t bytes, int ranks) noexcept {
  if (ranks < halving_doubling_min_ranks) return false;
  const auto rounds = static_cast<std::size_t>(std::bit_width(static_cast<unsigned>(ranks - 1)));
  return bytes * (rounds - 2) > rounds * ring_threshold_bytes;
}

}  // namespace switchyard::collective

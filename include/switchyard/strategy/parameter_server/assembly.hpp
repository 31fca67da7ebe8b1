// The whole optimizer state of a parameter server, put together on every rank from the shards
// its servers own.
#pragma once

#include <switchyard/collective/allgather.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/optim/optimizer_state.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace switchyard::strategy {

/// @brief Collective over `t`: the optimizer state of all `parameters` parameters, on every rank,
/// assembled from the shards of the last `servers` ranks.
///
/// Server s (rank `t.size() - servers + s`) owns shard s, `block_of(parameters, servers, s)`, and
/// passes its optimizer's state of that shard as `own`; the other ranks' `own` is not read, but
/// must have the same number of slots. One all-gather brings every server's step and clock to
/// every rank and one per slot the servers' shards (`collective::allgather_blocks`), and every
/// rank puts the shards together in order (`optimizer_state::assemble`), so every rank ends with
/// the same state. Every rank raises `usage_error` when the servers' steps or clocks differ, or
/// when a server's slots do not hold its shard's size.
/// @code
/// auto whole = switchyard::strategy::assemble_sharded_state(t, optimizer.export_state(), arena, 2);
/// @endcode
template <class Transport, class T>
[[nodiscard]] optim::optimizer_state<T> assemble_sharded_state(Transport& t, const optim::optimizer_state<T>& own,
                                                               std::size_t parameters, std::size_t servers) {
  const auto ranks = static_cast<std::size_t>(t.size());
  const std::size_t first_server = ranks - servers;
  const auto rank = static_cast<std::size_t>(t.rank());
  const auto shard_of = [&](std::size_t r) {
    return r < first_server ? block{0, 0} : block_of(parameters, servers, r - first_server);
  };
  // A server whose slots do not fit its shard says so in the same all-gather as its counters, so
  // that every rank raises the same error instead of leaving the others in the next collective.
  const block mine = shard_of(rank);
  const bool fits = rank < first_server || std::all_of(own.slots.begin(), own.slots.end(), [&](const auto& slot) {
                      return slot.size() == mine.size;
                    });
  const std::array<std::uint64_t, 3> counters{own.step, own.clock, fits ? 0U : 1U};
  std::vector<std::uint64_t> every_counter(3 * ranks);
  collective::allgather(t, counters, every_counter);
  for (std::size_t r = first_server; r < ranks; ++r) {
    if (every_counter[3 * r + 2] != 0) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          "assemble_sharded_state on rank ", rank, ": the optimizer state of server rank ", r,
          " does not fit its shard of ", shard_of(r).size, " parameters"));
    }
  }
  std::vector<std::vector<T>> slots(own.slots.size(), std::vector<T>(parameters));
  for (std::size_t k = 0; k < slots.size(); ++k) {
    if (rank >= first_server) {
      std::copy(own.slots[k].begin(), own.slots[k].end(), slots[k].begin() + static_cast<std::ptrdiff_t>(mine.offset));
    }
    collective::allgather_blocks(t, slots[k], shard_of);
  }
  std::vector<optim::optimizer_state<T>> shards(servers);
  for (std::size_t s = 0; s < servers; ++s) {
    const block b = block_of(parameters, servers, s);
    optim::optimizer_state<T>& piece = shards[s];
    piece.size = b.size;
    piece.step = every_counter[3 * (first_server + s)];
    piece.clock = every_counter[3 * (first_server + s) + 1];
    for (const std::vector<T>& slot : slots) {
      const auto begin = slot.begin() + static_cast<std::ptrdiff_t>(b.offset);
      piece.slots.emplace_back(begin, begin + static_cast<std::ptrdiff_t>(b.size));
    }
  }
  return optim::optimizer_state<T>::assemble(shards);
}

}  // namespace switchyard::strategy

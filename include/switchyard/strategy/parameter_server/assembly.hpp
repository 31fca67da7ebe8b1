// The whole optimizer state of a parameter server, put together on every rank from the shards
// its servers own.
#pragma once

#include <switchyard/collective/broadcast.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/optim/optimizer_state.hpp>

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
/// must have the same number of slots. Each server broadcasts its step, clock and slots, and
/// every rank puts the shards together in order (`optimizer_state::assemble`), so every rank ends
/// with the same state, which raises `usage_error` when the servers' steps or clocks differ.
/// @code
/// auto whole = switchyard::strategy::assemble_sharded_state(t, optimizer.export_state(), arena, 2);
/// @endcode
template <class Transport, class T>
[[nodiscard]] optim::optimizer_state<T> assemble_sharded_state(Transport& t, const optim::optimizer_state<T>& own,
                                                               std::size_t parameters, std::size_t servers) {
  const auto ranks = static_cast<std::size_t>(t.size());
  const std::size_t first_server = ranks - servers;
  const auto rank = static_cast<std::size_t>(t.rank());
  const std::size_t mine = rank >= first_server ? rank - first_server : servers;
  std::vector<optim::optimizer_state<T>> shards(servers);
  for (std::size_t s = 0; s < servers; ++s) {
    const block b = block_of(parameters, servers, s);
    const int root = static_cast<int>(first_server + s);
    optim::optimizer_state<T>& piece = shards[s];
    piece.size = b.size;
    piece.slots.assign(own.slots.size(), std::vector<T>(b.size));
    std::array<std::uint64_t, 2> counters{s == mine ? own.step : 0, s == mine ? own.clock : 0};
    collective::broadcast(t, counters, root);
    piece.step = counters[0];
    piece.clock = counters[1];
    for (std::size_t k = 0; k < piece.slots.size(); ++k) {
      if (s == mine) piece.slots[k] = own.slots[k];
      collective::broadcast(t, piece.slots[k], root);
    }
  }
  return optim::optimizer_state<T>::assemble(shards);
}

}  // namespace switchyard::strategy

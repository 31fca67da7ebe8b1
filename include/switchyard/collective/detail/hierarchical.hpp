// The hierarchical all-reduce: reduce-scatter inside each node, an all-reduce of each slice among
// its owners across the nodes (the ring, or halving-doubling over many nodes), all-gather inside
// each node.
#pragma once

#include <switchyard/collective/choice.hpp>
#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/halving_doubling.hpp>
#include <switchyard/collective/detail/ring.hpp>
#include <switchyard/collective/node_groups.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/core/partition.hpp>

#include <algorithm>
#include <cstddef>
#include <span>

namespace switchyard::collective::detail {

// The buffer is cut into `groups.slices()` slices. A node of m ranks handles them in rounds of m
// consecutive slices: in round k, block b of its reduce-scatter and all-gather is slice k * m + b
// (an empty block past the last slice), so local rank l ends the reduce-scatter with the slices
// s = l (mod m) that it owns, each reduced over the node. Every element is then folded in a fixed
// order (the node's ring, then the ring or halving-doubling of the slice's owners) by one rank,
// whose bits every other rank copies: all replicas end identical.
template <class Transport, class T, class Op>
void hierarchical_allreduce(Transport& t, node_groups<Transport>& groups, std::span<T> data, Op op) {
  const auto slices = static_cast<std::size_t>(groups.slices());
  const auto slice = [&](std::size_t s) { return switchyard::block_of(data.size(), slices, s); };
  Transport& node = groups.node();
  const auto m = static_cast<std::size_t>(node.size());
  const std::size_t rounds = (slices + m - 1) / m;
  // Block b of round k, at its offset in `data`.
  const auto round_block = [&](std::size_t k, std::size_t b) {
    const std::size_t s = k * m + b;
    return s < slices ? slice(s) : switchyard::block{data.size(), 0};
  };

  for (std::size_t k = 0; k < rounds && m > 1; ++k) {
    const switchyard::block first = slice(k * m);
    const switchyard::block last = slice(std::min(slices, k * m + m) - 1);
    const std::span<T> region = data.subspan(first.offset, last.offset + last.size - first.offset);
    // The first slice of a round is its largest (core/partition.hpp).
    ring_reduce_scatter(
        node, region,
        [&](std::size_t b) {
          const switchyard::block in_data = round_block(k, b);
          return in_data.size == 0 ? switchyard::block{region.size(), 0}
                                   : switchyard::block{in_data.offset - first.offset, in_data.size};
        },
        first.size, op);
  }

  const std::span<const int> owned = groups.owned_slices();
  for (std::size_t i = 0; i < owned.size(); ++i) {
    const switchyard::block of_slice = slice(static_cast<std::size_t>(owned[i]));
    const std::span<T> part = data.subspan(of_slice.offset, of_slice.size);
    Transport& across = groups.across(i);
    const auto nodes = static_cast<std::size_t>(across.size());
    if (prefers_halving_doubling(part.size_bytes(), across.size())) {
      halving_doubling_allreduce(across, part, op, t.size());
      continue;
    }
    ring_reduce_scatter(across, part, op);
    const switchyard::block mine = switchyard::block_of(part.size(), nodes, static_cast<std::size_t>(across.rank()));
    finalize_all<Op>(part.subspan(mine.offset, mine.size), t.size());
    ring_allgather(across, part, [&](std::size_t b) { return switchyard::block_of(part.size(), nodes, b); });
  }

  for (std::size_t k = 0; k < rounds && m > 1; ++k) {
    ring_allgather(node, data, [&](std::size_t b) { return round_block(k, b); });
  }
}

}  // namespace switchyard::collective::detail

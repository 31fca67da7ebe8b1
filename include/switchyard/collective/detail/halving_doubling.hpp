// Rabenseifner's all-reduce: a reduce-scatter by recursive halving, then an all-gather by
// recursive doubling, over the power-of-two group of recursive_doubling.hpp. Moves 2(p-1)/p of
// the buffer per rank, as the ring does, in 2 log2(p) rounds instead of 2(p-1).
#pragma once

#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/recursive_doubling.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/core/partition.hpp>

#include <array>
#include <cstddef>
#include <span>

namespace switchyard::collective::detail {

// The buffer splits into `power` blocks (core/partition.hpp). A rank holds a range of blocks,
// all of them at first; at distance 1, 2, 4, ... it keeps the lower half of its range when its
// virtual rank has that bit clear, the upper half otherwise, and folds its partner's copy of the
// kept half in, lower virtual rank first. Partners at distance d agree on the bits below d, so
// they hold the same range, and every element is folded in rank order on the one rank that ends
// with its block; that rank applies the final step, and the all-gather retraces the halvings
// backwards, copying. So every replica gets the same bits, for any operation. The final step
// divides by `contributors`: the ranks whose values the buffer already holds, when `t` is a
// group of a larger reduction (the hierarchical all-reduce's ranks across nodes).
template <class Transport, class T, class Op>
void halving_doubling_allreduce(Transport& t, std::span<T> data, Op op, int contributors) {
  over_power_of_two(t, data, op, [&](int virtual_rank, int power, auto real_rank) {
    struct range {
      std::size_t first = 0;
      std::size_t last = 0;  // one past
    };
    const auto parts = static_cast<std::size_t>(power);
    auto elements = [&](range b) {
      const std::size_t begin = switchyard::block_of(data.size(), parts, b.first).offset;
      const std::size_t end = b.last == parts ? data.size() : switchyard::block_of(data.size(), parts, b.last).offset;
      return data.subspan(begin, end - begin);
    };
    // held[k]: the range held before round k; at most 30 rounds for an int world size.
    std::array<range, 32> held{};
    range mine{0, parts};
    std::span<T> incoming = scratch<T>(elements({0, (parts + 1) / 2}).size(), 0);
    int rounds = 0;
    for (int distance = 1; distance < power; distance *= 2, ++rounds) {
      held[static_cast<std::size_t>(rounds)] = mine;
      const int partner = virtual_rank ^ distance;
      const std::size_t middle = (mine.first + mine.last) / 2;
      const bool keep_lower = (virtual_rank & distance) == 0;
      const range kept = keep_lower ? range{mine.first, middle} : range{middle, mine.last};
      const range given = keep_lower ? range{middle, mine.last} : range{mine.first, middle};
      std::span<T> target = elements(kept);
      auto receive = t.irecv(incoming.first(target.size()), real_rank(partner), allreduce_tag);
      auto send = t.isend(std::span<const T>(elements(given)), real_rank(partner), allreduce_tag);
      receive.wait();
      const bool mine_is_lower = virtual_rank < partner;
      for (std::size_t i = 0; i < target.size(); ++i) {
        target[i] = mine_is_lower ? op(target[i], incoming[i]) : op(incoming[i], target[i]);
      }
      send.wait();
      mine = kept;
    }
    finalize_all<Op>(elements(mine), contributors);
    for (int k = rounds - 1; k >= 0; --k) {
      const int partner = virtual_rank ^ (1 << k);
      const range before = held[static_cast<std::size_t>(k)];
      const range theirs = mine.first == before.first ? range{mine.last, before.last} : range{before.first, mine.first};
      auto receive = t.irecv(elements(theirs), real_rank(partner), allreduce_tag);
      auto send = t.isend(std::span<const T>(elements(mine)), real_rank(partner), allreduce_tag);
      receive.wait();
      send.wait();
      mine = before;
    }
  });
}

template <class Transport, class T, class Op>
void halving_doubling_allreduce(Transport& t, std::span<T> data, Op op) {
  halving_doubling_allreduce(t, data, op, t.size());
}

}  // namespace switchyard::collective::detail

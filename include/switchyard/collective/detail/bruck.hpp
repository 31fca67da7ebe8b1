// Bruck's all-gather: ceil(log2 p) rounds at doubling distances for any world size, moving the
// (p-1)/p of the result every all-gather must receive; the ring takes p - 1 rounds for the same bytes.
#pragma once

#include <switchyard/collective/choice.hpp>
#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/ring.hpp>
#include <switchyard/core/partition.hpp>

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <span>

namespace switchyard::collective::detail {

// The blocks first, first + 1, ..., first + count - 1 (mod p) of `data`, where `of(b)` is block b
// (core/partition.hpp) and the blocks tile `data` in rank order: one stretch of `data`, or two
// when the run wraps past the last block. Sender and receiver that name the same blocks split them
// at the same block, so a run travels as one or two messages that match piece by piece.
template <class T>
struct cyclic_run {
  std::array<std::span<T>, 2> piece;
  std::size_t pieces;
};

template <class T, std::invocable<std::size_t> BlockOf>
cyclic_run<T> cyclic_blocks(std::span<T> data, BlockOf& of, std::size_t p, std::size_t first, std::size_t count) {
  // Blocks from .. to - 1 (from < to <= p): one stretch of `data`.
  const auto stretch = [&](std::size_t from, std::size_t to) {
    const switchyard::block begin = of(from);
    const switchyard::block end = of(to - 1);
    return data.subspan(begin.offset, end.offset + end.size - begin.offset);
  };
  const std::size_t before_wrap = std::min(count, p - first);
  if (before_wrap == count) return {{stretch(first, first + count), std::span<T>()}, 1};
  return {{stretch(first, p), stretch(0, count - before_wrap)}, 2};
}

// `of(b)` is block b of `data`, one per rank: the blocks tile `data` in rank order, each starting
// where the one before ends, and may be empty; rank r has filled block r.
// After round k (distance d = 2^k) rank r holds the blocks r, r+1, ..., r+2d-1 (mod p): in each
// round it sends the first min(d, p-d) of the blocks it holds, counted from its own, to rank r - d
// and receives as many from rank r + d, which are the next ones in its count. Blocks are counted
// cyclically, so a run of them may wrap past the last rank (`cyclic_blocks`). Everything lands in
// place, with no rotation and no scratch.
template <class Transport, class T, std::invocable<std::size_t> BlockOf>
void bruck_allgather(Transport& t, std::span<T> data, BlockOf of, int tag = allgather_tag) {
  const auto p = static_cast<std::size_t>(t.size());
  const auto r = static_cast<std::size_t>(t.rank());
  using request = request_t<Transport, T>;
  for (std::size_t distance = 1; distance < p; distance *= 2) {
    const std::size_t count = std::min(distance, p - distance);
    const int to = static_cast<int>((r + p - distance) % p);
    const int from = static_cast<int>((r + distance) % p);
    const cyclic_run<T> out = cyclic_blocks(data, of, p, r, count);
    const cyclic_run<T> in = cyclic_blocks(data, of, p, (r + distance) % p, count);
    std::array<request, 2> receives;
    std::array<request, 2> sends;
    for (std::size_t i = 0; i < in.pieces; ++i) receives[i] = t.irecv(in.piece[i], from, tag);
    for (std::size_t i = 0; i < out.pieces; ++i) sends[i] = t.isend(std::span<const T>(out.piece[i]), to, tag);
    for (std::size_t i = 0; i < in.pieces; ++i) receives[i].wait();
    for (std::size_t i = 0; i < out.pieces; ++i) sends[i].wait();
  }
}

// Whether an all-gather that chooses for itself takes Bruck's (from `halving_doubling_min_ranks`
// ranks on, collective/choice.hpp) or the ring.
inline bool prefers_bruck(int ranks) noexcept { return ranks >= halving_doubling_min_ranks; }

// The library's all-gather in place over the blocks `of`: Bruck's or the ring.
template <class Transport, class T, std::invocable<std::size_t> BlockOf>
void allgather_in_place(Transport& t, std::span<T> data, BlockOf of, bool bruck, int tag = allgather_tag) {
  if (bruck) {
    bruck_allgather(t, data, of, tag);
  } else {
    ring_allgather(t, data, of, tag);
  }
}

}  // namespace switchyard::collective::detail

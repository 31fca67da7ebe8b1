// The two halves of the ring all-reduce, usable on their own: reduce-scatter (rank r ends with
// block r reduced over all ranks) and all-gather in place (every rank ends with every block).
#pragma once

#include <switchyard/collective/detail/common.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/core/operations.hpp>

#include <algorithm>
#include <cstddef>
#include <span>

namespace switchyard::collective::detail {

// Segments of this many bytes let a rank reduce one segment while the next is in flight.
inline constexpr std::size_t ring_segment_bytes = std::size_t{1} << 17;

inline std::size_t ring_index(int rank, int shift, int ranks) {
  return static_cast<std::size_t>(((rank + shift) % ranks + ranks) % ranks);
}

// After n - 1 steps rank r holds block `of(r)` of `data` reduced over every rank, folded in ring
// order. `largest` bounds every block's size, so that every rank derives the same number of
// segments per step.
template <class Transport, class T, class BlockOf, class Op>
void ring_reduce_scatter(Transport& t, std::span<T> data, BlockOf of, std::size_t largest, Op op) {
  const int n = t.size();
  const int r = t.rank();
  if (n == 1) return;
  const int right = (r + 1) % n;
  const int left = (r + n - 1) % n;
  const std::size_t segment = std::max<std::size_t>(1, ring_segment_bytes / sizeof(T));
  const std::size_t segments = std::max<std::size_t>(1, (largest + segment - 1) / segment);
  std::span<T> incoming[2] = {scratch<T>(segment, 0), scratch<T>(segment, 1)};
  auto piece = [&](switchyard::block b, std::size_t k) {
    const std::size_t begin = std::min(b.size, k * segment);
    return data.subspan(b.offset + begin, std::min(segment, b.size - begin));
  };
  using request = request_t<Transport, T>;
  for (int step = 0; step < n - 1; ++step) {
    const switchyard::block out = of(ring_index(r, -step - 1, n));
    const switchyard::block in = of(ring_index(r, -step - 2, n));
    request receives[2];
    request sends[2];
    auto post = [&](std::size_t k) {
      std::span<T> target = piece(in, k);
      receives[k % 2] = t.irecv(incoming[k % 2].first(target.size()), left, reduce_scatter_tag);
      sends[k % 2] = t.isend(std::span<const T>(piece(out, k)), right, reduce_scatter_tag);
    };
    post(0);
    for (std::size_t k = 0; k < segments; ++k) {
      if (k + 1 < segments) {
        // The buffer of segment k + 1 last held segment k - 1, already folded in.
        post(k + 1);
      }
      receives[k % 2].wait();
      std::span<T> target = piece(in, k);
      const T* partial = incoming[k % 2].data();
      for (std::size_t i = 0; i < target.size(); ++i) target[i] = op(partial[i], target[i]);
      sends[k % 2].wait();
    }
  }
}

// The same over the blocks of core/partition.hpp: rank r ends with block_of(size, n, r).
template <class Transport, class T, class Op>
void ring_reduce_scatter(Transport& t, std::span<T> data, Op op) {
  const auto n = static_cast<std::size_t>(t.size());
  // Block 0 is the largest.
  ring_reduce_scatter(
      t, data, [&](std::size_t b) { return switchyard::block_of(data.size(), n, b); },
      switchyard::block_of(data.size(), n, 0).size, op);
}

// Every rank contributes block `of(r)` of `data` and ends with all blocks.
template <class Transport, class T, class BlockOf>
void ring_allgather(Transport& t, std::span<T> data, BlockOf of, int tag = allgather_tag) {
  const int n = t.size();
  const int r = t.rank();
  const int right = (r + 1) % n;
  const int left = (r + n - 1) % n;
  for (int step = 0; step < n - 1; ++step) {
    const switchyard::block out = of(ring_index(r, -step, n));
    const switchyard::block in = of(ring_index(r, -step - 1, n));
    auto receive = t.irecv(data.subspan(in.offset, in.size), left, tag);
    auto send = t.isend(std::span<const T>(data.subspan(out.offset, out.size)), right, tag);
    receive.wait();
    send.wait();
  }
}

// Ring all-reduce: reduce-scatter, the final step of the operation on the block this rank owns,
// then all-gather; each element is reduced on one rank only, so all ranks get the same bits.
template <class Transport, class T, class Op>
void ring_allreduce(Transport& t, std::span<T> data, Op op) {
  const auto n = static_cast<std::size_t>(t.size());
  ring_reduce_scatter(t, data, op);
  const switchyard::block mine = switchyard::block_of(data.size(), n, static_cast<std::size_t>(t.rank()));
  finalize_all<Op>(data.subspan(mine.offset, mine.size), t.size());
  ring_allgather(t, data, [&](std::size_t b) { return switchyard::block_of(data.size(), n, b); });
}

}  // namespace switchyard::collective::detail

// Broadcast: every rank ends with the root's buffer.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/choice.hpp>
#include <switchyard/collective/detail/bruck.hpp>
#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/fingerprint.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/transport/transport.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace switchyard::collective {

namespace detail {

// The binomial tree over ranks relative to the root (v = rank - root mod n): v receives from its
// parent v - lowbit(v), then sends to its children v + 2^k for the powers of two below lowbit(v)
// (the root: below n), the farthest first. `receive(parent, mask)` and `send(child, mask)` take
// relative ranks and the child's lowbit (its subtree is [child, child + mask)).
template <class Receive, class Send>
void binomial_tree_walk(int v, int n, Receive receive, Send send) {
  int mask = 1;
  while (mask < n) {
    if (v & mask) {
      receive(v - mask, mask);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask < n) send(v + mask, mask);
  }
}

// Scatter then all-gather: block b of `data` (block_of, one per rank) is the one rank b gathers
// from; the scatter walks the binomial tree, each rank receiving the blocks of its subtree (ranks
// relative to the root, so a subtree's blocks are a cyclic run, `cyclic_blocks`), then the blocks
// are all-gathered in place.
template <class Transport, class T>
void scatter_allgather_broadcast(Transport& t, std::span<T> data, int root) {
  const int n = t.size();
  const auto p = static_cast<std::size_t>(n);
  const auto of = [&](std::size_t b) { return switchyard::block_of(data.size(), p, b); };
  const auto subtree = [&](int first, int mask) {
    const auto count = static_cast<std::size_t>(std::min(mask, n - first));
    return cyclic_blocks(data, of, p, static_cast<std::size_t>((first + root) % n), count);
  };
  binomial_tree_walk(
      (t.rank() - root + n) % n, n,
      [&](int parent, int mask) {
        const cyclic_run<T> run = subtree(parent + mask, mask);
        for (std::size_t i = 0; i < run.pieces; ++i) t.recv(run.piece[i], (parent + root) % n, broadcast_tag);
      },
      [&](int child, int mask) {
        const cyclic_run<T> run = subtree(child, mask);
        for (std::size_t i = 0; i < run.pieces; ++i) {
          t.send(std::span<const T>(run.piece[i]), (child + root) % n, broadcast_tag);
        }
      });
  allgather_in_place(t, data, of, prefers_bruck(n));
}

}  // namespace detail

/// @brief Copies `root`'s `buffer` into `buffer` on every other rank.
/// @tparam Algorithm `algorithm::automatic` (default: native where the transport has and
/// prefers it, else `scatter_allgather` where `prefers_scatter_allgather(bytes, ranks)`, else the
/// binomial tree), `binomial_tree`, `scatter_allgather` or `native`.
/// @code
/// switchyard::collective::broadcast(t, model.parameters(), 0);   // replicas start identical
/// @endcode
/// @throws usage_error for a root outside the group; usage_error (native in process) or
/// transport_error when ranks pass different
/// counts.
/// @tparam Transport a `transport::transport`; @tparam Buffer a `mutable_buffer`.
template <class Transport, class Buffer, class Algorithm = algorithm::automatic>
void broadcast(Transport& t, Buffer&& buffer, int root, Algorithm = {}) {
  detail::require_transport<Transport>();
  detail::require_buffer<std::remove_reference_t<Buffer>>();
  static_assert(!switchyard::buffer<std::remove_reference_t<Buffer>> ||
                    switchyard::mutable_buffer<std::remove_reference_t<Buffer>>,
                "broadcast writes its buffer in place: pass a non-const buffer");
  using T = buffer_element_t<std::remove_reference_t<Buffer>>;
  static_assert(std::is_same_v<Algorithm, algorithm::automatic> ||
                    std::is_same_v<Algorithm, algorithm::binomial_tree> ||
                    std::is_same_v<Algorithm, algorithm::scatter_allgather> ||
                    std::is_same_v<Algorithm, algorithm::native>,
                "broadcast runs as algorithm::binomial_tree, algorithm::scatter_allgather, algorithm::native or "
                "algorithm::automatic");
  constexpr bool has_native = has_native_broadcast<Transport, T>;
  static_assert(!std::is_same_v<Algorithm, algorithm::native> || has_native,
                "algorithm::native needs a transport with native_broadcast(span, root); use automatic");
  const int n = t.size();
  std::span<T> data = as_span(buffer);
  detail::in_context("broadcast", t.rank(), data.size(), [&] {
    // Checked first, so that a root one rank alone gets wrong is reported on every rank.
    bool native = std::is_same_v<Algorithm, algorithm::native>;
    if constexpr (std::is_same_v<Algorithm, algorithm::automatic> && has_native) native = prefers_native(t);
    const bool scatter = !native && (std::is_same_v<Algorithm, algorithm::scatter_allgather> ||
                                     (std::is_same_v<Algorithm, algorithm::automatic> &&
                                      prefers_scatter_allgather(data.size_bytes(), n)));
    detail::check_call<void>(t, {detail::operation::broadcast,
                                 detail::resolved_algorithm_id<Algorithm>(
                                     native, scatter ? detail::algorithm_id<algorithm::scatter_allgather>()
                                                     : detail::algorithm_id<algorithm::binomial_tree>()),
                                 data.size(), 0, detail::type_id<T>(), static_cast<std::uint64_t>(root)});
    if (root < 0 || root >= n) {
      detail::raise<usage_error>(
          detail::str("broadcast on rank ", t.rank(), ": root ", root, " is outside the group of ", n, " ranks"));
    }
    if (native) {
      if constexpr (has_native) t.native_broadcast(data, root);
    } else if (scatter) {
      if (n > 1) detail::scatter_allgather_broadcast(t, data, root);
    } else {
      detail::binomial_tree_walk(
          (t.rank() - root + n) % n, n,
          [&](int parent, int) { t.recv(data, (parent + root) % n, detail::broadcast_tag); },
          [&](int child, int) { t.send(std::span<const T>(data), (child + root) % n, detail::broadcast_tag); });
    }
  });
}

}  // namespace switchyard::collective

// All-gather: every rank contributes the same number of elements and every rank ends with all of
// them, in rank order.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/choice.hpp>
#include <switchyard/collective/detail/bruck.hpp>
#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/fingerprint.hpp>
#include <switchyard/collective/detail/ring.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/transport/transport.hpp>

#include <algorithm>
#include <span>
#include <type_traits>

namespace switchyard::collective {

/// @brief Gathers `mine` from every rank into `all` (`all.size() == ranks * mine.size()`), rank r's
/// elements at `[r * mine.size(), (r + 1) * mine.size())`.
/// @tparam Algorithm `algorithm::automatic` (default: native where the transport has and prefers it,
/// else `recursive_doubling` from `halving_doubling_min_ranks` ranks on and the ring below), `ring`,
/// `recursive_doubling` (Bruck's all-gather: ceil(log2 p) rounds, any p) or `native`.
/// @code
/// std::vector<double> all(t.size() * mine.size());
/// switchyard::collective::allgather(t, mine, all);
/// @endcode
/// @throws usage_error when `all` has the wrong size; usage_error (native in process) or
/// transport_error when ranks pass different
/// counts.
/// @tparam Transport a `transport::transport`; @tparam In a `buffer`; @tparam Out a `mutable_buffer`.
template <class Transport, class In, class Out, class Algorithm = algorithm::automatic>
void allgather(Transport& t, const In& mine, Out&& all, Algorithm = {}) {
  detail::require_transport<Transport>();
  detail::require_buffer<const In, detail::buffer_role::input>();
  detail::require_buffer<std::remove_reference_t<Out>, detail::buffer_role::output>();
  static_assert(!switchyard::buffer<std::remove_reference_t<Out>> ||
                    switchyard::mutable_buffer<std::remove_reference_t<Out>>,
                "allgather writes into its output: pass a non-const output buffer");
  using T = buffer_element_t<std::remove_reference_t<Out>>;
  static_assert(std::is_same_v<std::remove_const_t<buffer_element_t<const In>>, T>,
                "allgather needs input and output buffers of the same element type");
  static_assert(std::is_same_v<Algorithm, algorithm::automatic> || std::is_same_v<Algorithm, algorithm::ring> ||
                    std::is_same_v<Algorithm, algorithm::recursive_doubling> ||
                    std::is_same_v<Algorithm, algorithm::native>,
                "allgather runs as algorithm::ring, algorithm::recursive_doubling, algorithm::native or "
                "algorithm::automatic");
  constexpr bool has_native = has_native_allgather<Transport, T>;
  static_assert(!std::is_same_v<Algorithm, algorithm::native> || has_native,
                "algorithm::native needs a transport with native_allgather(in, out); use automatic");
  std::span<const T> in = as_span(mine);
  std::span<T> out = as_span(all);
  const auto n = static_cast<std::size_t>(t.size());
  detail::in_context("allgather", t.rank(), in.size(), [&] {
    // Checked first, so that an output size one rank alone gets wrong is reported on every rank.
    bool native = std::is_same_v<Algorithm, algorithm::native>;
    if constexpr (std::is_same_v<Algorithm, algorithm::automatic> && has_native) native = prefers_native(t);
    const bool doubling = !native && (std::is_same_v<Algorithm, algorithm::recursive_doubling> ||
                                      (std::is_same_v<Algorithm, algorithm::automatic> &&
                                       detail::prefers_bruck(t.size())));
    detail::check_call<void>(t, {detail::operation::allgather,
                                 detail::resolved_algorithm_id<Algorithm>(
                                     native, doubling ? detail::algorithm_id<algorithm::recursive_doubling>()
                                                      : detail::algorithm_id<algorithm::ring>()),
                                 in.size(), out.size(), detail::type_id<T>(), 0});
    if (out.size() != in.size() * n) {
      detail::raise<usage_error>(detail::str("allgather on rank ", t.rank(), ": ", in.size(),
                                             " elements per rank over ", n, " ranks need an output of ",
                                             in.size() * n, " elements, got ", out.size()));
    }
    if (native) {
      if constexpr (has_native) t.native_allgather(in, out);
    } else {
      const std::size_t each = in.size();
      std::copy(in.begin(), in.end(), out.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(t.rank()) * each));
      detail::allgather_in_place(
          t, out, [each](std::size_t b) { return switchyard::block{b * each, each}; }, doubling);
    }
  });
}

/// @brief All-gather in place of blocks that may differ in size: rank r contributes
/// `buffer[blocks(r)]` (a `switchyard::block`, core/partition.hpp) and every rank ends with every
/// block. The blocks tile `buffer` in rank order, `blocks(0)` at offset 0, each starting where the
/// one before ends, the last ending at `buffer.size()`; they may be empty (a rank with nothing to
/// give). Every rank must pass the same layout.
/// @tparam Algorithm `algorithm::automatic` (default: `recursive_doubling` from
/// `halving_doubling_min_ranks` ranks on, the ring below), `ring` or `recursive_doubling`.
/// @code
/// // The shards of block_of(count, ranks, r), each rank's filled in, gathered everywhere:
/// switchyard::collective::allgather_blocks(t, parameters, [&](std::size_t r) {
///   return switchyard::block_of(parameters.size(), static_cast<std::size_t>(t.size()), r);
/// });
/// @endcode
/// @throws usage_error when the blocks do not tile the buffer (naming the rank, the block and the
/// offsets); transport_error when ranks pass different sizes.
template <class Transport, class Buffer, class BlockOf, class Algorithm = algorithm::automatic>
void allgather_blocks(Transport& t, Buffer&& buffer, BlockOf blocks, Algorithm = {}) {
  detail::require_transport<Transport>();
  detail::require_buffer<std::remove_reference_t<Buffer>>();
  static_assert(!switchyard::buffer<std::remove_reference_t<Buffer>> ||
                    switchyard::mutable_buffer<std::remove_reference_t<Buffer>>,
                "allgather_blocks writes into its buffer: pass a non-const buffer");
  static_assert(std::is_invocable_r_v<switchyard::block, BlockOf&, std::size_t>,
                "the blocks must be callable as switchyard::block blocks(std::size_t rank)");
  static_assert(std::is_same_v<Algorithm, algorithm::automatic> || std::is_same_v<Algorithm, algorithm::ring> ||
                    std::is_same_v<Algorithm, algorithm::recursive_doubling>,
                "allgather_blocks runs as algorithm::ring, algorithm::recursive_doubling or algorithm::automatic");
  using T = buffer_element_t<std::remove_reference_t<Buffer>>;
  std::span<T> data = as_span(buffer);
  const auto n = static_cast<std::size_t>(t.size());
  detail::in_context("allgather_blocks", t.rank(), data.size(), [&] {
    const bool doubling = std::is_same_v<Algorithm, algorithm::recursive_doubling> ||
                          (std::is_same_v<Algorithm, algorithm::automatic> && detail::prefers_bruck(t.size()));
    detail::check_call<void>(t, {detail::operation::allgather,
                                 doubling ? detail::algorithm_id<algorithm::recursive_doubling>()
                                          : detail::algorithm_id<algorithm::ring>(),
                                 data.size(), data.size(), detail::type_id<T>(), 0});
    std::size_t end = 0;
    for (std::size_t r = 0; r < n; ++r) {
      const switchyard::block b = blocks(r);
      if (b.offset != end || b.size > data.size() - end) {
        detail::raise<usage_error>(detail::str("allgather_blocks on rank ", t.rank(), ": block ", r, " is [",
                                               b.offset, ", ", b.offset + b.size, ") where the blocks must tile the ",
                                               data.size(), " elements in rank order from ", end));
      }
      end = b.offset + b.size;
    }
    if (end != data.size()) {
      detail::raise<usage_error>(detail::str("allgather_blocks on rank ", t.rank(), ": the blocks end at ", end,
                                             " of ", data.size(), " elements"));
    }
    if (n > 1) detail::allgather_in_place(t, data, blocks, doubling);
  });
}

}  // namespace switchyard::collective

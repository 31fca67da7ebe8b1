// Broadcast: every rank ends with the root's buffer.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/fingerprint.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/transport/transport.hpp>

#include <cstdint>
#include <span>
#include <type_traits>

namespace switchyard::collective {

/// @brief Copies `root`'s `buffer` into `buffer` on every other rank.
/// @tparam Algorithm `algorithm::automatic` (default: native where the transport has and
/// prefers it, else binomial tree), `binomial_tree` or `native`.
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
                    std::is_same_v<Algorithm, algorithm::native>,
                "broadcast runs as algorithm::binomial_tree, algorithm::native or algorithm::automatic");
  constexpr bool has_native = has_native_broadcast<Transport, T>;
  static_assert(!std::is_same_v<Algorithm, algorithm::native> || has_native,
                "algorithm::native needs a transport with native_broadcast(span, root); use automatic");
  const int n = t.size();
  std::span<T> data = as_span(buffer);
  detail::in_context("broadcast", t.rank(), data.size(), [&] {
    // Checked first, so that a root one rank alone gets wrong is reported on every rank.
    bool native = std::is_same_v<Algorithm, algorithm::native>;
    if constexpr (std::is_same_v<Algorithm, algorithm::automatic> && has_native) native = prefers_native(t);
    detail::check_call<void>(t, {detail::operation::broadcast,
                                 detail::resolved_algorithm_id<Algorithm>(
                                     native, detail::algorithm_id<algorithm::binomial_tree>()),
                                 data.size(), 0, detail::type_id<T>(), static_cast<std::uint64_t>(root)});
    if (root < 0 || root >= n) {
      detail::raise<usage_error>(
          detail::str("broadcast on rank ", t.rank(), ": root ", root, " is outside the group of ", n, " ranks"));
    }
    if (native) {
      if constexpr (has_native) t.native_broadcast(data, root);
    } else {
      // Ranks relative to the root: v receives from v - lowbit(v), then sends to v + 2^k for the
      // powers of two below lowbit(v).
      const int v = (t.rank() - root + n) % n;
      int mask = 1;
      while (mask < n) {
        if (v & mask) {
          t.recv(data, (v - mask + root) % n, detail::broadcast_tag);
          break;
        }
        mask <<= 1;
      }
      for (mask >>= 1; mask > 0; mask >>= 1) {
        if (v + mask < n) t.send(std::span<const T>(data), (v + mask + root) % n, detail::broadcast_tag);
      }
    }
  });
}

}  // namespace switchyard::collective

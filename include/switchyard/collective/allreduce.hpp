// All-reduce: every rank ends with the element-wise reduction of all ranks' buffers, identical to
// the last bit on every rank.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/choice.hpp>
#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/fingerprint.hpp>
#include <switchyard/collective/detail/halving_doubling.hpp>
#include <switchyard/collective/detail/hierarchical.hpp>
#include <switchyard/collective/detail/recursive_doubling.hpp>
#include <switchyard/collective/detail/ring.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/collective/node_groups.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace switchyard::collective {

/// @brief Reduces `buffer` in place over every rank of `t` with `op`.
///
/// Every rank must call it with the same element count, element type, operation and algorithm.
/// All ranks end with the same bits, whatever the algorithm and element type. `automatic` takes
/// `hierarchical` for a commutative operation on at least `ring_threshold_bytes` when the
/// transport's topology has several nodes and more than one rank on some node (before the native
/// all-reduce); else the native all-reduce where the transport has and prefers it, else recursive
/// doubling below `ring_threshold_bytes` and above it the ring or, over many ranks,
/// halving-doubling (`prefers_halving_doubling`; docs/collectives.md).
/// @tparam Algorithm `algorithm::automatic` (default), `ring`, `recursive_doubling`,
/// `halving_doubling`, `hierarchical` or `native`.
/// @code
/// std::vector<float> grad = ...;
/// switchyard::collective::allreduce(t, grad, switchyard::ops::average{});
/// switchyard::collective::allreduce(t, grad, switchyard::ops::sum{}, switchyard::algorithm::ring{});
/// switchyard::collective::allreduce(t, grad, switchyard::ops::sum{}, switchyard::algorithm::hierarchical{});
/// @endcode
/// @throws usage_error from native in-process runs and transport_error from the other paths (each
/// naming the rank and the sizes) when ranks pass different counts; transport_error when a peer
/// fails; `timeout_error` when a peer never joins (in-process transport). With checked collectives
/// on (docs/collectives.md#checked-collectives), usage_error on every rank for any mismatch.
/// @tparam Transport a `transport::transport`; @tparam Buffer a `mutable_buffer`.
template <class Transport, class Buffer, class Op = ops::sum,
          algorithm::allreduce_algorithm Algorithm = algorithm::automatic>
void allreduce(Transport& t, Buffer&& buffer, Op op = {}, Algorithm = {}) {
  detail::require_transport<Transport>();
  detail::require_buffer<std::remove_reference_t<Buffer>>();
  static_assert(!switchyard::buffer<std::remove_reference_t<Buffer>> ||
                    switchyard::mutable_buffer<std::remove_reference_t<Buffer>>,
                "allreduce writes its buffer in place: pass a non-const buffer");
  using T = buffer_element_t<std::remove_reference_t<Buffer>>;
  detail::require_reduction<Op, T>();
  constexpr bool has_native = has_native_allreduce<Transport, T, Op>;
  constexpr bool automatic = std::is_same_v<Algorithm, algorithm::automatic>;
  static_assert(!std::is_same_v<Algorithm, algorithm::native> || has_native,
                "algorithm::native needs a transport with native_allreduce(span, op); use automatic");
  static_assert(!std::is_same_v<Algorithm, algorithm::ring> || is_commutative_v<Op>,
                "the ring reorders operands: use recursive_doubling for a non-commutative operation, or specialize "
                "switchyard::is_commutative<Op> to std::true_type if yours commutes");
  static_assert(!std::is_same_v<Algorithm, algorithm::hierarchical> || is_commutative_v<Op>,
                "the hierarchical all-reduce reorders operands: use recursive_doubling for a non-commutative "
                "operation, or specialize switchyard::is_commutative<Op> to std::true_type if yours commutes");
  std::span<T> data = as_span(buffer);
  detail::in_context("allreduce", t.rank(), data.size(), [&] {
    const bool large = data.size_bytes() >= ring_threshold_bytes;
    bool hierarchical = std::is_same_v<Algorithm, algorithm::hierarchical>;
    if constexpr (automatic && is_commutative_v<Op>) hierarchical = large && transport::topology_of(t).hierarchical();
    bool native = std::is_same_v<Algorithm, algorithm::native>;
    if constexpr (automatic && has_native) native = !hierarchical && prefers_native(t);
    const bool halving = !native && !hierarchical &&
                         (std::is_same_v<Algorithm, algorithm::halving_doubling> ||
                          (automatic && large && prefers_halving_doubling(data.size_bytes(), t.size())));
    const bool ring = !native && !hierarchical && !halving &&
                      (std::is_same_v<Algorithm, algorithm::ring> || (automatic && is_commutative_v<Op> && large));
    const std::uint64_t chosen = detail::resolved_algorithm_id<Algorithm>(
        native, hierarchical ? detail::algorithm_id<algorithm::hierarchical>()
                : halving    ? detail::algorithm_id<algorithm::halving_doubling>()
                : ring       ? detail::algorithm_id<algorithm::ring>()
                             : detail::algorithm_id<algorithm::recursive_doubling>());
    detail::check_call<Op>(t, {detail::operation::allreduce, chosen, data.size(), 0, detail::type_id<T>(), 0});
    if (native) {
      if constexpr (has_native) t.native_allreduce(data, op);
    } else if (hierarchical) {
      if constexpr (is_commutative_v<Op>) {
        if (t.size() == 1) {
          finalize_all<Op>(data, 1);
        } else {
          with_node_groups(t, [&](node_groups<Transport>& groups) {
            detail::hierarchical_allreduce(t, groups, data, op);
          });
        }
      }
    } else if (halving) {
      detail::halving_doubling_allreduce(t, data, op);
    } else if (ring) {
      if constexpr (is_commutative_v<Op>) detail::ring_allreduce(t, data, op);
    } else {
      detail::recursive_doubling_allreduce(t, data, op);
    }
  });
}

}  // namespace switchyard::collective

// Reduce-scatter: rank r ends with block r (core/partition.hpp) of the element-wise
// reduction of all ranks' buffers.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/fingerprint.hpp>
#include <switchyard/collective/detail/ring.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/transport/transport.hpp>

#include <span>
#include <type_traits>

namespace switchyard::collective {

/// @brief Reduces `buffer` over all ranks and leaves this rank's block of the result in place.
///
/// Returns this rank's block, `block_of(size, ranks, rank)`, as a `std::span<E>`; the rest of the
/// buffer is left with partial sums. Same count, type and operation on every rank.
/// @tparam Algorithm `algorithm::automatic` (default: native where the transport has and prefers it, else
/// ring), `ring` or `native`.
/// @code
/// std::span<float> shard = switchyard::collective::reduce_scatter(t, grad, switchyard::ops::sum{});
/// @endcode
/// @tparam Transport a `transport::transport`; @tparam Buffer a `mutable_buffer`.
template <class Transport, class Buffer, class Op = ops::sum, class Algorithm = algorithm::automatic>
auto reduce_scatter(Transport& t, Buffer&& buffer, Op op = {}, Algorithm = {}) {
  detail::require_transport<Transport>();
  detail::require_buffer<std::remove_reference_t<Buffer>>();
  static_assert(!switchyard::buffer<std::remove_reference_t<Buffer>> ||
                    switchyard::mutable_buffer<std::remove_reference_t<Buffer>>,
                "reduce_scatter writes its buffer in place: pass a non-const buffer");
  using T = buffer_element_t<std::remove_reference_t<Buffer>>;
  detail::require_reduction<Op, T>();
  static_assert(std::is_same_v<Algorithm, algorithm::automatic> || std::is_same_v<Algorithm, algorithm::ring> ||
                    std::is_same_v<Algorithm, algorithm::native>,
                "reduce_scatter runs as algorithm::ring, algorithm::native or algorithm::automatic");
  constexpr bool has_native = has_native_reduce_scatter<Transport, T, Op>;
  static_assert(!std::is_same_v<Algorithm, algorithm::native> || has_native,
                "algorithm::native needs a transport with native_reduce_scatter(span, op); use automatic");
  static_assert(is_commutative_v<Op> || (has_native && !std::is_same_v<Algorithm, algorithm::ring>),
                "the ring reorders operands: reduce_scatter needs a commutative operation (specialize "
                "switchyard::is_commutative<Op> to std::true_type if yours commutes)");
  std::span<T> data = as_span(buffer);
  return detail::in_context("reduce_scatter", t.rank(), data.size(), [&]() -> std::span<T> {
    // A non-commutative operation has only the native path, whatever the transport prefers.
    bool native = std::is_same_v<Algorithm, algorithm::native>;
    if constexpr (std::is_same_v<Algorithm, algorithm::automatic> && has_native) {
      native = !is_commutative_v<Op> || prefers_native(t);
    }
    detail::check_call<Op>(t, {detail::operation::reduce_scatter,
                               detail::resolved_algorithm_id<Algorithm>(native, detail::algorithm_id<algorithm::ring>()),
                               data.size(), 0, detail::type_id<T>(), 0});
    if constexpr (!is_commutative_v<Op>) {
      return t.native_reduce_scatter(data, op);
    } else {
      if constexpr (has_native) {
        if (native) return t.native_reduce_scatter(data, op);
      }
      detail::ring_reduce_scatter(t, data, op);
      const switchyard::block mine = switchyard::block_of(data.size(), static_cast<std::size_t>(t.size()), static_cast<std::size_t>(t.rank()));
      std::span<T> result = data.subspan(mine.offset, mine.size);
      finalize_all<Op>(result, t.size());
      return result;
    }
  });
}

}  // namespace switchyard::collective

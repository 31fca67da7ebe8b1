// Detection of a transport's native collectives, the fast path the algorithms dispatch to.
#pragma once

#include <switchyard/core/operations.hpp>

#include <concepts>
#include <span>

namespace switchyard::collective {

/// @brief `t.native_allreduce(data, op)` exists: reduces `data` in place over all ranks.
template <class T, class E, class Op>
concept has_native_allreduce = requires(T& t, std::span<E> data, Op op) { t.native_allreduce(data, op); };

/// @brief `t.native_broadcast(data, root)` exists.
template <class T, class E>
concept has_native_broadcast = requires(T& t, std::span<E> data, int root) { t.native_broadcast(data, root); };

/// @brief `t.native_allgather(mine, all)` exists.
template <class T, class E>
concept has_native_allgather = requires(T& t, std::span<const E> mine, std::span<E> all) {
  t.native_allgather(mine, all);
};

/// @brief `t.native_reduce_scatter(data, op)` exists and returns this rank's block.
template <class T, class E, class Op>
concept has_native_reduce_scatter = requires(T& t, std::span<E> data, Op op) {
  { t.native_reduce_scatter(data, op) } -> std::same_as<std::span<E>>;
};

/// @brief Whether `algorithm::automatic` takes `t`'s native collectives where it has them:
/// `t.prefers_native()` when the transport declares that member, else true.
///
/// `transport::mpi` answers false under the passive wait policy: its non-blocking MPI collectives
/// advance one round per test, so switchyard's own algorithms, which wait message by message, are
/// faster there (docs/cluster.md has the measurements). The answer must be the same on every
/// rank; checked collectives compare the algorithm each rank resolved.
template <class Transport>
[[nodiscard]] bool prefers_native(const Transport& t) {
  if constexpr (requires {
                  { t.prefers_native() } -> std::convertible_to<bool>;
                }) {
    return static_cast<bool>(t.prefers_native());
  } else {
    return true;
  }
}

}  // namespace switchyard::collective

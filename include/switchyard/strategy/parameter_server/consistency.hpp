// How far a parameter server's workers may drift apart: the Consistency policy classes.
#pragma once

#include <switchyard/core/threshold.hpp>

#include <concepts>
#include <cstddef>
#include <limits>

namespace switchyard::strategy {

/// @brief How far workers may drift apart under a parameter server: a Consistency policy.
///
/// Required, for `const C& c`:
/// @code
/// std::size_t k = c.max_lead();   // a server replies to a worker (sends it the fresh shard) only
///                                 // while that worker has finished at most k steps more than the
///                                 // slowest worker still training; the reply waits otherwise
/// @endcode
/// Optional: `static constexpr bool synchronous = true;` makes each server update average exactly
/// one gradient of every worker (summed in worker order), and every worker waits for that update;
/// workers then keep static shards of the epoch's batches. Without it (false), a server applies
/// each push as it arrives, and batches are handed out first come, first served.
/// `consistency::async`, `bounded<K>` and `sync` are the three classic models; a policy of your
/// own writes `max_lead()` (see docs/extending.md, "Consistency").
namespace consistency {

/// The `max_lead()` of a policy that never holds a reply back.
inline constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();

/// @brief No waiting: the server replies at once with the current shard, then applies the
/// gradient (TensorFlow's ParameterServerStrategy, ps-lite).
struct async {
  [[nodiscard]] static constexpr std::size_t max_lead() noexcept { return unbounded; }
};

/// @brief Stale-synchronous: a worker may start step c + 1 only when the slowest worker has
/// finished step c - K, so no applied gradient is more than K steps ahead of the slowest worker.
/// `bounded<2>{}` fixes the bound in the type; `bounded{k}` takes it at run time and is a
/// `bounded<dynamic_threshold>` (see `switchyard::threshold`).
template <std::size_t K = dynamic_threshold>
struct bounded : threshold<K> {
  using threshold<K>::threshold;
  [[nodiscard]] constexpr std::size_t max_lead() const noexcept { return this->value(); }
};
bounded(std::size_t) -> bounded<dynamic_threshold>;

/// @brief Bulk-synchronous over the servers: each server averages exactly one gradient from every
/// worker per step (summed in worker order, so runs repeat bit for bit), applies it once, and
/// replies to all workers.
struct sync {
  static constexpr bool synchronous = true;
  [[nodiscard]] static constexpr std::size_t max_lead() noexcept { return 0; }
};

/// @brief A Consistency policy: `max_lead()`, and optionally `synchronous`.
template <class C>
concept policy = std::copy_constructible<C> && requires(const C& c) {
  { c.max_lead() } -> std::convertible_to<std::size_t>;
};

/// Whether `C` says it is synchronous (`C::synchronous`); false when it says nothing.
template <class C>
inline constexpr bool is_synchronous = [] {
  if constexpr (requires { C::synchronous; }) {
    return static_cast<bool>(C::synchronous);
  } else {
    return false;
  }
}();

}  // namespace consistency

}  // namespace switchyard::strategy

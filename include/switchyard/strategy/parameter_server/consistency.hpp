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
/// Optional: `std::size_t backup_workers() const` makes each update average the first W - B
/// pushes of each round and drop late ones (`backups`); `max_lead()` is then not used.
/// `consistency::async`, `bounded<K>` and `sync` are the three classic models, `backups<B>` the
/// synchronous one that does not wait for stragglers; a policy of your own writes `max_lead()`
/// (see docs/extending.md, "Consistency").
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

/// @brief Synchronous with backup workers (Chen et al., 2016, "Revisiting distributed synchronous
/// SGD"): no update waits for the B slowest of W workers, and with one server none applies a stale
/// gradient. Updates go in rounds. Server 0 hands out each batch with its round (its updates so
/// far in this part of the epoch), and the worker tags its push to every server with it. Each
/// server averages the first W - B pushes of its current round (at least one; summed in worker
/// order), replies to their workers and opens the next round. A push of a round the server has
/// closed, a straggler's, is dropped and answered at once with the current shard; one of a later
/// round (server 0 moved on first) waits for it. Every server therefore closes the same rounds,
/// and its shard of the optimizer state steps as often as every other's. With several servers a
/// round is server 0's count, not each shard's version: a push that waited at a server behind
/// server 0 can be applied to a shard one or more updates newer than the one it was computed on,
/// and the pushes of a round can differ from shard to shard (docs/design.md). Batches are handed
/// out first come, first served; a dropped push's batch is not trained in that epoch
/// (`ps_statistics::dropped` counts them). Once fewer than W - B workers are left in a part, a
/// round waits only for those. Not with pipelined workers, whose every push is one exchange old.
/// `backups<1>{}` fixes B in the type, `backups{b}` takes it at run time.
template <std::size_t B = dynamic_threshold>
struct backups : threshold<B> {
  using threshold<B>::threshold;
  [[nodiscard]] static constexpr std::size_t max_lead() noexcept { return 0; }
  /// B: how many of the slowest workers no update waits for.
  [[nodiscard]] constexpr std::size_t backup_workers() const noexcept { return this->value(); }
};
backups(std::size_t) -> backups<dynamic_threshold>;

/// @brief A Consistency policy: `max_lead()`, and optionally `synchronous` or `backup_workers()`.
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

/// Whether `C` keeps backup workers (`c.backup_workers()`), as `backups` does: its servers average
/// the first fresh gradients of each step and drop the late ones.
template <class C>
inline constexpr bool has_backups = requires(const C& c) {
  { c.backup_workers() } -> std::convertible_to<std::size_t>;
};

}  // namespace consistency

}  // namespace switchyard::strategy

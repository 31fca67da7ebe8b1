// Which examples each worker trains on at each step of an epoch: one seeded shuffle per epoch,
// dealt out in equal full batches so that every worker runs the same number of steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "switchyard/core/error.hpp"

namespace switchyard::data {

/// @brief The batches of one epoch for `workers` workers: a pure function of
/// (examples, workers, batch size, seed, epoch), so every rank computes the same plan on its own
/// and a plan for another number of workers can be computed at any time.
///
/// The rule:
/// - `order()` is a permutation of `[0, examples)`, shuffled from (seed, epoch) with
///   `std::mt19937_64` seeded through `std::seed_seq` and a Fisher-Yates shuffle written here
///   (both exactly specified by the standard, unlike `std::shuffle` and the distributions), so the
///   order is the same on every platform and standard library.
/// - Every worker runs `steps() = floor(examples / (workers * batch_size))` steps of exactly
///   `batch_size` examples: a synchronous collective never waits for a rank that ran out of data.
/// - Step `k` of worker `w` takes positions `[(k * workers + w) * batch_size, + batch_size)` of
///   `order()`: the first `k * workers * batch_size` positions are what the first `k` steps
///   consumed, whatever the number of workers, so an epoch can be re-dealt to a new set of
///   workers from that point.
/// - The last `dropped() = examples mod (workers * batch_size)` positions of `order()` are not
///   trained on this epoch. They are fewer than one batch per worker, and a different random
///   subset each epoch, so no example is left out systematically.
/// @code
/// switchyard::data::shard_plan plan(train->size(), world_size, 64, seed, epoch);
/// for (std::size_t step = 0; step < plan.steps(); ++step) {
///   auto batch = loader.gather(plan.batch(rank, step));
///   // ...
/// }
/// @endcode
class shard_plan {
 public:
  /// @throws usage_error if `workers` or `batch_size` is 0, or `examples` cannot give every
  /// worker one full batch.
  shard_plan(std::size_t examples, std::size_t workers, std::size_t batch_size, std::uint64_t seed,
             std::uint64_t epoch);

  [[nodiscard]] std::size_t examples() const noexcept { return order_.size(); }
  [[nodiscard]] std::size_t workers() const noexcept { return workers_; }
  [[nodiscard]] std::size_t batch_size() const noexcept { return batch_size_; }
  /// Steps every worker runs this epoch.
  [[nodiscard]] std::size_t steps() const noexcept { return steps_; }
  /// Examples not trained on this epoch: the tail of `order()`.
  [[nodiscard]] std::size_t dropped() const noexcept {
    return examples() - steps_ * workers_ * batch_size_;
  }
  /// The epoch's permutation of example indices.
  [[nodiscard]] std::span<const std::size_t> order() const noexcept { return order_; }

  /// @brief The example indices of `worker`'s batch at `step`, `batch_size()` of them.
  /// @throws usage_error if `worker >= workers()` or `step >= steps()`.
  [[nodiscard]] std::span<const std::size_t> batch(std::size_t worker, std::size_t step) const;

 private:
  std::vector<std::size_t> order_;
  std::size_t workers_;
  std::size_t batch_size_;
  std::size_t steps_;
};

// ----------------------------------------------------------------------------------------------
// Implementation
// ----------------------------------------------------------------------------------------------

}  // namespace switchyard::data

namespace switchyard::detail {

/// Uniform in `[0, bound)`, bound > 0: rejecting the `2^64 mod bound` lowest draws leaves a
/// multiple of `bound` equally likely values, so the modulo is unbiased.
inline std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t bound) {
  const std::uint64_t rejected = (0 - bound) % bound;
  for (;;) {
    if (const std::uint64_t draw = engine(); draw >= rejected) return draw % bound;
  }
}

}  // namespace switchyard::detail

namespace switchyard::data {

inline shard_plan::shard_plan(std::size_t examples, std::size_t workers, std::size_t batch_size,
                              std::uint64_t seed, std::uint64_t epoch)
    : order_(examples),
      workers_(workers),
      batch_size_(batch_size),
      steps_(workers == 0 || batch_size == 0 ? 0 : examples / workers / batch_size) {
  if (steps_ == 0) {
    detail::raise<usage_error>(detail::str("shard_plan: ", examples,
                                           " examples cannot fill one batch of ", batch_size,
                                           " for each of ", workers, " workers"));
  }
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::seed_seq seeds{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(epoch >> 32)};
  std::mt19937_64 engine(seeds);
  for (std::size_t i = examples; i > 1; --i) {
    std::swap(order_[i - 1], order_[detail::uniform_below(engine, i)]);
  }
}

inline std::span<const std::size_t> shard_plan::batch(std::size_t worker, std::size_t step) const {
  if (worker >= workers_ || step >= steps_) {
    detail::raise<usage_error>(detail::str("shard_plan::batch: worker ", worker, " step ", step,
                                           " is outside ", workers_, " workers x ", steps_,
                                           " steps"));
  }
  return order().subspan((step * workers_ + worker) * batch_size_, batch_size_);
}

}  // namespace switchyard::data

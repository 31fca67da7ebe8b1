// The Trigger role: decides, from the progress every rank agrees on, when a strategy switch fires.
#pragma once

#include <switchyard/core/history.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace switchyard::trigger {


/// @brief A Trigger: `t.fire(record)` is called once after every epoch of the first stage with
/// the epoch record all ranks share, and says whether to switch now.
///
/// Required expression, for `T& t` and `const train::epoch_record& record`:
/// @code
/// bool now = t.fire(record);   // may keep state (a smoothed loss, a running step count)
/// @endcode
/// Every rank sees the same records in the same order, so a deterministic trigger fires on every
/// rank at the same epoch with no message of its own.
template <class T>
concept trigger = std::copy_constructible<T> && requires(T& t, const train::epoch_record& record) {
  { t.fire(record) } -> std::convertible_to<bool>;
};

/// @brief The workers' times per step over the last few steps, as a sampling trigger sees them
/// inside an epoch (see `samples_steps`).
struct step_sample {
  double slowest_seconds = 0.0;  ///< the slowest worker's mean time per step
  double median_seconds = 0.0;   ///< the median worker's (the lower median for an even count, so
                                 ///< that of two workers the faster is the yardstick)
  /// The median worker's mean whole step, compute and exchange, where the stage measures it (a
  /// synchronous stage, whose steps all last as long as the slowest worker's); 0 elsewhere.
  double step_seconds = 0.0;
};

/// @brief The sample of the workers' times per step `seconds` (one each, in any order; reordered):
/// the slowest and the (lower) median. Empty input gives zeros.
[[nodiscard]] inline step_sample summarize_steps(std::span<double> seconds) {
  if (seconds.empty()) return {};
  const auto middle = seconds.begin() + static_cast<std::ptrdiff_t>((seconds.size() - 1) / 2);
  std::nth_element(seconds.begin(), middle, seconds.end());
  return {*std::max_element(middle, seconds.end()), *middle};
}

/// @brief Progress inside an epoch, for triggers that can fire between two steps.
struct progress {
  /// Batches (worker steps, all workers together) trained since the stage began.
  std::uint64_t batches = 0;
  /// For a trigger that `samples_steps`: present at every `sample_every()`-th step of each worker,
  /// empty at the steps between.
  std::optional<step_sample> sample{};
};

/// @brief A Trigger that may also fire inside an epoch: `t.fire_at(p)` is asked after every
/// step of the first stage, and a switch then happens at that step instead of at the epoch's end.
///
/// Required expression, besides `fire(record)`, for `const progress& p`:
/// @code
/// bool now = t.fire_at(p);   // the rank that asks is not always the same (below)
/// @endcode
/// `fire_at` may keep state of its own (a run of samples), but `fire(record)` must not depend on
/// it: in an asynchronous stage only the coordinator asks `fire_at`, so the other ranks' copies
/// never see those calls, and every rank must still answer `fire(record)` alike.
/// Who asks, so that every rank switches after the same batch: in a synchronous stage every
/// worker asks after each step with the same count, and they agree without a message; in an
/// asynchronous stage the coordinator (parameter server 0, which hands out the batches) asks
/// before it hands out each batch, stops handing them out when it fires, and the others learn it
/// at the end of that part of the epoch. `after_steps` is one; `any_of` and `all_of` are when
/// their parts are.
template <class T>
concept within_epoch = trigger<T> && requires(T& t, const progress& p) {
  { t.fire_at(p) } -> std::convertible_to<bool>;
};

/// @brief A within-epoch Trigger that also wants the workers' step times: every
/// `t.sample_every()` steps of each worker (0: never), the stage it watches measures them and asks
/// `t.fire_at(p)` with `p.sample` set.
///
/// A sample is each worker's mean compute time per step (the time between two of its steps,
/// outside the exchange, which waits for the slowest worker or for the server's link), so that it
/// shows a straggler under either kind of stage:
/// - a synchronous stage in which every rank is a worker (all-reduce) shares them by one
///   all-gather of two numbers per worker (with the whole step, `step_sample::step_seconds`);
/// - in an asynchronous stage that hands out batches (a parameter server) each worker sends its
///   time to the coordinator beside its push.
///
/// Another stage (a synchronous parameter server, whose servers take no steps) gives no samples.
/// `straggler_detected` and `stragglers_gone` sample when their `every` is set.
template <class T>
concept samples_steps = within_epoch<T> && requires(const T& t) {
  { t.sample_every() } -> std::convertible_to<std::size_t>;
};

/// How often `t` wants a sample, in steps per worker: 0 for a trigger that does not sample.
template <class T>
[[nodiscard]] std::size_t sample_every(const T& t) {
  if constexpr (samples_steps<T>) {
    return static_cast<std::size_t>(t.sample_every());
  } else {
    return 0;
  }
}

}  // namespace switchyard::trigger

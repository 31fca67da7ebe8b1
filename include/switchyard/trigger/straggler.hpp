// Switch when one worker falls behind the others, or when none does any more.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/history.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

namespace switchyard::trigger {

/// @brief The straggler ratio of an epoch: the slowest worker's mean compute time per step over
/// the median worker's (`epoch_record::slowest_step_compute_seconds` over
/// `median_step_compute_seconds`); 1 when the record has no such times.
///
/// It compares compute alone, so that it reads the same under every strategy: a synchronous
/// stage, where the others wait for the slowest and every worker trains as many steps, and an
/// asynchronous one, where the slowest trains fewer. Every worker slowed alike leaves it at 1.
[[nodiscard]] inline double straggler_ratio(const train::epoch_record& record) noexcept {
  if (record.median_step_compute_seconds <= 0.0) return 1.0;
  return record.slowest_step_compute_seconds / record.median_step_compute_seconds;
}

/// @brief The straggler ratio of a sample taken inside an epoch: the slowest worker's time per
/// step over the median worker's; 1 when the sample has no such times.
[[nodiscard]] inline double straggler_ratio(const step_sample& sample) noexcept {
  if (sample.median_seconds <= 0.0) return 1.0;
  return sample.slowest_seconds / sample.median_seconds;
}

/// @brief The share of an epoch the workers spent waiting for the slowest one, estimated from its
/// record: the exchange time of the mean worker beyond the least one's
/// (`exchange_seconds - least_exchange_seconds`, which in a synchronous stage is waiting) over the
/// mean worker's training time (`compute_seconds + exchange_seconds`); 0 without such times.
[[nodiscard]] inline double straggler_wait_share(const train::epoch_record& record) noexcept {
  const double total = record.compute_seconds + record.exchange_seconds;
  if (total <= 0.0) return 0.0;
  return (record.exchange_seconds - record.least_exchange_seconds) / total;
}

/// @brief The share of each step the workers wait for the slowest one, from a sample: the
/// slowest worker's compute beyond the median's over the whole step (`step_sample::step_seconds`);
/// empty when the sample has no step time (an asynchronous stage, where nobody waits for it).
[[nodiscard]] inline std::optional<double> straggler_wait_share(const step_sample& sample) noexcept {
  if (sample.step_seconds <= 0.0) return std::nullopt;
  return (sample.slowest_seconds - sample.median_seconds) / sample.step_seconds;
}

namespace detail {

// What the two straggler triggers share: `window` observations (epochs, or samples inside them) in
// a row that meet the condition, after at least `dwell` observations in the stage.
struct streak_rule {
  std::size_t streak = 0;  // observations in a row that met the condition
  std::size_t seen = 0;    // observations this trigger has been asked about
  double last = 1.0;       // the last straggler ratio observed, for the reason
  std::optional<double> last_wait;  // ... and the last wait share, when the trigger asks for one

  bool count(bool met, std::size_t window, std::size_t dwell) noexcept {
    ++seen;
    streak = met ? streak + 1 : 0;
    return streak >= window && seen >= dwell;
  }
};

// The rule's settings.
template <class Trigger>
void check_rule(const Trigger& t, const char* name) {
  if (!(t.ratio >= 1.0) || t.window == 0 || t.every > 1000000) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        name, " needs a ratio >= 1 (the slowest worker's time per step over the median's), a window of at least 1 "
        "and every at most 1000000 steps, got ratio ", t.ratio, ", window ", t.window, " and every ", t.every));
  }
}

// The rule, checked at the first observation; then whether `ratio` (and, for a trigger that asks
// for one, the wait share `wait`) is one.
template <class Trigger>
bool observe(Trigger& t, double ratio, std::optional<double> wait) {
  if (t.state.seen == 0) t.validate();
  t.state.last = ratio;
  t.state.last_wait = wait;
  return t.state.count(t.meets(ratio, wait), t.window, t.dwell);
}

inline std::string straggler_reason(const streak_rule& state, const char* relation, double ratio, std::size_t every) {
  const char* observations = every == 0 ? (state.streak == 1 ? " epoch" : " epochs")
                                        : (state.streak == 1 ? " sample" : " samples");
  char observed[32];
  std::snprintf(observed, sizeof observed, "%.2f", state.last);
  return switchyard::detail::str("straggler ratio ", observed, " ", relation, " ", ratio, " for ", state.streak,
                                 observations);
}

}  // namespace detail

/// @brief Fires when a straggler has appeared: the straggler ratio is above `ratio` at each of
/// `window` observations in a row, and the stage has made at least `dwell` of them.
///
/// An observation is an epoch (the ratio of its record) by default. With `every` = K, it is a
/// sample of the last K steps of each worker inside the epoch instead (see
/// `trigger::samples_steps`), so that a switch follows a straggler within K steps rather than at
/// the epoch's end; records then do not count.
///
/// Meant for the switch from a synchronous stage, which waits for the slowest worker at every
/// step, to an asynchronous one, which does not. With `stragglers_gone` for the way back, the two
/// ratios make a hysteresis band (defaults 1.5 and 1.2): a ratio inside it keeps the stage as it
/// is, so a straggler ratio that wavers around one threshold cannot switch back and forth; the
/// window asks for a lasting change, and the dwell keeps a stage for a while after a switch.
///
/// `min_wait` asks, besides, that the straggler cost the synchronous stage at least that share of
/// its time: the share of each step the others wait for it (`straggler_wait_share`). Where
/// communication dominates a step, a worker 2x slower in compute costs a few percent, less than an
/// asynchronous stage would lose; `min_wait` keeps the synchronous stage there. 0 (the default)
/// does not ask. An observation without a step time (a sample of an asynchronous stage) is judged
/// by its ratio alone.
/// @code
/// using sync_then_async = switchyard::strategy::switch_to<switchyard::strategy::all_reduce<>,
///     switchyard::strategy::parameter_server<>, switchyard::trigger::straggler_detected>;
/// switchyard::trigger::straggler_detected when{.ratio = 2.0, .window = 1};         // per epoch
/// switchyard::trigger::straggler_detected soon{.window = 3, .dwell = 3, .every = 20}; // per 20 steps
/// switchyard::trigger::straggler_detected costly{.every = 20, .min_wait = 0.25};     // and it costs 25%
/// @endcode
/// @throws usage_error at its first observation (or `validate()`) when `ratio` is below 1, `window`
/// is 0, `every` above 1000000 or `min_wait` outside [0, 1).
struct straggler_detected {
  double ratio = 1.5;
  std::size_t window = 2;
  std::size_t dwell = 2;
  std::size_t every = 0;  ///< steps per worker between two samples; 0: one observation per epoch
  double min_wait = 0.0;  ///< the least share of a step the others must wait for the straggler

  detail::streak_rule state{};

  [[nodiscard]] bool meets(double observed, std::optional<double> wait) const noexcept {
    return observed > ratio && (!wait || *wait >= min_wait);
  }
  bool fire(const train::epoch_record& record) {
    return every == 0 && detail::observe(*this, straggler_ratio(record), waits(straggler_wait_share(record)));
  }
  bool fire_at(const progress& p) {
    if (every == 0 || !p.sample) return false;
    const step_sample sample = p.sample.value();
    return detail::observe(*this, straggler_ratio(sample), waits(straggler_wait_share(sample)));
  }
  [[nodiscard]] std::size_t sample_every() const noexcept { return every; }
  /// Why it fired, with the figures: the last ratio, the threshold and the run of observations,
  /// and with `min_wait`, the last wait share ("straggler ratio 2.87 > 1.5 for 3 samples, the
  /// others waiting 61% >= 25% of each step").
  [[nodiscard]] std::string reason() const {
    std::string why = detail::straggler_reason(state, ">", ratio, every);
    if (state.last_wait) {
      char wait[96];
      std::snprintf(wait, sizeof wait, ", the others waiting %.0f%% >= %.0f%% of each step", 100.0 * *state.last_wait,
                    100.0 * min_wait);
      why += wait;
    }
    return why;
  }
  /// Its settings, checked on every rank before each part of an epoch (by `switch_to` and
  /// `alternate`), before any observation.
  void validate() const {
    detail::check_rule(*this, "straggler_detected");
    if (!(min_wait >= 0.0 && min_wait < 1.0)) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          "straggler_detected needs min_wait in [0, 1) (the share of a step the others wait for the straggler), got ",
          min_wait));
    }
  }

 private:
  // The wait share, when this trigger asks for one.
  [[nodiscard]] std::optional<double> waits(std::optional<double> share) const noexcept {
    return min_wait > 0.0 ? share : std::nullopt;
  }
};

/// @brief Fires when no straggler is left: the straggler ratio is below `ratio` at each of
/// `window` observations in a row, and the stage has made at least `dwell` of them.
///
/// Meant for the switch from an asynchronous stage back to a synchronous one, once the cluster's
/// workers run alike again; see `straggler_detected` for the observations (`every`) and the
/// hysteresis band the two make.
/// @code
/// switchyard::trigger::stragglers_gone calm{.ratio = 1.1, .window = 3};
/// @endcode
/// @throws usage_error at its first observation (or `validate()`) when `ratio` is below 1, `window`
/// is 0 or `every` above 1000000.
struct stragglers_gone {
  double ratio = 1.2;
  std::size_t window = 2;
  std::size_t dwell = 2;
  std::size_t every = 0;  ///< steps per worker between two samples; 0: one observation per epoch

  detail::streak_rule state{};

  [[nodiscard]] bool meets(double observed, std::optional<double>) const noexcept { return observed < ratio; }
  bool fire(const train::epoch_record& record) {
    return every == 0 && detail::observe(*this, straggler_ratio(record), std::nullopt);
  }
  bool fire_at(const progress& p) {
    return every != 0 && p.sample && detail::observe(*this, straggler_ratio(*p.sample), std::nullopt);
  }
  [[nodiscard]] std::size_t sample_every() const noexcept { return every; }
  /// Why it fired, with the figures: the last ratio, the threshold and the run of observations.
  [[nodiscard]] std::string reason() const { return detail::straggler_reason(state, "<", ratio, every); }
  /// See `straggler_detected::validate`.
  void validate() const { detail::check_rule(*this, "stragglers_gone"); }
};

/// Checkpoints (Boost.Serialization, by argument-dependent lookup): the observations made and the
/// current run of them; ratio, window, dwell and every are configuration and come from the resumed
/// run.
template <class Archive>
void serialize(Archive& archive, straggler_detected& t, const unsigned int /*version*/) {
  archive & t.state.streak;
  archive & t.state.seen;
}

template <class Archive>
void serialize(Archive& archive, stragglers_gone& t, const unsigned int /*version*/) {
  archive & t.state.streak;
  archive & t.state.seen;
}

}  // namespace switchyard::trigger

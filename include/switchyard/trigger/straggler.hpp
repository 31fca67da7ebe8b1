// Switch when one worker falls behind the others, or when none does any more.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/history.hpp>

#include <cstddef>

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

namespace detail {

// What the two straggler triggers share: `window` epochs in a row that meet the condition, after
// at least `dwell` epochs in the stage.
struct streak_rule {
  std::size_t streak = 0;  // epochs in a row that met the condition
  std::size_t seen = 0;    // epochs this trigger has been asked about

  bool count(bool met, std::size_t window, std::size_t dwell) noexcept {
    ++seen;
    streak = met ? streak + 1 : 0;
    return streak >= window && seen >= dwell;
  }
};

inline void check_straggler_rule(const char* name, double ratio, std::size_t window) {
  if (!(ratio >= 1.0) || window == 0) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(name, " needs a ratio >= 1 (the slowest worker's compute time per step over the median's) "
                                 "and a window of at least 1 epoch, got ratio ",
                           ratio, " and window ", window));
  }
}

}  // namespace detail

/// @brief Fires when a straggler has appeared: the straggler ratio is above `ratio` at each of
/// `window` epochs in a row, and the stage has trained at least `dwell` epochs.
///
/// Meant for the switch from a synchronous stage, which waits for the slowest worker at every
/// step, to an asynchronous one, which does not. With `stragglers_gone` for the way back, the two
/// ratios make a hysteresis band (defaults 1.5 and 1.2): a ratio inside it keeps the stage as it
/// is, so a straggler ratio that wavers around one threshold cannot switch back and forth.
/// @code
/// using sync_then_async = switchyard::strategy::switch_to<switchyard::strategy::all_reduce<>,
///     switchyard::strategy::parameter_server<>, switchyard::trigger::straggler_detected>;
/// switchyard::trigger::straggler_detected when{.ratio = 2.0, .window = 1};
/// @endcode
/// @throws usage_error at its first epoch when `ratio` is below 1 or `window` is 0.
struct straggler_detected {
  double ratio = 1.5;
  std::size_t window = 2;
  std::size_t dwell = 2;

  detail::streak_rule state{};

  bool fire(const train::epoch_record& record) {
    if (state.seen == 0) detail::check_straggler_rule("straggler_detected", ratio, window);
    return state.count(straggler_ratio(record) > ratio, window, dwell);
  }
};

/// @brief Fires when no straggler is left: the straggler ratio is below `ratio` at each of
/// `window` epochs in a row, and the stage has trained at least `dwell` epochs.
///
/// Meant for the switch from an asynchronous stage back to a synchronous one, once the cluster's
/// workers run alike again; see `straggler_detected` for the hysteresis band the two make.
/// @code
/// switchyard::trigger::stragglers_gone calm{.ratio = 1.1, .window = 3};
/// @endcode
/// @throws usage_error at its first epoch when `ratio` is below 1 or `window` is 0.
struct stragglers_gone {
  double ratio = 1.2;
  std::size_t window = 2;
  std::size_t dwell = 2;

  detail::streak_rule state{};

  bool fire(const train::epoch_record& record) {
    if (state.seen == 0) detail::check_straggler_rule("stragglers_gone", ratio, window);
    return state.count(straggler_ratio(record) < ratio, window, dwell);
  }
};

/// Checkpoints (Boost.Serialization, by argument-dependent lookup): the epochs seen and the
/// current run of epochs; ratio, window and dwell are configuration and come from the resumed run.
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

// The Optimizer role: applies a gradient to parameters over flat spans and owns its state as an
// optim::optimizer_state, plus the bookkeeping the shipped optimizers share.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/optim/optimizer_state.hpp"
#include "switchyard/optim/schedule.hpp"

namespace switchyard::optim {

/// @brief An Optimizer: updates a flat span of parameters in place from the aligned gradient,
/// and exposes its whole state for handing over, sharding and checkpointing.
///
/// Required expressions, for `O& o`, `const O& co`, `std::span<T> params`,
/// `std::span<const T> grads` and `optimizer_state<T> state`, with `T = typename O::value_type`:
/// @code
/// o.step(params, grads);                              // one update; sizes equal the state's
/// const optimizer_state<T>& s = co.export_state();    // step count and per-parameter slots
/// o.import_state(std::move(state));                   // continue from `state` (any size)
/// @endcode
/// `import_state` then `step` must behave exactly as the optimizer that exported the state would
/// have (the learning rate follows the imported step count), and the slots must be per-parameter
/// so that `optimizer_state::slice` gives a valid state for a shard. Shipped: `sgd`, `momentum`
/// (with Nesterov), `adam`.
template <class O>
concept optimizer = requires { typename O::value_type; } &&
    requires(O& o, const O& co, std::span<typename O::value_type> params,
             std::span<const typename O::value_type> grads,
             optimizer_state<typename O::value_type> state) {
      o.step(params, grads);
      { co.export_state() } -> std::convertible_to<const optimizer_state<typename O::value_type>&>;
      o.import_state(std::move(state));
    };

/// @brief An Optimizer that can serve under `strategy::switch_to`: at the switch, the switch may
/// scale every later learning rate (`switch_options::learning_rate_scale`, `rescale_for_batch`)
/// and ramp it up again (`switch_options::warmup_steps`), so it needs both members, whatever
/// options a run sets:
/// @code
/// o.scale_learning_rate(0.25);   // every later rate times 0.25 (on top of earlier scales)
/// o.rewarm(100);                 // the next 100 steps ramp linearly up to the schedule's rate
/// @endcode
/// The shipped optimizers have both (from `optim::detail::optimizer_base`).
template <class O>
concept switchable = optimizer<O> && requires(O& o, double factor, std::uint64_t steps) {
  o.scale_learning_rate(factor);
  o.rewarm(steps);
};

/// @brief What changes an optimizer's learning rate besides its state and schedule: the scale
/// of `scale_learning_rate` and the ramp of `rewarm` (a strategy switch sets both). A checkpoint
/// keeps them, so that a resumed run uses the same rates as the run it continues.
struct rate_adjustments {
  double learning_rate_scale = 1.0;
  std::uint64_t rewarm_from = 0;   ///< the step at which the ramp started
  std::uint64_t rewarm_steps = 0;  ///< its length; 0: no ramp
  friend bool operator==(const rate_adjustments&, const rate_adjustments&) = default;
};

/// Boost.Serialization hook (found by argument-dependent lookup).
template <class Archive>
void serialize(Archive& archive, rate_adjustments& a, const unsigned int /*version*/) {
  archive & a.learning_rate_scale;
  archive & a.rewarm_from;
  archive & a.rewarm_steps;
}

namespace detail {

/// State, schedule and size checks shared by the shipped optimizers; `Slots` is the number of
/// per-parameter buffers the update needs.
template <std::floating_point T, schedule Schedule, std::size_t Slots>
class optimizer_base {
 public:
  using value_type = T;

  /// The state: step count and slots (copy it to hand it over or slice it).
  [[nodiscard]] const optimizer_state<T>& export_state() const noexcept { return state_; }

  /// Continues from `state`, which may cover any number of parameters (a shard, for instance).
  void import_state(optimizer_state<T> state) {
    bool consistent = state.slots.size() == Slots;
    for (const std::vector<T>& slot : state.slots) consistent = consistent && slot.size() == state.size;
    if (!consistent) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          "optim: imported state has ", state.slots.size(), " slots for ", state.size,
          " parameters; this optimizer needs ", Slots, " slots of that size"));
    }
    state_ = std::move(state);
  }

  /// The learning rate the next step will use: the schedule's at the state's clock, times the
  /// scale, times the ramp of a warm-up started by `rewarm`.
  [[nodiscard]] double learning_rate() const { return rate_at(state_.clock, state_.step); }
  /// How far each step moves the schedule's clock: the number of batches one update trains.
  /// Schedules count batches, not updates, so that a schedule means the same under every
  /// strategy: an all-reduce update over W workers trains W batches (the strategy sets W), an
  /// asynchronous parameter server's update one. 1 by default.
  void set_schedule_stride(std::uint64_t batches) {
    if (batches == 0) switchyard::detail::raise<usage_error>("optim: the schedule stride must be at least 1 batch");
    stride_ = batches;
  }
  [[nodiscard]] std::uint64_t schedule_stride() const noexcept { return stride_; }
  /// Ramps the learning rate up again, linearly from 1/`steps` of the schedule's rate to all of it
  /// over the next `steps` steps: a strategy switch that changes how often and how noisily the
  /// optimizer steps restarts gently this way. 0 steps: no ramp.
  void rewarm(std::uint64_t steps) noexcept {
    rewarm_from_ = state_.step;
    rewarm_steps_ = steps;
  }
  /// Multiplies every later learning rate by `factor` (on top of earlier scalings): a strategy
  /// switch rescales the rate for the new effective batch this way.
  void scale_learning_rate(double factor) {
    if (!(factor > 0.0)) {
      switchyard::detail::raise<usage_error>(
          switchyard::detail::str("optim: the learning-rate scale must be > 0, got ", factor));
    }
    learning_rate_scale_ *= factor;
  }
  [[nodiscard]] double learning_rate_scale() const noexcept { return learning_rate_scale_; }
  /// The learning-rate scale and ramp, for a checkpoint.
  [[nodiscard]] rate_adjustments export_adjustments() const noexcept {
    return {learning_rate_scale_, rewarm_from_, rewarm_steps_};
  }
  /// Continues with the scale and ramp of a checkpoint (replacing, not compounding, the current).
  void import_adjustments(const rate_adjustments& a) {
    if (!(a.learning_rate_scale > 0.0)) {
      switchyard::detail::raise<usage_error>(
          switchyard::detail::str("optim: the learning-rate scale must be > 0, got ", a.learning_rate_scale));
    }
    learning_rate_scale_ = a.learning_rate_scale;
    rewarm_from_ = a.rewarm_from;
    rewarm_steps_ = a.rewarm_steps;
  }
  [[nodiscard]] const Schedule& schedule() const noexcept { return schedule_; }
  /// Number of parameters the state covers.
  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(state_.size); }

 protected:
  optimizer_base(std::size_t size, Schedule schedule)
      : schedule_(std::move(schedule)),
        state_{0, size, std::vector<std::vector<T>>(Slots, std::vector<T>(size, T{0}))} {}

  /// Checks the spans against the state, counts the step, and returns its learning rate.
  T begin_step(std::span<const T> params, std::span<const T> grads, std::string_view who) {
    if (params.size() != state_.size || grads.size() != state_.size) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          who, "::step: ", params.size(), " parameters and ", grads.size(),
          " gradients for a state of ", state_.size));
    }
    const double rate = rate_at(state_.clock, state_.step);
    ++state_.step;
    state_.clock += stride_;
    return static_cast<T>(rate);
  }

  [[nodiscard]] double rate_at(std::uint64_t clock, std::uint64_t step) const {
    double rate = schedule_.lr(clock) * learning_rate_scale_;
    if (step >= rewarm_from_ && step - rewarm_from_ < rewarm_steps_) {
      rate *= static_cast<double>(step - rewarm_from_ + 1) / static_cast<double>(rewarm_steps_);
    }
    return rate;
  }

  Schedule schedule_;
  optimizer_state<T> state_;
  double learning_rate_scale_ = 1.0;
  std::uint64_t rewarm_from_ = 0;
  std::uint64_t rewarm_steps_ = 0;
  std::uint64_t stride_ = 1;
};

}  // namespace detail
}  // namespace switchyard::optim

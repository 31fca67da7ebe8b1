// A part of an epoch under a stage that a step trigger watches (`trigger::within_epoch`), in
// `switch_to` and `alternate`: the steps, the stop and the samples, and the checks before it.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/strategy/detail/compute_sampler.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <cstdint>

namespace switchyard::strategy::detail {

// One part of an epoch under a stage that a trigger watches between steps (`trigger::within_epoch`):
// in a synchronous stage every worker counts the same batches, sees the same samples and asks the
// trigger alike, so they stop after the same step. A stage that hands out batches asks its rule
// instead (`stop_rule_for`); here it only steps.
class watched_part {
 public:
  void begin() noexcept {
    steps_ = 0;
    stopping_ = false;
    sampler_.begin_part();
  }
  // One step of `stage`, whose trigger `when` counts from `before` batches trained before this part.
  template <class Stage, class Trigger, class Transport, class Model, class Optimizer>
  step_outcome step(Stage& stage, Trigger& when, std::uint64_t before, Transport& t, Model& m, Optimizer& o) {
    const bool sampled = trigger::sample_every(when) != 0 && compute_sampler::applies(stage, t);
    if (sampled) sampler_.step_started(t);
    step_outcome outcome = traits::step(stage, t, m, o);
    if (!traits::hands_out_batches(stage)) {
      ++steps_;
      trigger::progress p{before + steps_ * traits::worker_count(stage, t)};
      if (sampled) {
        const int group = traits::compares_nodes(stage) ? transport::topology_of(t).node : t.rank();
        p.sample = sampler_.step_ended(t, trigger::sample_every(when), group);
      }
      if (!stopping_ && static_cast<bool>(when.fire_at(p))) {
        stopping_ = true;
        outcome.last = true;
      }
    }
    return outcome;
  }
  // The steps of this part, on each worker of a synchronous stage.
  [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }
  // Whether the trigger fired at one of them.
  [[nodiscard]] bool stopping() const noexcept { return stopping_; }

 private:
  std::uint64_t steps_ = 0;
  bool stopping_ = false;
  compute_sampler sampler_;  // the samples, for a sampling trigger
};

// Before a part of an epoch, on every rank alike: the trigger's own settings (its `validate()`,
// when it has one), and a refusal of a sampling trigger on a stage that gives no samples.
template <class Stage, class Trigger, class Transport>
void check_trigger(const Stage& stage, const Trigger& when, const Transport& t) {
  if constexpr (requires { when.validate(); }) when.validate();
  if (trigger::sample_every(when) != 0 && !traits::hands_out_batches(stage) && !compute_sampler::applies(stage, t)) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "a trigger that samples every ", trigger::sample_every(when), " steps cannot watch stage '",
        traits::name(stage), "', which gives no samples: a synchronous stage is sampled only when every rank is a "
        "worker (a synchronous parameter server's servers take no steps)"));
  }
}

}  // namespace switchyard::strategy::detail

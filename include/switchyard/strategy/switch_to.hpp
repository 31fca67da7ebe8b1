// The Strategy Switch: train under one strategy, then under another, inside one run, at a
// trigger chosen at compile time. Itself a strategy, so switches nest into chains.
#pragma once

#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/stage.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/optim/optimizer.hpp>
#include <switchyard/optim/optimizer_state.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/replicas.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/core/history.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::strategy {

/// @brief What happens to the optimizer state at the switch.
struct switch_options {
  /// The first slot of the optimizer state: momentum's velocity, Adam's first moment.
  enum class momentum_policy { keep, reset, scale };
  momentum_policy momentum = momentum_policy::keep;
  /// With `momentum_policy::scale`: the factor applied to that slot.
  double momentum_scale = 1.0;
  /// Multiplies every later learning rate (for instance by the ratio of the stages' effective
  /// batches).
  double learning_rate_scale = 1.0;
  /// Ramps the learning rate up again over this many optimizer steps after the switch (see
  /// `rewarm` of the optimizers): an asynchronous stage that starts at the full rate with moments
  /// estimated under another strategy can lose what it learned in its first steps.
  std::uint64_t warmup_steps = 0;
  /// Multiplies the second slot of the optimizer state (Adam's second moment v). Gradient noise
  /// variance goes with 1 / the batch an update averages, so when that batch changes from B1 to
  /// B2 at the switch, B1 / B2 keeps v where it would have been under the second stage.
  double second_moment_scale = 1.0;
  /// Adapts to the change of the batch one update averages, from B1 batches under the first stage
  /// to B2 under the second (`batches_per_update` of each; all-reduce: one per rank, an
  /// asynchronous parameter server: one): the learning rate by `learning_rate_rule`, the second
  /// moment times B1 / B2; on top of the two factors above.
  bool rescale_for_batch = false;
  /// How `rescale_for_batch` moves the learning rate with the batch.
  enum class batch_rule {
    linear,      ///< times B2 / B1: the linear scaling rule, SGD's (Goyal et al., 2017)
    square_root  ///< times sqrt(B2 / B1): the square-root rule, Adam's (Malladi et al., 2022)
  };
  batch_rule learning_rate_rule = batch_rule::linear;
};

namespace detail {

// The options of a switch, applied to the optimizer after the hand-over: `batch_ratio` is B2 / B1
// when `rescale_for_batch` is on, else 1.
template <class Optimizer>
void apply_switch_options(Optimizer& o, const switch_options& options, double batch_ratio) {
  static_assert(optim::switchable<Optimizer>,
                "an optimizer under switch_to or alternate must provide scale_learning_rate(double) and rewarm(std::uint64_t), "
                "which the switch calls for its options (optim::switchable): see optim/optimizer.hpp");
  const double first_factor = options.momentum == switch_options::momentum_policy::keep    ? 1.0
                              : options.momentum == switch_options::momentum_policy::reset ? 0.0
                                                                                           : options.momentum_scale;
  const double second_factor = options.second_moment_scale / batch_ratio;
  if (first_factor != 1.0 || second_factor != 1.0) {
    auto state = o.export_state();
    const double factors[] = {first_factor, second_factor};
    for (std::size_t k = 0; k < std::min<std::size_t>(2, state.slots.size()); ++k) {
      for (auto& v : state.slots[k]) v = static_cast<std::remove_reference_t<decltype(v)>>(v * factors[k]);
    }
    o.import_state(std::move(state));
  }
  const double rate_factor =
      options.learning_rate_rule == switch_options::batch_rule::square_root ? std::sqrt(batch_ratio) : batch_ratio;
  if (options.learning_rate_scale * rate_factor != 1.0) o.scale_learning_rate(options.learning_rate_scale * rate_factor);
  if (options.warmup_steps > 0) o.rewarm(options.warmup_steps);
}

// B2 / B1 for a switch from `from` to `to` under `options`: the change of the batch one update
// averages, or 1 when the options do not rescale for it.
template <class From, class To, class Transport>
double switch_batch_ratio(const From& from, const To& to, const Transport& t, const switch_options& options) {
  if (!options.rescale_for_batch) return 1.0;
  return static_cast<double>(traits::batches_per_update(to, t)) / static_cast<double>(traits::batches_per_update(from, t));
}

// The members a strategy of stages forwards to its active stage, shared by switch_to and
// alternate: Derived provides active(f), const and not, which calls f with the active stage.
template <class Derived>
class forwards_to_active {
 public:
  /// The active stage's name (a copy: a stage's `name()` may return a temporary string).
  [[nodiscard]] std::string name() const {
    return self().active([](const auto& s) { return traits::name(s); });
  }
  /// Whether the active stage keeps replicas identical (`traits::replicated`).
  [[nodiscard]] bool replicated() const {
    return self().active([](const auto& s) { return traits::replicated(s); });
  }
  template <class Transport>
  [[nodiscard]] std::size_t worker_count(const Transport& t) const {
    return self().active([&](const auto& s) { return traits::worker_count(s, t); });
  }
  template <class Transport>
  [[nodiscard]] std::optional<std::size_t> worker_index(const Transport& t) const {
    return self().active([&](const auto& s) { return traits::worker_index(s, t); });
  }
  template <class Transport>
  [[nodiscard]] std::size_t batches_per_update(const Transport& t) const {
    return self().active([&](const auto& s) { return traits::batches_per_update(s, t); });
  }
  [[nodiscard]] bool hands_out_batches() const {
    return self().active([](const auto& s) { return traits::hands_out_batches(s); });
  }
  template <class Transport, class Model, class Optimizer>
  void serve(Transport& t, Model& m, Optimizer& o) {
    self().active([&](auto& s) { traits::serve(s, t, m, o); });
  }
  template <class Transport, class Model, class Optimizer>
  void hand_over(Transport& t, Model& m, Optimizer& o) {
    self().active([&](auto& s) { traits::hand_over(s, t, m, o); });
  }
  /// Collective: the whole optimizer state, from the active stage when it shards it (a parameter
  /// server), else this rank's.
  template <class Transport, class Optimizer>
  [[nodiscard]] optim::optimizer_state<typename Optimizer::value_type> assembled_state(Transport& t,
                                                                                      const Optimizer& o) const {
    return self().active([&](const auto& s) { return traits::assembled_state(s, t, o); });
  }
  /// Collective: what the active stage's progress needs from the other ranks, to rank 0.
  template <class Transport>
  void prepare_checkpoint(Transport& t) {
    self().active([&](auto& s) { traits::prepare_checkpoint(s, t); });
  }
  template <class Transport, class Model, class Optimizer>
  void finish(Transport& t, Model& m, Optimizer& o) {
    self().active([&](auto& s) { traits::finish(s, t, m, o); });
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
  Derived& self() { return static_cast<Derived&>(*this); }
};

// The straggler samples of a synchronous stage in which every rank is a worker (see
// `trigger::samples_steps`): each worker's compute time per step, from the end of its last step to
// the start of this one, and its whole step, end to end, shared every `every` steps by one
// all-gather of two numbers per worker.
class compute_sampler {
 public:
  // Whether a synchronous `stage` can be sampled: every rank steps, so every rank joins the gather.
  template <class Stage, class Transport>
  [[nodiscard]] static bool applies(const Stage& stage, const Transport& t) {
    return !traits::hands_out_batches(stage) && traits::worker_count(stage, t) == static_cast<std::size_t>(t.size());
  }

  // A new part of an epoch: its first step has no earlier end to time from.
  void begin_part() noexcept {
    last_end_.reset();
    mine_ = {};
    timed_ = 0;
    steps_ = 0;
  }
  // At the start of a step, after the worker's forward and backward pass.
  void step_started() {
    if (!last_end_) return;
    mine_[0] += std::chrono::duration<double>(clock::now() - *last_end_).count();
  }
  // At the end of a step; every `every` steps, collective over all ranks: the sample (none when
  // no step of the window was timed, the same on every rank).
  template <class Transport>
  std::optional<trigger::step_sample> step_ended(Transport& t, std::size_t every) {
    const clock::time_point now = clock::now();
    if (last_end_) {
      mine_[1] += std::chrono::duration<double>(now - *last_end_).count();
      ++timed_;
    }
    std::optional<trigger::step_sample> sample;
    if (every != 0 && ++steps_ % every == 0 && timed_ != 0) {
      for (double& each : mine_) each /= static_cast<double>(timed_);
      const auto workers = static_cast<std::size_t>(t.size());
      gathered_.resize(2 * workers);
      collective::allgather(t, std::span<const double>(mine_), gathered_);
      compute_.resize(workers);
      whole_.resize(workers);
      for (std::size_t w = 0; w < workers; ++w) {
        compute_[w] = gathered_[2 * w];
        whole_[w] = gathered_[2 * w + 1];
      }
      sample = trigger::summarize_steps(compute_);
      sample->step_seconds = trigger::summarize_steps(whole_).median_seconds;
      mine_ = {};
      timed_ = 0;
    }
    last_end_ = clock::now();
    return sample;
  }

 private:
  using clock = std::chrono::steady_clock;
  std::optional<clock::time_point> last_end_;
  std::array<double, 2> mine_{};  // compute and whole steps since the last sample, summed
  std::size_t timed_ = 0;         // steps they cover
  std::uint64_t steps_ = 0;       // steps of this part
  std::vector<double> gathered_;  // the workers' two numbers, worker by worker
  std::vector<double> compute_;
  std::vector<double> whole_;
};

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
    if (sampled) sampler_.step_started();
    step_outcome outcome = traits::step(stage, t, m, o);
    if (!traits::hands_out_batches(stage)) {
      ++steps_;
      trigger::progress p{before + steps_ * traits::worker_count(stage, t)};
      if (sampled) p.sample = sampler_.step_ended(t, trigger::sample_every(when));
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

// The rule a stage that hands out batches asks before each one: `when`'s `fire_at`, counting
// from `before` batches, with the trigger's samples. By value: the count and the trigger do not
// change within the part, and a copy of the switch must not reach back into the object it came from.
template <class Trigger>
stop_rule stop_rule_for(const Trigger& when, std::uint64_t before) {
  return {[when = Trigger(when), before](const trigger::progress& p) mutable {
            return static_cast<bool>(when.fire_at(trigger::progress{before + p.batches, p.sample}));
          },
          trigger::sample_every(when)};
}

}  // namespace detail

template <class First, class Second, class Trigger>
class switch_to;

/// Whether `T` is a `switch_to`.
template <class T>
inline constexpr bool is_switch_to = false;
template <class First, class Second, class Trigger>
inline constexpr bool is_switch_to<switch_to<First, Second, Trigger>> = true;

/// @brief Trains under `First` until `Trigger` fires, then under `Second`.
///
/// The trigger sees the epoch record every rank agrees on after each epoch, so every rank switches
/// after the same epoch without a message of its own. A trigger that can also fire between steps
/// (`trigger::within_epoch`, such as `after_steps`) switches inside the epoch: in a synchronous
/// first stage every worker asks it after each step with the same count of batches and they stop
/// together; in an asynchronous parameter-server stage server 0 asks it before handing out each
/// batch and stops handing them out. Either way, at the end of that part of the epoch one
/// all-reduce tells every rank whether and after how many batches the stage stopped, and the
/// second stage trains the rest of the epoch. At the switch, the first stage hands over:
/// the parameters and the whole optimizer state reach every rank (a parameter server assembles its
/// servers' shards); the momentum and learning-rate options apply; then the second stage sets up
/// from that state, with the data re-sharded over its own workers from the next batch on (the
/// rest of the epoch, after a switch inside it). A switch is a strategy, so it nests:
/// @code
/// using namespace switchyard;
/// strategy::switch_to ps_then_ar{strategy::parameter_server<>{1}, strategy::all_reduce<>{}, trigger::after_epochs{3}};
/// strategy::switch_to<strategy::parameter_server<>, strategy::switch_to<strategy::all_reduce<>,
///     strategy::parameter_server<>, trigger::after_epochs<6>>, trigger::after_epochs<2>> three_stages;
/// @endcode
/// @tparam First, Second strategies; @tparam Trigger a `trigger::trigger`.
template <class First, class Second, class Trigger>
class switch_to : public detail::forwards_to_active<switch_to<First, Second, Trigger>> {
  static_assert(requires(const First& s) {
    { s.name() } -> std::convertible_to<std::string_view>;
  }, "the first stage of switch_to must provide name() const, returning its name as something convertible to "
     "std::string_view: see strategy/policy.hpp");
  static_assert(requires(const Second& s) {
    { s.name() } -> std::convertible_to<std::string_view>;
  }, "the second stage of switch_to must provide name() const, returning its name as something convertible to "
     "std::string_view: see strategy/policy.hpp");
  static_assert(trigger::trigger<Trigger>,
                "the trigger must be copyable and provide fire(const train::epoch_record&) returning bool: see "
                "trigger/trigger.hpp");

 public:
  /// Only when every part is default-constructible: a trigger with a run-time threshold
  /// (`after_steps{n}`) must be given.
  switch_to()
    requires(std::is_default_constructible_v<First> && std::is_default_constructible_v<Second> &&
             std::is_default_constructible_v<Trigger>)
  = default;
  switch_to(First first, Second second, Trigger trigger, switch_options options = {})
      : first_(std::move(first)), second_(std::move(second)), trigger_(std::move(trigger)), options_(options) {}

  [[nodiscard]] const First& first() const noexcept { return first_; }
  [[nodiscard]] const Second& second() const noexcept { return second_; }
  [[nodiscard]] const Trigger& trigger() const noexcept { return trigger_; }
  [[nodiscard]] const switch_options& options() const noexcept { return options_; }
  /// Whether the switch happened.
  [[nodiscard]] bool switched() const noexcept { return switched_after_.has_value(); }
  /// The last epoch the first stage trained entirely, counted from the start of the run (a switch
  /// inside epoch e gives e - 1), also for a switch nested in another one's second stage.
  [[nodiscard]] std::optional<std::size_t> switched_after_epoch() const noexcept { return switched_after_; }
  /// The batches (worker steps, all workers together) the first stage trained.
  [[nodiscard]] std::optional<std::uint64_t> switched_after_batches() const noexcept {
    return switched() ? std::optional<std::uint64_t>(trained_) : std::nullopt;
  }

  /// Sets up the active stage: the first, or, in a run resumed from a checkpoint taken after the
  /// switch, the second.
  template <class Transport, class Model, class Optimizer>
  void setup(Transport& t, Model& m, Optimizer& o) {
    check_stages<Transport, Model, Optimizer>();
    active([&](auto& s) { traits::setup(s, t, m, o); });
  }

  template <class Transport>
  void begin_epoch(Transport& t, std::size_t batches) {
    resume_at_.reset();
    part_batches_ = batches;
    part_.begin();
    if constexpr (trigger::within_epoch<Trigger>) {
      if (!switched()) {
        detail::check_trigger(first_, trigger_, t);
        // By value: the count trained before this part and the trigger do not change within it, and
        // a copy of the switch must not reach back into this object.
        traits::stop_when(first_, detail::stop_rule_for(trigger_, trained_ + epoch_trained_));
      }
    }
    active([&](auto& s) { traits::begin_epoch(s, t, batches); });
  }

  /// The active stage's pass (an overlapping all-reduce starts its exchange inside it).
  template <class Transport, class Model, class Batch>
  double forward_backward(Transport& t, Model& m, const Batch& batch) {
    const collective::stage_scope stage{this->name()};  // collectives started in the pass carry the stage
    return switched() ? traits::forward_backward(second_, t, m, batch) : traits::forward_backward(first_, t, m, batch);
  }

  template <class Transport, class Model, class Optimizer>
  step_outcome step(Transport& t, Model& m, Optimizer& o) {
    const collective::stage_scope stage{this->name()};  // names the stage in checked collectives' reports
    if (switched()) return traits::step(second_, t, m, o);
    if constexpr (!trigger::within_epoch<Trigger>) {
      return traits::step(first_, t, m, o);
    } else {
      return part_.step(first_, trigger_, trained_ + epoch_trained_, t, m, o);
    }
  }

  template <class Transport, class Model, class Optimizer>
  void end_epoch(Transport& t, Model& m, Optimizer& o) {
    const bool first_active = !switched();
    // Counted before the stage's own end_epoch: a switch nested as the first stage may change its
    // workers there.
    const std::uint64_t part_trained = part_.steps() * traits::worker_count(first_, t);
    active([&](auto& s) { traits::end_epoch(s, t, m, o); });
    if constexpr (trigger::within_epoch<Trigger>) {
      if (!first_active) return;
      // Did the stage stop inside the epoch, and after how many of its batches? The workers of
      // a synchronous stage know; of an asynchronous one, the rank that handed out the batches.
      std::array<std::uint64_t, 2> stopped{part_.stopping() ? 1u : 0u, part_.stopping() ? part_trained : 0};
      if (const std::optional<std::size_t> handed_out = traits::stopped_after(first_)) stopped = {1, *handed_out};
      collective::allreduce(t, stopped, ops::max{});
      if (stopped[0] == 0) {
        // A switch nested as the first stage that stopped inside this part: the next part of the
        // epoch goes on counting from the batches trained so far.
        epoch_trained_ += traits::resume_at(first_).value_or(0);
        return;
      }
      if (stopped[1] >= part_batches_) {
        // The stop fell on the part's last batch: the first stage trained the whole epoch, so it
        // switches between epochs, in after_epoch, which counts the epoch.
        switch_pending_ = true;
        return;
      }
      trained_ += epoch_trained_ + stopped[1];
      resume_at_ = static_cast<std::size_t>(stopped[1]);
      switch_now(t, m, o);
    }
  }

  /// After an `end_epoch` that switched inside the epoch: the batches of that part the first
  /// stage trained; the trainer trains the rest under the second stage.
  /// Else the active stage's, when it is a switch that did so (nested in either slot).
  [[nodiscard]] std::optional<std::size_t> resume_at() const {
    if (resume_at_) return resume_at_;
    return active([](const auto& s) { return traits::resume_at(s); });
  }

  /// After each epoch: the active stage hears the record first (a nested switch may fire); then,
  /// before the switch, the trigger decides.
  template <class Transport, class Model, class Optimizer>
  void after_epoch(Transport& t, Model& m, Optimizer& o, const train::epoch_record& record) {
    active([&](auto& s) { traits::after_epoch(s, t, m, o, record); });
    epoch_trained_ = 0;  // the record's steps count every part of the epoch
    last_epoch_ = record.epoch;
    if (switched()) return;
    trained_ += record.steps;
    const bool pending = std::exchange(switch_pending_, false);
    if (static_cast<bool>(trigger_.fire(record)) || pending) switch_now(t, m, o);
  }

  /// Checkpoints, Boost.Serialization style (the same member saves and loads): whether and where
  /// the switch happened, the trigger's state, then each stage's own progress (nested switches).
  /// The epoch-internal counters are not saved: checkpoints are taken between epochs.
  template <class Archive>
  void serialize_progress(Archive& archive) {
    static_assert(requires(Archive& a, Trigger& t) { serialize(a, t, 0u); } ||
                      requires(Archive& a, Trigger& t) { t.serialize(a, 0u); },
                  "checkpointing a switch_to needs its trigger's state: give the trigger a Boost.Serialization "
                  "serialize(archive, trigger, version) (empty if it keeps no state), as the shipped triggers have");
    bool switched_before = switched_after_.has_value();
    std::uint64_t after = switched_after_.value_or(0);
    std::uint64_t epochs = last_epoch_;
    serialize_flag(archive, switched_before);
    archive & after;
    archive & epochs;
    archive & trained_;
    archive & trigger_;
    if constexpr (Archive::is_loading::value) {
      switched_after_ = switched_before ? std::optional<std::size_t>(static_cast<std::size_t>(after)) : std::nullopt;
      last_epoch_ = static_cast<std::size_t>(epochs);
    }
    traits::serialize_progress(first_, archive);
    traits::serialize_progress(second_, archive);
  }

 private:
  friend class detail::forwards_to_active<switch_to>;
  template <class, class, class>
  friend class switch_to;  // a switch sets the epoch count of a switch nested in its second slot

  template <class F>
  decltype(auto) active(F&& f) {
    return switched() ? std::forward<F>(f)(second_) : std::forward<F>(f)(first_);
  }
  template <class F>
  decltype(auto) active(F&& f) const {
    return switched() ? std::forward<F>(f)(second_) : std::forward<F>(f)(first_);
  }

  template <class Transport, class Model, class Optimizer>
  void switch_now(Transport& t, Model& m, Optimizer& o) {
    traits::stop_when(first_, stop_rule{});
    traits::hand_over(first_, t, m, o);
    detail::apply_switch_options(o, options_, detail::switch_batch_ratio(first_, second_, t, options_));
    // A switch in the second slot counts epochs from the start of the run, not from now.
    if constexpr (is_switch_to<Second>) second_.last_epoch_ = last_epoch_;
    traits::setup(second_, t, m, o);
    switched_after_ = last_epoch_;
    if (traits::replicated(second_) && checks_collectives(t)) {
      verify_replicas(t, m, o, switchyard::detail::str("after the switch to '", std::string_view(second_.name()), "'"));
    }
  }

  // One sentence per stage that is not a strategy, instead of an error deep in a member.
  template <class Transport, class Model, class Optimizer>
  static constexpr void check_stages() {
    static_assert(policy<First, Model, Optimizer, Transport>,
                  "the first stage of switch_to must be a strategy: name() const and step(t, m, o) returning "
                  "strategy::step_outcome or void (strategy/policy.hpp)");
    static_assert(policy<Second, Model, Optimizer, Transport>,
                  "the second stage of switch_to must be a strategy: name() const and step(t, m, o) returning "
                  "strategy::step_outcome or void (strategy/policy.hpp)");
  }

  First first_{};
  Second second_{};
  Trigger trigger_{};
  switch_options options_{};
  std::optional<std::size_t> switched_after_;
  std::size_t last_epoch_ = 0;       // the last epoch of the run completed (before a switch: by the first stage)
  std::uint64_t trained_ = 0;        // batches the first stage trained
  std::uint64_t epoch_trained_ = 0;  // ... in this epoch's earlier parts (a nested switch stopped)
  // The current part of an epoch.
  std::size_t part_batches_ = 0;     // the batches the trainer plans for it
  detail::watched_part part_;        // a synchronous first stage's steps, stop and samples
  bool switch_pending_ = false;      // the trigger fired at the part's last step: switch in after_epoch
  std::optional<std::size_t> resume_at_;
};

}  // namespace switchyard::strategy

// The Strategy Switch: train under one strategy, then under another, inside one run, at a
// trigger chosen at compile time. Itself a strategy, so switches nest into chains.
#pragma once

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/stage.hpp>
#include <switchyard/core/history.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/strategy/detail/forwards_to_active.hpp>
#include <switchyard/strategy/detail/hand_over.hpp>
#include <switchyard/strategy/detail/switch_options.hpp>
#include <switchyard/strategy/detail/watched_part.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

namespace switchyard::strategy {

namespace detail {

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
template <class First, class Second, class Trigger>
inline constexpr bool is_switch_chain<switch_to<First, Second, Trigger>> = true;

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

  /// Enters the active stage after a hand-over, when this switch is the stage another one enters.
  template <class Transport, class Model, class Optimizer>
  void enter(Transport& t, Model& m, Optimizer& o) {
    check_stages<Transport, Model, Optimizer>();
    active([&](auto& s) { traits::enter(s, t, m, o); });
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
    // A switch in the second slot counts epochs from the start of the run, not from now.
    if constexpr (is_switch_to<Second>) second_.last_epoch_ = last_epoch_;
    detail::switch_stages(first_, second_, options_, t, m, o);
    switched_after_ = last_epoch_;
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

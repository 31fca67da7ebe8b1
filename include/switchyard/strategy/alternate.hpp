// Switching online: alternate between two strategies, both ways and as often as two triggers say,
// inside one run and with no restart.
#pragma once

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/broadcast.hpp>
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
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::strategy {

/// @brief One switch of an `alternate`: when, into which stage, and why.
struct alternation {
  /// The last epoch trained entirely before the switch, counted from the start of the run.
  std::size_t after_epoch = 0;
  /// For a switch inside the next epoch: after how many of that epoch's batches. Empty: between
  /// epochs.
  std::optional<std::size_t> at_batch{};
  std::string to;      ///< the name of the stage it entered
  std::string reason;  ///< the trigger's `reason()`, when it has one: what it saw, with figures
};

namespace detail {

// A trigger's account of why it fired, or nothing when it gives none.
template <class Trigger>
std::string trigger_reason(const Trigger& t) {
  if constexpr (requires {
                  { t.reason() } -> std::convertible_to<std::string>;
                }) {
    return t.reason();
  } else {
    return {};
  }
}

}  // namespace detail

template <class A, class B, class ToB, class ToA>
class alternate;

template <class A, class B, class ToB, class ToA>
inline constexpr bool is_switch_chain<alternate<A, B, ToB, ToA>> = true;
template <class A, class B, class ToB, class ToA>
inline constexpr bool switches_both_ways<alternate<A, B, ToB, ToA>> = true;

/// @brief Trains under `A`, switches to `B` when `ToB` fires, back to `A` when `ToA` fires, and so
/// on, as often as the triggers say.
///
/// The trigger of the active stage hears the epoch record every rank agrees on after each epoch,
/// so every rank switches after the same epoch with no message of its own. Each stage starts with
/// a fresh copy of its trigger (the one given at construction), so a trigger's window and dwell
/// count from the stage's first epoch. Every switch is a `switch_to`'s switch: the stage it leaves
/// hands over parameters and the whole optimizer state to every rank, the `switch_options` apply
/// (with `rescale_for_batch`, the learning rate goes with B_to / B_from and back again), the stage
/// it enters sets up from that state, and with checked collectives on a replicated stage is
/// verified to start from identical replicas.
///
/// A trigger that can fire inside an epoch (`trigger::within_epoch`) switches there, as in a
/// `switch_to`, and a sampling one (`trigger::samples_steps`) sees the workers' step times every K
/// steps: a synchronous stage shares each worker's compute time per step with one small all-gather
/// per sample, and in an asynchronous stage the coordinator (parameter server 0) times the
/// workers' requests for batches, with no message of its own. At the end of each part of an epoch
/// one all-reduce of three numbers tells every rank whether and after how many batches the stage
/// stopped, so every rank switches after the same batch; the other stage trains the rest of the
/// epoch, and may switch back inside it. In an asynchronous stage the trigger's state lives on the
/// coordinator, which alone asks it; a checkpoint keeps rank 0's copy, so a resumed run counts that
/// stage's window afresh.
///
/// With `trigger::straggler_detected` and `trigger::stragglers_gone` it follows a straggler that
/// comes and goes:
/// @code
/// using namespace switchyard;
/// using adaptive = strategy::alternate<strategy::all_reduce<>, strategy::parameter_server<>,
///                                      trigger::straggler_detected, trigger::stragglers_gone>;
/// adaptive per_epoch{strategy::all_reduce<>{}, strategy::parameter_server<>{1}, {}, {}};
/// adaptive every_20_steps{strategy::all_reduce<>{}, strategy::parameter_server<>{1},
///                         {.window = 3, .dwell = 3, .every = 20}, {.window = 3, .dwell = 3, .every = 20}};
/// @endcode
/// @tparam A the first stage and @tparam B the other, strategies; @tparam ToB, @tparam ToA
/// `trigger::trigger`s: when to leave A, and when to leave B.
template <class A, class B, class ToB, class ToA>
class alternate : public detail::forwards_to_active<alternate<A, B, ToB, ToA>> {
  static_assert(requires(const A& s) {
    { s.name() } -> std::convertible_to<std::string_view>;
  }, "the first stage of alternate must provide name() const, returning its name as something convertible to "
     "std::string_view: see strategy/policy.hpp");
  static_assert(requires(const B& s) {
    { s.name() } -> std::convertible_to<std::string_view>;
  }, "the second stage of alternate must provide name() const, returning its name as something convertible to "
     "std::string_view: see strategy/policy.hpp");
  static_assert(trigger::trigger<ToB> && trigger::trigger<ToA>,
                "both triggers of alternate must be copyable and provide fire(const train::epoch_record&) returning "
                "bool: see trigger/trigger.hpp");

 public:
  alternate()
    requires(std::is_default_constructible_v<A> && std::is_default_constructible_v<B> &&
             std::is_default_constructible_v<ToB> && std::is_default_constructible_v<ToA>)
  = default;
  alternate(A a, B b, ToB to_b, ToA to_a, switch_options options = {})
      : to_b_(to_b), to_a_(to_a), leave_a_(std::move(to_b)), leave_b_(std::move(to_a)), a_(std::move(a)),
        b_(std::move(b)), options_(options) {}

  [[nodiscard]] const A& first() const noexcept { return a_; }
  [[nodiscard]] const B& second() const noexcept { return b_; }
  [[nodiscard]] const switch_options& options() const noexcept { return options_; }
  /// Whether `B` is the active stage.
  [[nodiscard]] bool in_second() const noexcept { return in_b_; }
  /// Every switch so far, in order.
  [[nodiscard]] const std::vector<alternation>& switches() const noexcept { return switches_; }

  /// Sets up the active stage: `A`, or, in a run resumed from a checkpoint, the one it was in.
  template <class Transport, class Model, class Optimizer>
  void setup(Transport& t, Model& m, Optimizer& o) {
    static_assert(policy<A, Model, Optimizer, Transport>,
                  "the first stage of alternate must be a strategy: name() const and step(t, m, o) returning "
                  "strategy::step_outcome or void (strategy/policy.hpp)");
    static_assert(policy<B, Model, Optimizer, Transport>,
                  "the second stage of alternate must be a strategy: name() const and step(t, m, o) returning "
                  "strategy::step_outcome or void (strategy/policy.hpp)");
    active([&](auto& s) { traits::setup(s, t, m, o); });
  }

  /// Enters the active stage after a hand-over, when this alternation is the stage a switch enters.
  template <class Transport, class Model, class Optimizer>
  void enter(Transport& t, Model& m, Optimizer& o) {
    active([&](auto& s) { traits::enter(s, t, m, o); });
  }

  template <class Transport>
  void begin_epoch(Transport& t, std::size_t batches) {
    part_batches_ = batches;
    part_.begin();
    resume_at_.reset();
    with_active([&](auto& stage, auto& leave) {
      if constexpr (trigger::within_epoch<std::remove_cvref_t<decltype(leave)>>) {
        detail::check_trigger(stage, leave, t);
        // The rule reaches this object's trigger, so that a streak of samples goes on across
        // epochs; it is installed for this part only (end_epoch takes it back).
        traits::stop_when(stage, stop_rule{[when = &leave, before = stage_batches_](const trigger::progress& p) {
                                             return static_cast<bool>(
                                                 when->fire_at(trigger::progress{before + p.batches, p.sample}));
                                           },
                                           trigger::sample_every(leave)});
      }
      traits::begin_epoch(stage, t, batches);
    });
  }

  /// The active stage's pass (an overlapping all-reduce starts its exchange inside it).
  template <class Transport, class Model, class Batch>
  double forward_backward(Transport& t, Model& m, const Batch& batch) {
    const collective::stage_scope stage_name{this->name()};  // collectives started in the pass carry the stage
    return with_active([&](auto& stage, auto&) { return traits::forward_backward(stage, t, m, batch); });
  }

  template <class Transport, class Model, class Optimizer>
  step_outcome step(Transport& t, Model& m, Optimizer& o) {
    const collective::stage_scope stage_name{this->name()};  // names the stage in checked collectives' reports
    return with_active([&](auto& stage, auto& leave) -> step_outcome {
      using Leave = std::remove_cvref_t<decltype(leave)>;
      if constexpr (!trigger::within_epoch<Leave>) {
        return traits::step(stage, t, m, o);
      } else {
        return part_.step(stage, leave, stage_batches_, t, m, o);
      }
    });
  }

  template <class Transport, class Model, class Optimizer>
  void end_epoch(Transport& t, Model& m, Optimizer& o) {
    const std::uint64_t part_trained = part_.steps() * with_active([&](auto& s, auto&) { return traits::worker_count(s, t); });
    active([&](auto& s) { traits::end_epoch(s, t, m, o); });
    const std::optional<std::size_t> handed_out = active([](const auto& s) { return traits::stopped_after(s); });
    active([](auto& s) { traits::stop_when(s, stop_rule{}); });
    if constexpr (trigger::within_epoch<ToB> || trigger::within_epoch<ToA>) {
      // Did the stage stop inside the epoch, and after how many of its batches? The workers of a
      // synchronous stage know; of an asynchronous one, the rank that handed out the batches.
      // The third number: the rank whose trigger decided (the coordinator; 0 in a synchronous
      // stage, where every worker decided alike), which tells the others why.
      std::array<std::uint64_t, 3> stopped{part_.stopping() ? 1u : 0u, part_.stopping() ? part_trained : 0, 0};
      if (handed_out) stopped = {1, *handed_out, static_cast<std::uint64_t>(t.rank())};
      collective::allreduce(t, stopped, ops::max{});
      if (stopped[0] != 0) agree_on_reason(t, static_cast<int>(stopped[2]));
      if (stopped[0] == 0 || stopped[1] >= part_batches_) {
        // The stage trained the whole part; a stop at its last batch switches between epochs, in
        // after_epoch, which counts the epoch.
        switch_pending_ = stopped[0] != 0;
        stage_batches_ += part_batches_;
        epoch_batches_ += part_batches_;
        return;
      }
      epoch_batches_ += static_cast<std::size_t>(stopped[1]);
      resume_at_ = static_cast<std::size_t>(stopped[1]);
      switch_stage(t, m, o, epoch_batches_);
    }
  }

  /// After an `end_epoch` that switched inside the epoch: the batches of that part the stage it
  /// left trained; the trainer trains the rest under the other stage. Else the active stage's,
  /// when it is a switch that did so.
  [[nodiscard]] std::optional<std::size_t> resume_at() const {
    if (resume_at_) return resume_at_;
    return active([](const auto& s) { return traits::resume_at(s); });
  }

  /// After each epoch: the active stage hears the record, then its trigger decides, when that
  /// stage trained the whole epoch (a switch inside it leaves the record to neither trigger).
  template <class Transport, class Model, class Optimizer>
  void after_epoch(Transport& t, Model& m, Optimizer& o, const train::epoch_record& record) {
    active([&](auto& s) { traits::after_epoch(s, t, m, o, record); });
    last_epoch_ = record.epoch;
    epoch_batches_ = 0;
    const bool pending = std::exchange(switch_pending_, false);
    // The record tells of the active stage only when it trained the whole epoch.
    const bool whole_epoch = !std::exchange(switched_in_epoch_, false);
    const bool fired = whole_epoch && (in_b_ ? static_cast<bool>(leave_b_.fire(record))
                                             : static_cast<bool>(leave_a_.fire(record)));
    if (fired || pending) switch_stage(t, m, o, std::nullopt);
  }

  /// Checkpoints: the active stage, every switch so far, where the run is, both triggers' state,
  /// then each stage's own progress. A resumed run sets up the stage it was in, with its trigger
  /// where it was. The epoch-internal counters are not saved: checkpoints are taken between epochs.
  template <class Archive>
  void serialize_progress(Archive& archive) {
    static_assert((requires(Archive& a, ToB& t) { serialize(a, t, 0u); } ||
                   requires(Archive& a, ToB& t) { t.serialize(a, 0u); }) &&
                      (requires(Archive& a, ToA& t) { serialize(a, t, 0u); } ||
                       requires(Archive& a, ToA& t) { t.serialize(a, 0u); }),
                  "checkpointing an alternate needs its triggers' state: give each trigger a Boost.Serialization "
                  "serialize(archive, trigger, version) (empty if it keeps no state), as the shipped triggers have");
    serialize_flag(archive, in_b_);
    std::uint64_t count = switches_.size();
    archive & count;
    if constexpr (Archive::is_loading::value) switches_.resize(static_cast<std::size_t>(count));
    for (alternation& s : switches_) {
      std::uint64_t epoch = s.after_epoch;
      bool inside = s.at_batch.has_value();
      std::uint64_t batch = s.at_batch.value_or(0);
      archive & epoch;
      serialize_flag(archive, inside);
      archive & batch;
      serialize_sequence(archive, s.to);
      serialize_sequence(archive, s.reason);
      if constexpr (Archive::is_loading::value) {
        s.after_epoch = static_cast<std::size_t>(epoch);
        s.at_batch = inside ? std::optional<std::size_t>(static_cast<std::size_t>(batch)) : std::nullopt;
      }
    }
    std::uint64_t last_epoch = last_epoch_;
    std::uint64_t stage_batches = stage_batches_;
    archive & last_epoch;
    archive & stage_batches;
    if constexpr (Archive::is_loading::value) {
      last_epoch_ = static_cast<std::size_t>(last_epoch);
      stage_batches_ = stage_batches;
    }
    archive & leave_a_;
    archive & leave_b_;
    traits::serialize_progress(a_, archive);
    traits::serialize_progress(b_, archive);
  }

 private:
  friend class detail::forwards_to_active<alternate>;

  template <class F>
  decltype(auto) active(F&& f) {
    return in_b_ ? std::forward<F>(f)(b_) : std::forward<F>(f)(a_);
  }
  template <class F>
  decltype(auto) active(F&& f) const {
    return in_b_ ? std::forward<F>(f)(b_) : std::forward<F>(f)(a_);
  }

  // `f(stage, trigger)` with the active stage and the trigger that decides when to leave it.
  template <class F>
  decltype(auto) with_active(F&& f) {
    return in_b_ ? std::forward<F>(f)(b_, leave_b_) : std::forward<F>(f)(a_, leave_a_);
  }

  // Leaves the active stage for the other, with a fresh copy of the other's trigger, after
  // `at_batch` batches of the epoch that follows the last one completed (empty: between epochs).
  // Collective: the reason of the trigger on rank `decider`, which stopped the stage inside the
  // epoch, on every rank (the others' copies of an asynchronous stage's trigger were not asked).
  template <class Transport>
  void agree_on_reason(Transport& t, int decider) {
    stop_reason_ = in_b_ ? detail::trigger_reason(leave_b_) : detail::trigger_reason(leave_a_);
    std::uint64_t length = stop_reason_.size();
    collective::broadcast(t, std::span<std::uint64_t>(&length, 1), decider);
    stop_reason_.resize(static_cast<std::size_t>(length));
    collective::broadcast(t, std::span<char>(stop_reason_), decider);
  }

  template <class Transport, class Model, class Optimizer>
  void switch_stage(Transport& t, Model& m, Optimizer& o, std::optional<std::size_t> at_batch) {
    // A stop inside the epoch brought its reason to every rank; a trigger asked after the epoch
    // was asked on every rank.
    std::string reason = std::exchange(stop_reason_, {});
    if (reason.empty()) reason = in_b_ ? detail::trigger_reason(leave_b_) : detail::trigger_reason(leave_a_);
    if (in_b_) {
      detail::switch_stages(b_, a_, options_, t, m, o);
      leave_a_ = to_b_;
    } else {
      detail::switch_stages(a_, b_, options_, t, m, o);
      leave_b_ = to_a_;
    }
    in_b_ = !in_b_;
    stage_batches_ = 0;
    switched_in_epoch_ = at_batch.has_value();
    switches_.push_back({last_epoch_, at_batch, std::string(this->name()), std::move(reason)});
  }

  // The triggers before the stages, so that they end after them: a stage's stop rule holds the
  // active copy (begin_epoch), and a co-located server's thread asks it until the stage ends.
  ToB to_b_{};      // the triggers as given: each stage starts with a copy
  ToA to_a_{};
  ToB leave_a_{};   // the active copies
  ToA leave_b_{};
  A a_{};
  B b_{};
  switch_options options_{};
  bool in_b_ = false;
  std::vector<alternation> switches_;
  std::size_t last_epoch_ = 0;        // the last epoch completed, counted from the start of the run
  std::uint64_t stage_batches_ = 0;   // batches the active stage trained since it began
  // The current epoch and part of it.
  std::size_t epoch_batches_ = 0;     // batches of the epoch trained in its earlier parts
  std::size_t part_batches_ = 0;      // the batches the trainer plans for this part
  detail::watched_part part_;         // a synchronous stage's steps, stop and samples
  bool switch_pending_ = false;       // its trigger fired at the part's last batch: switch in after_epoch
  bool switched_in_epoch_ = false;    // a part of this epoch trained under the other stage
  std::optional<std::size_t> resume_at_;
  std::string stop_reason_;           // why the stage stopped inside this epoch
};

}  // namespace switchyard::strategy

// Switching online: alternate between two strategies, both ways and as often as two triggers say,
// inside one run and with no restart.
#pragma once

#include <switchyard/collective/stage.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/history.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/replicas.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::strategy {

/// @brief One switch of an `alternate`: after which epoch, and into which stage.
struct alternation {
  std::size_t after_epoch = 0;  ///< the last epoch of the stage it left, counted from the start
  std::string to;               ///< the name of the stage it entered
};

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
/// verified to start from identical replicas. Switches happen between epochs.
///
/// With `trigger::straggler_detected` and `trigger::stragglers_gone` it follows a straggler that
/// comes and goes:
/// @code
/// using namespace switchyard;
/// using adaptive = strategy::alternate<strategy::all_reduce<>, strategy::parameter_server<>,
///                                      trigger::straggler_detected, trigger::stragglers_gone>;
/// adaptive policy{strategy::all_reduce<>{}, strategy::parameter_server<>{1}, {}, {}};
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
      : a_(std::move(a)), b_(std::move(b)), to_b_(to_b), to_a_(to_a), leave_a_(std::move(to_b)),
        leave_b_(std::move(to_a)), options_(options) {}

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

  template <class Transport>
  void begin_epoch(Transport& t, std::size_t batches) {
    active([&](auto& s) { traits::begin_epoch(s, t, batches); });
  }

  template <class Transport, class Model, class Optimizer>
  step_outcome step(Transport& t, Model& m, Optimizer& o) {
    const collective::stage_scope stage{this->name()};  // names the stage in checked collectives' reports
    return active([&](auto& s) { return traits::step(s, t, m, o); });
  }

  template <class Transport, class Model, class Optimizer>
  void end_epoch(Transport& t, Model& m, Optimizer& o) {
    active([&](auto& s) { traits::end_epoch(s, t, m, o); });
  }

  /// After each epoch: the active stage hears the record, then its trigger decides.
  template <class Transport, class Model, class Optimizer>
  void after_epoch(Transport& t, Model& m, Optimizer& o, const train::epoch_record& record) {
    active([&](auto& s) { traits::after_epoch(s, t, m, o, record); });
    const bool leave = in_b_ ? static_cast<bool>(leave_b_.fire(record)) : static_cast<bool>(leave_a_.fire(record));
    if (!leave) return;
    if (in_b_) {
      switch_now(b_, a_, t, m, o);
      leave_a_ = to_b_;
    } else {
      switch_now(a_, b_, t, m, o);
      leave_b_ = to_a_;
    }
    in_b_ = !in_b_;
    switches_.push_back({record.epoch, this->name()});
  }

  /// Checkpoints: the active stage, every switch so far, both triggers' state, then each stage's
  /// own progress. A resumed run sets up the stage it was in, with its trigger where it was.
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
      archive & epoch;
      serialize_sequence(archive, s.to);
      if constexpr (Archive::is_loading::value) s.after_epoch = static_cast<std::size_t>(epoch);
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

  template <class From, class To, class Transport, class Model, class Optimizer>
  void switch_now(From& from, To& to, Transport& t, Model& m, Optimizer& o) {
    traits::hand_over(from, t, m, o);
    detail::apply_switch_options(o, options_, detail::switch_batch_ratio(from, to, t, options_));
    traits::setup(to, t, m, o);
    if (traits::replicated(to) && checks_collectives(t)) {
      verify_replicas(t, m, o, switchyard::detail::str("after the switch to '", std::string_view(to.name()), "'"));
    }
  }

  A a_{};
  B b_{};
  ToB to_b_{};      // the triggers as given: each stage starts with a copy
  ToA to_a_{};
  ToB leave_a_{};   // the active copies
  ToA leave_b_{};
  switch_options options_{};
  bool in_b_ = false;
  std::vector<alternation> switches_;
};

}  // namespace switchyard::strategy

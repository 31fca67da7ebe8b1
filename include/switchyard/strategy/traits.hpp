// The strategy protocol: every member a strategy may write beyond its name and its step, with the
// default for a strategy that says nothing. The trainer, the switches and the checkpoint code reach
// a strategy only through these functions, so each default is written once, here.
#pragma once

#include <switchyard/optim/optimizer_state.hpp>
#include <switchyard/strategy/detail/hook_names.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/replicas.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

/// @brief The strategy protocol: the two required members, the optional ones and their defaults.
///
/// `T`: the transport, `M`: the model, `O`: the optimizer, `E`: its `value_type`, `B`: a batch.
/// "The switches" are `switch_to` and `alternate`, which call each member on their active stage.
///
/// | member | signature | default | who calls it |
/// | --- | --- | --- | --- |
/// | `name` | `name() const`, convertible to `std::string_view` | required (`strategy::policy`) | the trainer (epoch records), `signature`'s default |
/// | `step` | `step(T&, M&, O&) -> step_outcome` or `void` | required (`strategy::policy`) | the trainer, each worker step |
/// | `worker_count` | `worker_count(const T&) const -> std::size_t` | `t.size()`: every rank trains (a parameter server's servers do not) | the trainer, each epoch |
/// | `worker_index` | `worker_index(const T&) const -> std::optional<std::size_t>` | the rank, when below `worker_count(t)`; else empty | the trainer, each epoch |
/// | `replicated` | `replicated() const -> bool` | false (`all_reduce`: true, every rank holds the same model and optimizer state after every step) | `hand_over`'s default; the switches (checked replicas) |
/// | `batches_per_update` | `batches_per_update(const T&) const -> std::size_t` | `worker_count(t)` (an asynchronous parameter server: 1) | `setup` (the schedule's stride); the switches (`switch_options::rescale_for_batch`) |
/// | `hands_out_batches` | `hands_out_batches() const -> bool` | false: worker w trains batches w, w + W, w + 2W, ...; true: `step_outcome::next_batch` names the next | the trainer, each epoch |
/// | `compares_nodes` | `compares_nodes() const -> bool` | false: the straggler figures compare workers; true: nodes, each as slow as its slowest worker (a parameter server that aggregates by node) | the trainer (epoch records), the switches' samples |
/// | `setup` | `setup(T&, M&, O&)` | `replicate_training_state`: rank 0's parameters and optimizer state on every rank | the trainer, once; the switches, on the stage they enter when it has no `enter` |
/// | `enter` | `enter(T&, M&, O&)` | the strategy's `setup` when it has one, else nothing: after the hand-over every rank holds the same whole state already (`parameter_server`: its `setup` without the broadcast of the parameters) | the switches, on the stage they enter, after the stage they leave handed over |
/// | `forward_backward` | `forward_backward(T&, M&, const B&) -> double` | `m.forward_backward(batch)` (`all_reduce` with `exchange::buckets` or `overlapped` closes buckets during the pass; overlapped, it reduces them there) | the trainer, each worker step before `step` |
/// | `begin_epoch` | `begin_epoch(T&, std::size_t batches)` | nothing | the trainer, before each part of an epoch |
/// | `serve` | `serve(T&, M&, O&)` | nothing: a rank without a worker index waits for the epoch's end | the trainer, on ranks without a worker index |
/// | `end_epoch` | `end_epoch(T&, M&, O&)` | nothing (afterwards every rank must hold the current parameters, which the trainer evaluates) | the trainer, after each part of an epoch |
/// | `after_epoch` | `after_epoch(T&, M&, O&, const train::epoch_record&)` | nothing | the trainer, after each epoch's record |
/// | `hand_over` | `hand_over(T&, M&, O&)` | nothing when `replicated()`, else `replicate_training_state` | the switches, on the stage they leave |
/// | `assembled_state` | `assembled_state(T&, const O&) const -> optim::optimizer_state<E>` | `o.export_state()` (a strategy that shards the optimizer state assembles it) | the trainer, for each checkpoint |
/// | `finish` | `finish(T&, M&, O&)` | nothing | the trainer, at the end of `fit` |
/// | `resume_at` | `resume_at() const -> std::optional<std::size_t>` | empty (a switch inside the epoch: the batches of the part before it) | the trainer, after `end_epoch` |
/// | `prepare_checkpoint` | `prepare_checkpoint(T&)` | nothing (a parameter server with compressed pushes gathers its residuals to rank 0) | the trainer, before each checkpoint |
/// | `serialize_progress` | `serialize_progress(Archive&)`, Boost.Serialization style | nothing to keep | the checkpoint (`train::encode_progress`, `decode_progress`); the switches, on both stages |
/// | `stop_when` | `stop_when(stop_rule)` | cannot be stopped inside an epoch by a rule | the switches with a step trigger, on a stage that hands out batches |
/// | `stopped_after` | `stopped_after() const -> std::optional<std::size_t>` | empty; written with `stop_when`, both or neither | the switches, after `end_epoch` |
/// | `signature` | `signature() const`, convertible to `std::string` | `name()`; a switch chain (`is_switch_chain`): its stages' signatures | the checkpoint (`train::strategy_signature`: `write_checkpoints`, `resume`) |
///
/// After `setup`, the optimizer's schedule counts `batches_per_update(t)` batches per update
/// (`set_schedule_stride`, when the optimizer has it), for every strategy. A member named like an
/// optional one that cannot be called as that member stops the build with one sentence naming the
/// signature expected, rather than being passed over for the default: a query member (the rows
/// marked `const`) written without `const` or with another return type is named as such.
namespace switchyard::strategy {

/// @brief What stops a stage's hand-out of batches inside an epoch (`traits::stop_when`).
struct stop_rule {
  /// Asked before each batch is handed out, with the batches of this part of the epoch handed out
  /// so far and, at every `sample_every`-th request of each worker, a sample of the workers' times
  /// per step (`trigger::samples_steps`); once it holds, no batch is handed out until the next
  /// epoch. Empty: never stops.
  std::function<bool(const trigger::progress&)> fire{};
  /// Requests per worker between two samples; 0: no samples.
  std::size_t sample_every = 0;
};

/// @brief Whether `Strategy` is a chain of two stages, `first()` then `second()`, which a checkpoint
/// signs stage by stage (`traits::signature`): true for `switch_to` and `alternate`.
///
/// A strategy of the user's is signed as itself, by its `signature()` or `name()`, whatever members
/// it has; one that keeps its stages' progress one after the other, as `switch_to` does, may
/// specialize this to true and is then signed `"first>second"`.
template <class Strategy>
inline constexpr bool is_switch_chain = false;

/// @brief Whether a switch chain goes back and forth (`alternate`), which keeps its progress in
/// another layout: signed `"(first<>second)"`.
template <class Strategy>
inline constexpr bool switches_both_ways = false;

}  // namespace switchyard::strategy

namespace switchyard::strategy::traits {

/// `strategy`'s own `worker_count(t)`, or every rank of `t`.
template <class Strategy, class Transport>
[[nodiscard]] std::size_t worker_count(const Strategy& strategy, const Transport& t) {
  if constexpr (requires { strategy.worker_count(t); }) {
    static_assert(std::convertible_to<decltype(strategy.worker_count(t)), std::size_t>,
                  "a strategy's worker_count(t) must return the number of workers as a std::size_t");
    return static_cast<std::size_t>(strategy.worker_count(t));
  } else {
    static_assert(!requires(Strategy& s) { s.worker_count(t); },
                  "a strategy's worker_count(t) must be a const member function");
    static_assert(requires(Strategy& s) { s.worker_count(t); } || !detail::has_member_worker_count<Strategy>,
                  "the strategy has a member `worker_count` that cannot be called as `worker_count(const Transport&) "
                  "const -> std::size_t`: give it that signature or another name (the protocol: strategy/traits.hpp)");
    return static_cast<std::size_t>(t.size());
  }
}

/// `strategy`'s own `worker_index(t)`, or this rank when it is below `worker_count`.
template <class Strategy, class Transport>
[[nodiscard]] std::optional<std::size_t> worker_index(const Strategy& strategy, const Transport& t) {
  if constexpr (requires { strategy.worker_index(t); }) {
    static_assert(std::same_as<decltype(strategy.worker_index(t)), std::optional<std::size_t>>,
                  "a strategy's worker_index(t) must return std::optional<std::size_t> (empty: not a worker)");
    return strategy.worker_index(t);
  } else {
    static_assert(!requires(Strategy& s) { s.worker_index(t); },
                  "a strategy's worker_index(t) must be a const member function");
    static_assert(requires(Strategy& s) { s.worker_index(t); } || !detail::has_member_worker_index<Strategy>,
                  "the strategy has a member `worker_index` that cannot be called as `worker_index(const Transport&) "
                  "const -> std::optional<std::size_t>`: give it that signature or another name (the protocol: "
                  "strategy/traits.hpp)");
    const auto rank = static_cast<std::size_t>(t.rank());
    if (rank < worker_count(strategy, t)) return rank;
    return std::nullopt;
  }
}

/// Whether the strategy keeps replicas identical (every rank holds the whole model and the whole
/// optimizer state, as under `all_reduce`): its `replicated()`, else false.
template <class Strategy>
[[nodiscard]] bool replicated(const Strategy& strategy) {
  if constexpr (requires { strategy.replicated(); }) {
    static_assert(std::convertible_to<decltype(strategy.replicated()), bool>,
                  "a strategy's replicated() must return bool");
    return static_cast<bool>(strategy.replicated());
  } else {
    static_assert(!requires(Strategy& s) { s.replicated(); },
                  "a strategy's replicated() must be a const member function");
    static_assert(requires(Strategy& s) { s.replicated(); } || !detail::has_member_replicated<Strategy>,
                  "the strategy has a member `replicated` that cannot be called as `replicated() const -> bool`: "
                  "give it that signature or another name (the protocol: strategy/traits.hpp)");
    return false;
  }
}

/// Whether the straggler figures compare nodes, each as slow as its slowest worker, rather than
/// workers (a node-aware parameter server, whose node waits for its slowest worker before its one
/// push): its `compares_nodes()`, else false.
template <class Strategy>
[[nodiscard]] bool compares_nodes(const Strategy& strategy) {
  if constexpr (requires { strategy.compares_nodes(); }) {
    static_assert(std::convertible_to<decltype(strategy.compares_nodes()), bool>,
                  "a strategy's compares_nodes() must return bool");
    return static_cast<bool>(strategy.compares_nodes());
  } else {
    static_assert(!requires(Strategy& s) { s.compares_nodes(); },
                  "a strategy's compares_nodes() must be a const member function");
    static_assert(requires(Strategy& s) { s.compares_nodes(); } || !detail::has_member_compares_nodes<Strategy>,
                  "the strategy has a member `compares_nodes` that cannot be called as `compares_nodes() const -> "
                  "bool`: give it that signature or another name (the protocol: strategy/traits.hpp)");
    return false;
  }
}

/// The batches one optimizer update trains: the strategy's `batches_per_update(t)`, or one per
/// worker.
template <class Strategy, class Transport>
[[nodiscard]] std::size_t batches_per_update(const Strategy& strategy, const Transport& t) {
  if constexpr (requires { strategy.batches_per_update(t); }) {
    static_assert(std::convertible_to<decltype(strategy.batches_per_update(t)), std::size_t>,
                  "a strategy's batches_per_update(t) must return a std::size_t");
    return static_cast<std::size_t>(strategy.batches_per_update(t));
  } else {
    static_assert(!requires(Strategy& s) { s.batches_per_update(t); },
                  "a strategy's batches_per_update(t) must be a const member function");
    static_assert(requires(Strategy& s) { s.batches_per_update(t); } ||
                      !detail::has_member_batches_per_update<Strategy>,
                  "the strategy has a member `batches_per_update` that cannot be called as `batches_per_update(const "
                  "Transport&) const -> std::size_t`: give it that signature or another name (the protocol: "
                  "strategy/traits.hpp)");
    return worker_count(strategy, t);
  }
}

/// Whether the strategy hands the epoch's batches out itself (`step_outcome::next_batch`).
template <class Strategy>
[[nodiscard]] bool hands_out_batches(const Strategy& strategy) {
  if constexpr (requires { strategy.hands_out_batches(); }) {
    static_assert(std::convertible_to<decltype(strategy.hands_out_batches()), bool>,
                  "a strategy's hands_out_batches() must return bool");
    return static_cast<bool>(strategy.hands_out_batches());
  } else {
    static_assert(!requires(Strategy& s) { s.hands_out_batches(); },
                  "a strategy's hands_out_batches() must be a const member function");
    static_assert(requires(Strategy& s) { s.hands_out_batches(); } || !detail::has_member_hands_out_batches<Strategy>,
                  "the strategy has a member `hands_out_batches` that cannot be called as `hands_out_batches() const "
                  "-> bool`: give it that signature or another name (the protocol: strategy/traits.hpp)");
    return false;
  }
}

/// What `setup` and `enter` end with: the optimizer's schedule (when it has one) counts
/// `batches_per_update` batches per update.
template <class Strategy, class Transport, class Optimizer>
void count_batches_per_update(Strategy& strategy, Transport& t, Optimizer& o) {
  if constexpr (requires { o.set_schedule_stride(std::uint64_t{1}); }) {
    o.set_schedule_stride(static_cast<std::uint64_t>(batches_per_update(strategy, t)));
  }
}

/// Collective: the strategy's `setup`, or `replicate_training_state`; then the optimizer's
/// schedule counts `batches_per_update` batches per update.
template <class Strategy, class Transport, class Model, class Optimizer>
void setup(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.setup(t, m, o); }) {
    strategy.setup(t, m, o);
  } else {
    static_assert(!detail::has_member_setup<Strategy>,
                  "the strategy has a member `setup` that cannot be called as `setup(Transport&, Model&, "
                  "Optimizer&)`: give it that signature or another name (the protocol: strategy/traits.hpp)");
    replicate_training_state(t, m, o);
  }
  count_batches_per_update(strategy, t, o);
}

/// Collective: sets up the stage a switch enters, once the stage it leaves has handed over (every
/// rank holds the same whole training state): the strategy's `enter`, else its `setup`, else
/// nothing, since the state is replicated already; then the optimizer's schedule counts
/// `batches_per_update` batches per update.
template <class Strategy, class Transport, class Model, class Optimizer>
void enter(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.enter(t, m, o); }) {
    strategy.enter(t, m, o);
  } else {
    static_assert(!detail::has_member_enter<Strategy>,
                  "the strategy has a member `enter` that cannot be called as `enter(Transport&, Model&, "
                  "Optimizer&)`: give it that signature or another name (the protocol: strategy/traits.hpp)");
    if constexpr (requires { strategy.setup(t, m, o); }) strategy.setup(t, m, o);
  }
  count_batches_per_update(strategy, t, o);
}

/// One step of a worker: the strategy's `step`, its outcome or a default one.
template <class Strategy, class Transport, class Model, class Optimizer>
step_outcome step(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (std::is_void_v<decltype(strategy.step(t, m, o))>) {
    strategy.step(t, m, o);
    return {};
  } else {
    return strategy.step(t, m, o);
  }
}

/// A worker's forward and backward pass over `batch`: the strategy's `forward_backward`, or the
/// model's.
template <class Strategy, class Transport, class Model, class Batch>
double forward_backward(Strategy& strategy, Transport& t, Model& m, const Batch& batch) {
  if constexpr (requires { strategy.forward_backward(t, m, batch); }) {
    return strategy.forward_backward(t, m, batch);
  } else {
    static_assert(!detail::has_member_forward_backward<Strategy>,
                  "the strategy has a member `forward_backward` that cannot be called as "
                  "`forward_backward(Transport&, Model&, const Batch&) -> double`: give it that signature or another "
                  "name (the protocol: strategy/traits.hpp)");
    return m.forward_backward(batch);
  }
}

template <class Strategy, class Transport>
void begin_epoch(Strategy& strategy, Transport& t, std::size_t batches) {
  if constexpr (requires { strategy.begin_epoch(t, batches); }) {
    strategy.begin_epoch(t, batches);
  } else {
    static_assert(!detail::has_member_begin_epoch<Strategy>,
                  "the strategy has a member `begin_epoch` that cannot be called as `begin_epoch(Transport&, "
                  "std::size_t)`: give it that signature or another name (the protocol: strategy/traits.hpp)");
  }
}

template <class Strategy, class Transport, class Model, class Optimizer>
void serve(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.serve(t, m, o); }) {
    strategy.serve(t, m, o);
  } else {
    static_assert(!detail::has_member_serve<Strategy>,
                  "the strategy has a member `serve` that cannot be called as `serve(Transport&, Model&, "
                  "Optimizer&)`: give it that signature or another name (the protocol: strategy/traits.hpp)");
  }
}

template <class Strategy, class Transport, class Model, class Optimizer>
void end_epoch(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.end_epoch(t, m, o); }) {
    strategy.end_epoch(t, m, o);
  } else {
    static_assert(!detail::has_member_end_epoch<Strategy>,
                  "the strategy has a member `end_epoch` that cannot be called as `end_epoch(Transport&, Model&, "
                  "Optimizer&)`: give it that signature or another name (the protocol: strategy/traits.hpp)");
  }
}

template <class Strategy, class Transport, class Model, class Optimizer, class Record>
void after_epoch(Strategy& strategy, Transport& t, Model& m, Optimizer& o, const Record& record) {
  if constexpr (requires { strategy.after_epoch(t, m, o, record); }) {
    strategy.after_epoch(t, m, o, record);
  } else {
    static_assert(!detail::has_member_after_epoch<Strategy>,
                  "the strategy has a member `after_epoch` that cannot be called as `after_epoch(Transport&, Model&, "
                  "Optimizer&, const train::epoch_record&)`: give it that signature or another name (the protocol: "
                  "strategy/traits.hpp)");
  }
}

/// Collective: afterwards every rank holds the whole training state, ready for another stage.
template <class Strategy, class Transport, class Model, class Optimizer>
void hand_over(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.hand_over(t, m, o); }) {
    strategy.hand_over(t, m, o);
  } else {
    static_assert(!detail::has_member_hand_over<Strategy>,
                  "the strategy has a member `hand_over` that cannot be called as `hand_over(Transport&, Model&, "
                  "Optimizer&)`: give it that signature or another name (the protocol: strategy/traits.hpp)");
    if (!replicated(strategy)) replicate_training_state(t, m, o);
  }
}

/// Collective: the whole optimizer state on every rank, without changing any rank's optimizer.
template <class Strategy, class Transport, class Optimizer>
[[nodiscard]] optim::optimizer_state<typename Optimizer::value_type> assembled_state(const Strategy& strategy,
                                                                                    Transport& t,
                                                                                    const Optimizer& o) {
  using state = optim::optimizer_state<typename Optimizer::value_type>;
  if constexpr (requires { strategy.assembled_state(t, o); }) {
    static_assert(std::convertible_to<decltype(strategy.assembled_state(t, o)), state>,
                  "a strategy's assembled_state(t, o) must return the optimizer's "
                  "optim::optimizer_state<value_type>");
    return strategy.assembled_state(t, o);
  } else {
    static_assert(!requires(Strategy& s) { s.assembled_state(t, o); },
                  "a strategy's assembled_state(t, o) must be a const member function");
    static_assert(requires(Strategy& s) { s.assembled_state(t, o); } || !detail::has_member_assembled_state<Strategy>,
                  "the strategy has a member `assembled_state` that cannot be called as `assembled_state(Transport&, "
                  "const Optimizer&) const -> optim::optimizer_state<value_type>`: give it that signature or another "
                  "name (the protocol: strategy/traits.hpp)");
    return optim::optimizer_state<typename Optimizer::value_type>(o.export_state());
  }
}

template <class Strategy, class Transport, class Model, class Optimizer>
void finish(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.finish(t, m, o); }) {
    strategy.finish(t, m, o);
  } else {
    static_assert(!detail::has_member_finish<Strategy>,
                  "the strategy has a member `finish` that cannot be called as `finish(Transport&, Model&, "
                  "Optimizer&)`: give it that signature or another name (the protocol: strategy/traits.hpp)");
  }
}

/// After `end_epoch`: set when the stage changed inside the epoch, after that many of the batches
/// given to `begin_epoch`.
template <class Strategy>
[[nodiscard]] std::optional<std::size_t> resume_at(const Strategy& strategy) {
  if constexpr (requires { strategy.resume_at(); }) {
    static_assert(std::same_as<decltype(strategy.resume_at()), std::optional<std::size_t>>,
                  "a strategy's resume_at() must return std::optional<std::size_t>");
    return strategy.resume_at();
  } else {
    static_assert(!requires(Strategy& s) { s.resume_at(); },
                  "a strategy's resume_at() must be a const member function");
    static_assert(requires(Strategy& s) { s.resume_at(); } || !detail::has_member_resume_at<Strategy>,
                  "the strategy has a member `resume_at` that cannot be called as `resume_at() const -> "
                  "std::optional<std::size_t>`: give it that signature or another name (the protocol: "
                  "strategy/traits.hpp)");
    return std::nullopt;
  }
}

/// Collective, on every rank before each checkpoint: gathers to rank 0 what the strategy's
/// `serialize_progress` saves there from the other ranks.
template <class Strategy, class Transport>
void prepare_checkpoint(Strategy& strategy, Transport& t) {
  if constexpr (requires { strategy.prepare_checkpoint(t); }) {
    strategy.prepare_checkpoint(t);
  } else {
    static_assert(!detail::has_member_prepare_checkpoint<Strategy>,
                  "the strategy has a member `prepare_checkpoint` that cannot be called as "
                  "`prepare_checkpoint(Transport&)`: give it that signature or another name (the protocol: "
                  "strategy/traits.hpp)");
  }
}

/// Saves or loads what the strategy keeps across epochs (Boost.Serialization style).
template <class Strategy, class Archive>
void serialize_progress(Strategy& strategy, Archive& archive) {
  if constexpr (requires { strategy.serialize_progress(archive); }) {
    strategy.serialize_progress(archive);
  } else {
    static_assert(!detail::has_member_serialize_progress<Strategy>,
                  "the strategy has a member `serialize_progress` that cannot be called as "
                  "`serialize_progress(Archive&)`: give it that signature or another name (the protocol: "
                  "strategy/traits.hpp)");
  }
}

/// Whether a rule can stop the strategy's hand-out of batches inside an epoch.
template <class Strategy>
inline constexpr bool stoppable = requires(Strategy& s, const Strategy& cs) {
  s.stop_when(stop_rule{});
  { cs.stopped_after() } -> std::same_as<std::optional<std::size_t>>;
};

// A strategy that declares stop_when or stopped_after declares the pair, each as it must be:
// otherwise it would silently not be stoppable.
template <class Strategy>
constexpr void check_stoppable() {
  if constexpr (requires(const Strategy& cs) { cs.stopped_after(); }) {
    static_assert(std::same_as<decltype(std::declval<const Strategy&>().stopped_after()), std::optional<std::size_t>>,
                  "a strategy's stopped_after() must return std::optional<std::size_t> (empty: not stopped)");
  } else {
    static_assert(!requires(Strategy& s) { s.stopped_after(); },
                  "a strategy's stopped_after() must be a const member function");
    static_assert(!detail::has_member_stopped_after<Strategy>,
                  "the strategy has a member `stopped_after` that cannot be called as `stopped_after() const -> "
                  "std::optional<std::size_t>`: give it that signature or another name (the protocol: "
                  "strategy/traits.hpp)");
  }
  static_assert(requires(Strategy& s) { s.stop_when(stop_rule{}); } || !detail::has_member_stop_when<Strategy>,
                "the strategy has a member `stop_when` that cannot be called as `stop_when(strategy::stop_rule)`: "
                "give it that signature or another name (the protocol: strategy/traits.hpp)");
  static_assert(!requires(Strategy& s) { s.stop_when(stop_rule{}); } ||
                    requires(const Strategy& cs) { cs.stopped_after(); },
                "a strategy with stop_when(rule) must also provide stopped_after() const, returning "
                "std::optional<std::size_t>");
  static_assert(!requires(const Strategy& cs) { cs.stopped_after(); } ||
                    requires(Strategy& s) { s.stop_when(stop_rule{}); },
                "a strategy with stopped_after() must also provide stop_when(strategy::stop_rule), which installs the "
                "rule that stops its hand-out of batches");
}

/// The strategy stops handing out batches once `rule.fire` holds (see `stop_rule`); an empty rule
/// never stops it. Nothing for a strategy that is not `stoppable`.
template <class Strategy>
void stop_when(Strategy& strategy, stop_rule rule) {
  check_stoppable<Strategy>();
  if constexpr (stoppable<Strategy>) strategy.stop_when(std::move(rule));
}

/// On the rank that stopped the hand-out: the batches handed out when it stopped.
template <class Strategy>
[[nodiscard]] std::optional<std::size_t> stopped_after(const Strategy& strategy) {
  check_stoppable<Strategy>();
  if constexpr (stoppable<Strategy>) {
    return strategy.stopped_after();
  } else {
    return std::nullopt;
  }
}

/// Whether the strategy keeps progress across epochs in a checkpoint, written and read through
/// `Archive`: its `serialize_progress(archive)`.
template <class Strategy, class Archive>
[[nodiscard]] constexpr bool keeps_progress() {
  if constexpr (requires(Strategy& s, Archive& a) { s.serialize_progress(a); }) {
    return true;
  } else {
    static_assert(!detail::has_member_serialize_progress<std::remove_cv_t<Strategy>>,
                  "the strategy has a member `serialize_progress` that cannot be called as "
                  "`serialize_progress(Archive&)`: give it that signature or another name (the protocol: "
                  "strategy/traits.hpp)");
    return false;
  }
}

/// @brief What a checkpoint must match to be resumed under `strategy`: its `signature()`, or its
/// `name()`; for a switch chain (`is_switch_chain`), its stages' signatures in order.
///
/// `"allreduce"` for a plain strategy, `"ps>allreduce"` for a `switch_to`, `"ps>allreduce>ps"` for a
/// chain nested in its second stage and `"(ps>allreduce)>ps"` for one nested in its first (the two
/// chains keep their progress in the same bytes, so the signature tells them apart);
/// `"(allreduce<>ps)"` for an `alternate`, whose progress is another layout again. Unlike `name()`
/// of a switch, it does not change with the active stage.
template <class Strategy>
[[nodiscard]] std::string signature(const Strategy& strategy) {
  if constexpr (is_switch_chain<Strategy> && switches_both_ways<Strategy>) {
    // Appended one by one: g++ 12 at -O3 warns (-Wrestrict) on a chain of operator+ that starts
    // from a literal.
    std::string both = "(";
    both += signature(strategy.first());
    both += "<>";
    both += signature(strategy.second());
    both += ')';
    return both;
  } else if constexpr (is_switch_chain<Strategy>) {
    std::string first = signature(strategy.first());
    if constexpr (is_switch_chain<std::remove_cvref_t<decltype(strategy.first())>>) first = "(" + first + ")";
    return first + ">" + signature(strategy.second());
  } else if constexpr (requires {
                         { strategy.signature() } -> std::convertible_to<std::string>;
                       }) {
    return std::string(strategy.signature());
  } else {
    static_assert(!detail::has_member_signature<Strategy>,
                  "the strategy has a member `signature` that cannot be called as `signature() const`, returning "
                  "something convertible to std::string: give it that signature or another name (the protocol: "
                  "strategy/traits.hpp)");
    static_assert(requires {
                    { strategy.name() } -> std::convertible_to<std::string_view>;
                  }, "a checkpointed strategy needs a const name(): see strategy/policy.hpp");
    return std::string(std::string_view(strategy.name()));
  }
}

/// The strategy's name as a string (a copy: `name()` may return a temporary).
template <class Strategy>
[[nodiscard]] std::string name(const Strategy& strategy) {
  return std::string(std::string_view(strategy.name()));
}

}  // namespace switchyard::strategy::traits

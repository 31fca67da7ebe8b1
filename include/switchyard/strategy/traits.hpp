// Everything a strategy may say beyond its name and its step, with the default for a strategy
// that says nothing. The trainer and `switch_to` reach a strategy only through these functions,
// so each default is written once, here.
#pragma once

#include <switchyard/optim/optimizer_state.hpp>
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

/// @brief The optional members of a strategy and their defaults.
///
/// | member | default | who overrides it |
/// | --- | --- | --- |
/// | `worker_count(t) const -> std::size_t` | `t.size()`: every rank trains | a parameter server (its servers do not) |
/// | `worker_index(t) const -> std::optional<std::size_t>` | the rank, when below `worker_count(t)`; else empty | |
/// | `replicated() const -> bool` | false | `all_reduce` (true: every rank holds the same model and optimizer state after every step) |
/// | `batches_per_update(t) const -> std::size_t` | `worker_count(t)` | an asynchronous parameter server (1) |
/// | `setup(t, m, o)` | `replicate_training_state`: rank 0's parameters and optimizer state on every rank | a parameter server (seeds its servers' shards) |
/// | `forward_backward(t, m, batch) -> double` | `m.forward_backward(batch)` | `all_reduce` with `exchange::buckets` or `overlapped` (closes buckets, and starts reducing them, during the pass) |
/// | `begin_epoch(t, batches)` | nothing | |
/// | `serve(t, m, o)` | nothing: a rank without a worker index waits for the epoch's end | a parameter server's servers |
/// | `end_epoch(t, m, o)` | nothing | a strategy whose replicas drift apart: afterwards every rank must hold the current parameters, which the trainer evaluates |
/// | `after_epoch(t, m, o, record)` | nothing | `switch_to` (asks its trigger) |
/// | `hand_over(t, m, o)` | nothing when `replicated()`, else `replicate_training_state` | a strategy that shards the optimizer state |
/// | `assembled_state(t, o) const` | `o.export_state()` | a strategy that shards the optimizer state |
/// | `finish(t, m, o)` | nothing | |
/// | `hands_out_batches() const -> bool` | false: worker w trains batches w, w + W, w + 2W, ... of the epoch | an asynchronous parameter server (true: `step_outcome::next_batch` says which batch the worker trains next) |
/// | `resume_at() const -> std::optional<std::size_t>` | empty | `switch_to` at a trigger inside an epoch |
/// | `prepare_checkpoint(t)` | nothing | a parameter server with compressed pushes (each worker's error-feedback residual to rank 0, which writes the checkpoint) |
/// | `serialize_progress(archive)` | nothing to keep | `switch_to` (its stage and trigger) |
/// | `stop_when(stop_rule)`, `stopped_after() const` | cannot be stopped inside an epoch by a rule | a stage that hands out batches, so that a `switch_to` or an `alternate` can stop it at a step trigger |
///
/// After `setup`, the optimizer's schedule counts `batches_per_update(t)` batches per update
/// (`set_schedule_stride`, when the optimizer has it), for every strategy. A query member (the
/// rows marked `const`) written without `const` or with another return type stops the build with
/// one sentence naming it, rather than being passed over for the default.
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
    return false;
  }
}

/// Collective: the strategy's `setup`, or `replicate_training_state`; then the optimizer's
/// schedule counts `batches_per_update` batches per update.
template <class Strategy, class Transport, class Model, class Optimizer>
void setup(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.setup(t, m, o); }) {
    strategy.setup(t, m, o);
  } else {
    replicate_training_state(t, m, o);
  }
  if constexpr (requires { o.set_schedule_stride(std::uint64_t{1}); }) {
    o.set_schedule_stride(static_cast<std::uint64_t>(batches_per_update(strategy, t)));
  }
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
    return m.forward_backward(batch);
  }
}

template <class Strategy, class Transport>
void begin_epoch(Strategy& strategy, Transport& t, std::size_t batches) {
  if constexpr (requires { strategy.begin_epoch(t, batches); }) strategy.begin_epoch(t, batches);
}

template <class Strategy, class Transport, class Model, class Optimizer>
void serve(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.serve(t, m, o); }) strategy.serve(t, m, o);
}

template <class Strategy, class Transport, class Model, class Optimizer>
void end_epoch(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.end_epoch(t, m, o); }) strategy.end_epoch(t, m, o);
}

template <class Strategy, class Transport, class Model, class Optimizer, class Record>
void after_epoch(Strategy& strategy, Transport& t, Model& m, Optimizer& o, const Record& record) {
  if constexpr (requires { strategy.after_epoch(t, m, o, record); }) strategy.after_epoch(t, m, o, record);
}

/// Collective: afterwards every rank holds the whole training state, ready for another stage.
template <class Strategy, class Transport, class Model, class Optimizer>
void hand_over(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.hand_over(t, m, o); }) {
    strategy.hand_over(t, m, o);
  } else if (!replicated(strategy)) {
    replicate_training_state(t, m, o);
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
    return optim::optimizer_state<typename Optimizer::value_type>(o.export_state());
  }
}

template <class Strategy, class Transport, class Model, class Optimizer>
void finish(Strategy& strategy, Transport& t, Model& m, Optimizer& o) {
  if constexpr (requires { strategy.finish(t, m, o); }) strategy.finish(t, m, o);
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
    return std::nullopt;
  }
}

/// Collective, on every rank before each checkpoint: gathers to rank 0 what the strategy's
/// `serialize_progress` saves there from the other ranks.
template <class Strategy, class Transport>
void prepare_checkpoint(Strategy& strategy, Transport& t) {
  if constexpr (requires { strategy.prepare_checkpoint(t); }) strategy.prepare_checkpoint(t);
}

/// Saves or loads what the strategy keeps across epochs (Boost.Serialization style).
template <class Strategy, class Archive>
void serialize_progress(Strategy& strategy, Archive& archive) {
  if constexpr (requires { strategy.serialize_progress(archive); }) strategy.serialize_progress(archive);
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
  }
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

/// The strategy's name as a string (a copy: `name()` may return a temporary).
template <class Strategy>
[[nodiscard]] std::string name(const Strategy& strategy) {
  return std::string(std::string_view(strategy.name()));
}

}  // namespace switchyard::strategy::traits

// Synchronous data parallelism: every rank trains a replica on its own shard, the gradient arena
// is averaged with one all-reduce per step, and every rank applies the same update.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/strategy/replicas.hpp>
#include <switchyard/train/strategy.hpp>

#include <cstddef>
#include <optional>
#include <string_view>

namespace switchyard::strategy {

/// @brief All-reduce strategy (what Horovod, PyTorch DDP and MultiWorkerMirroredStrategy do).
///
/// `setup` broadcasts rank 0's parameters and whole optimizer state; each `step` averages the
/// whole gradient arena in one all-reduce and applies the optimizer locally. The all-reduce gives
/// every rank the same bits and the optimizers are deterministic, so replicas stay bitwise
/// identical for the whole run, also when the stage starts after a switch from a stage that left
/// the ranks with different optimizer states.
/// @tparam Algorithm the all-reduce algorithm; default `algorithm::automatic`.
/// @code
/// switchyard::train::trainer trainer{model, optimizer, switchyard::strategy::all_reduce<>{}};
/// @endcode
template <class Algorithm = algorithm::automatic>
class all_reduce {
 public:
  [[nodiscard]] std::string_view name() const noexcept { return "allreduce"; }
  /// Every rank holds the whole model and optimizer state, identical on every rank.
  [[nodiscard]] static constexpr bool replicated() noexcept { return true; }

  /// Broadcasts rank 0's parameters and optimizer state (`replicate_training_state`); each update
  /// trains one batch per rank, which the optimizer's schedule counts (`set_schedule_stride`, when
  /// it has one).
  template <class Transport, class Model, class Optimizer>
  void setup(Transport& t, Model& model, Optimizer& optimizer) {
    replicate_training_state(t, model, optimizer);
    if constexpr (requires { optimizer.set_schedule_stride(std::uint64_t{1}); }) {
      optimizer.set_schedule_stride(batches_per_update(t));
    }
  }

  template <class Transport>
  [[nodiscard]] std::size_t worker_count(const Transport& t) const {
    return static_cast<std::size_t>(t.size());
  }

  /// One batch per rank: what the optimizer's schedule counts per update.
  template <class Transport>
  [[nodiscard]] std::size_t batches_per_update(const Transport& t) const {
    return static_cast<std::size_t>(t.size());
  }

  template <class Transport>
  [[nodiscard]] std::optional<std::size_t> worker_index(const Transport& t) const {
    return static_cast<std::size_t>(t.rank());
  }

  template <class Transport, class Model, class Optimizer>
  train::step_outcome step(Transport& t, Model& model, Optimizer& optimizer) {
    auto gradients = model.gradients();
    collective::allreduce(t, gradients, ops::average{}, Algorithm{});
    optimizer.step(model.parameters(), gradients);
    return {t.size() > 1 ? gradients.size_bytes() : 0, std::nullopt};
  }

  template <class Transport, class Model, class Optimizer>
  void finish(Transport&, Model&, Optimizer&) {}
};

}  // namespace switchyard::strategy

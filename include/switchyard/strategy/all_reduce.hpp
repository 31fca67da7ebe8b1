// Synchronous data parallelism: every rank trains a replica on its own shard, the gradient arena
// is averaged with one all-reduce per step, and every rank applies the same update.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/strategy/policy.hpp>

#include <cstddef>
#include <optional>
#include <string_view>

namespace switchyard::strategy {

/// @brief All-reduce strategy (what Horovod, PyTorch DDP and MultiWorkerMirroredStrategy do).
///
/// Every rank is a worker. Setup is the default one: rank 0's parameters and whole optimizer state
/// reach every rank (`replicate_training_state`), and each update trains one batch per rank, which
/// the optimizer's schedule counts. Each `step` averages the whole gradient arena in one
/// all-reduce and applies the optimizer locally. The all-reduce gives
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
  /// Every rank holds the whole model and optimizer state, identical on every rank, so `setup`
  /// (the default: `replicate_training_state`) is all a hand-over needs.
  [[nodiscard]] static constexpr bool replicated() noexcept { return true; }

  template <class Transport, class Model, class Optimizer>
  step_outcome step(Transport& t, Model& model, Optimizer& optimizer) {
    const auto gradients = as_span(model.gradients());
    collective::allreduce(t, gradients, ops::average{}, Algorithm{});
    optimizer.step(as_span(model.parameters()), gradients);
    return {t.size() > 1 ? gradients.size_bytes() : 0, std::nullopt};
  }
};

}  // namespace switchyard::strategy

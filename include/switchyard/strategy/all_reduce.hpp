// Synchronous data parallelism: every rank trains a replica on its own shard, the gradient arena
// is averaged with one all-reduce per step, and every rank applies the same update.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/compressed.hpp>
#include <switchyard/core/compression.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/strategy/policy.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

namespace switchyard::strategy {

/// @brief The options of an `all_reduce` stage.
struct all_reduce_options {
  /// The gradients' encoding on the wire (collective/compressed.hpp): `none` sends floats; `fp16`
  /// and `bf16` send half the bytes, each partial sum rounded to the format. Replicas stay
  /// bitwise identical either way. Each stage of a switch has its own.
  compression::format compression = compression::format::none;
};

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
/// // bf16 gradients on the wire:
/// switchyard::strategy::all_reduce<> compressed{{.compression = switchyard::compression::format::bf16}};
/// @endcode
template <class Algorithm = algorithm::automatic>
class all_reduce {
 public:
  all_reduce() = default;
  explicit all_reduce(all_reduce_options options) : options_(options) {}

  [[nodiscard]] const all_reduce_options& options() const noexcept { return options_; }
  [[nodiscard]] std::string_view name() const noexcept { return "allreduce"; }
  /// Every rank holds the whole model and optimizer state, identical on every rank, so `setup`
  /// (the default: `replicate_training_state`) is all a hand-over needs.
  [[nodiscard]] static constexpr bool replicated() noexcept { return true; }

  template <class Transport, class Model, class Optimizer>
  step_outcome step(Transport& t, Model& model, Optimizer& optimizer) {
    const auto gradients = as_span(model.gradients());
    using element = std::remove_cvref_t<decltype(gradients[0])>;
    const bool compressed = options_.compression != compression::format::none;
    if constexpr (std::is_same_v<element, float>) {
      collective::compressed_allreduce(options_.compression, t, gradients, words_, ops::average{}, Algorithm{});
    } else {
      if (compressed) {
        throw usage_error(switchyard::detail::str("all_reduce: ", compression::name(options_.compression),
                                                  " compression encodes float gradients; this model's are ",
                                                  sizeof(element) * 8, "-bit"));
      }
      collective::allreduce(t, gradients, ops::average{}, Algorithm{});
    }
    optimizer.step(as_span(model.parameters()), gradients);
    const std::size_t element_bytes = compressed ? sizeof(std::uint16_t) : sizeof(element);
    return {t.size() > 1 ? gradients.size() * element_bytes : 0, std::nullopt};
  }

 private:
  all_reduce_options options_;
  std::vector<std::uint16_t> words_;  // the encoded gradients, kept from step to step
};

}  // namespace switchyard::strategy

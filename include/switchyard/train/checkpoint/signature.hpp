// The signature of a strategy: the names of its stages in order, which a checkpoint must match
// before the strategy's progress is decoded from it. The strategy protocol computes it
// (`strategy::traits::signature`, beside the optional `signature()` it defaults); this is its name
// on the checkpoint's side.
#pragma once

#include <switchyard/strategy/traits.hpp>

#include <string>

namespace switchyard::train {

/// @brief The names of the strategy's stages in order, which a checkpoint must match to be resumed
/// under `strategy`: `strategy::traits::signature(strategy)`.
///
/// `"allreduce"` for a plain strategy (its `name()`), `"ps>allreduce"` for a `switch_to`
/// (`strategy::is_switch_chain`: recursing through `first()` and `second()`), `"ps>allreduce>ps"`
/// for a chain nested in its second stage and `"(ps>allreduce)>ps"` for one nested in its first;
/// `"(allreduce<>ps)"` for an `alternate`. A strategy of the user's is signed as itself, whatever
/// members it has.
///
/// Triggers and options are not part of it (a run may be resumed with other thresholds), except
/// where a stage's options change what its progress holds: a plain stage's optional `signature()`
/// replaces its `name()` here, and a parameter server with compressed pushes signs `"ps[bf16]"` or
/// `"ps[fp16]"`, for the residuals its checkpoints keep.
/// @code
/// switchyard::strategy::switch_to ps_then_ar{ps, ar, switchyard::trigger::after_epochs{3}};
/// switchyard::train::strategy_signature(ps_then_ar);   // "ps>allreduce"
/// @endcode
template <class Strategy>
[[nodiscard]] std::string strategy_signature(const Strategy& strategy) {
  return switchyard::strategy::traits::signature(strategy);
}

}  // namespace switchyard::train

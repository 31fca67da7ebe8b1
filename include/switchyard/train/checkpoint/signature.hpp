// The signature of a strategy: the names of its stages in order, which a checkpoint must match
// before the strategy's progress is decoded from it.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

namespace switchyard::train {

/// @brief The names of the strategy's stages in order, which a checkpoint must match to be resumed
/// under `strategy`: `"allreduce"` for a plain strategy (its `name()`), `"ps>allreduce"` for a
/// `switch_to` (recursing through `first()` and `second()`), `"ps>allreduce>ps"` for a chain
/// nested in its second stage and `"(ps>allreduce)>ps"` for one nested in its first (the two chains
/// keep their progress in the same bytes, so the signature tells them apart); `"(allreduce<>ps)"`
/// for an `alternate`, whose progress is another layout again.
///
/// Unlike `name()` of a switch, it does not change with the active stage. Triggers and options
/// are not part of it (a run may be resumed with other thresholds), except where a stage's
/// options change what its progress holds: a plain stage's optional `signature()` replaces its
/// `name()` here, and a parameter server with compressed pushes signs `"ps[bf16]"` or
/// `"ps[fp16]"`, for the residuals its checkpoints keep.
/// @code
/// switchyard::strategy::switch_to ps_then_ar{ps, ar, switchyard::trigger::after_epochs{3}};
/// switchyard::train::strategy_signature(ps_then_ar);   // "ps>allreduce"
/// @endcode
template <class Strategy>
[[nodiscard]] std::string strategy_signature(const Strategy& strategy);

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <class Strategy>
std::string strategy_signature(const Strategy& strategy) {
  if constexpr (requires {
                  strategy.first();
                  strategy.second();
                  strategy.switches();
                }) {
    // An alternate: the two stages both ways. Appended one by one: g++ 12 at -O3 warns
    // (-Wrestrict) on a chain of operator+ that starts from a literal.
    std::string both = "(";
    both += strategy_signature(strategy.first());
    both += "<>";
    both += strategy_signature(strategy.second());
    both += ')';
    return both;
  } else if constexpr (requires {
                  strategy.first();
                  strategy.second();
                }) {
    std::string first = strategy_signature(strategy.first());
    if constexpr (requires {
                    strategy.first().first();
                    strategy.first().second();
                  }) {
      first = "(" + first + ")";
    }
    return first + ">" + strategy_signature(strategy.second());
  } else if constexpr (requires {
                         { strategy.signature() } -> std::convertible_to<std::string>;
                       }) {
    return std::string(strategy.signature());
  } else {
    static_assert(requires {
                    { strategy.name() } -> std::convertible_to<std::string_view>;
                  }, "a checkpointed strategy needs a const name() (or, for a chain of stages, first() and second()): "
                     "see strategy/policy.hpp");
    return std::string(std::string_view(strategy.name()));
  }
}

}  // namespace switchyard::train

// Deprecated forwarding header, kept for the 0.2 series: the Strategy role moved to
// strategy/policy.hpp, where the concept is `strategy::policy` (two required members, the rest
// optional through strategy/traits.hpp) and the step report is `strategy::step_outcome`.
#pragma once

#pragma GCC warning "switchyard/train/strategy.hpp is deprecated: include switchyard/strategy/policy.hpp (train::strategy is strategy::policy, train::step_outcome is strategy::step_outcome)"

#include <switchyard/strategy/policy.hpp>

namespace switchyard::train {

/// @brief Deprecated: `strategy::policy`. (g++ 12 accepts no `[[deprecated]]` on a concept, so
/// this header warns when it is included.)
template <class S, class M, class O, class T>
concept strategy = switchyard::strategy::policy<S, M, O, T>;

/// @brief Deprecated: `strategy::step_outcome`.
using step_outcome [[deprecated("use switchyard::strategy::step_outcome (switchyard/strategy/policy.hpp)")]] =
    switchyard::strategy::step_outcome;

}  // namespace switchyard::train

// Linear warm-up in front of any schedule: large-batch data-parallel runs start with a small
// rate and ramp up, then follow the wrapped schedule from its own step 0.
#pragma once

#include <cstdint>
#include <utility>

#include "switchyard/core/error.hpp"
#include "switchyard/optim/schedule.hpp"

namespace switchyard::optim {

/// @brief `steps` warm-up steps ramping linearly to `after.lr(0)`, then `after` shifted by
/// `steps`: lr(s) = after.lr(0) * (s + 1) / steps for s < steps, else after.lr(s - steps).
///
/// The ramp starts at `after.lr(0) / steps` rather than 0 so that no step is wasted, and the
/// wrapped schedule starts its own clock when the warm-up ends, so `warmup{500, cosine{0.1,
/// 9500}}` anneals over the 9500 steps that follow the warm-up (10000 in all).
/// @tparam After the schedule that follows the warm-up (any `optim::schedule`).
/// @code
/// optim::warmup schedule{500, optim::cosine{0.1, 9500}};
/// optim::momentum opt{n, schedule, 0.9};
/// @endcode
template <schedule After>
struct warmup {
  std::uint64_t steps;
  After after;

  warmup(std::uint64_t steps, After after) : steps(steps), after(std::move(after)) {
    if (steps == 0) switchyard::detail::raise<usage_error>("optim::warmup: `steps` must be > 0");
  }
  [[nodiscard]] double lr(std::uint64_t step) const {
    if (step >= steps) return static_cast<double>(after.lr(step - steps));
    return static_cast<double>(after.lr(0)) * static_cast<double>(step + 1) / static_cast<double>(steps);
  }
};

}  // namespace switchyard::optim

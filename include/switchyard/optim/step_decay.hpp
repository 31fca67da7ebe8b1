// Step decay: the learning rate drops by a constant factor every fixed number of steps.
#pragma once

#include <cmath>
#include <cstdint>

#include "switchyard/core/error.hpp"

namespace switchyard::optim {

/// @brief lr(step) = initial * factor^floor(step / every).
/// @code
/// optim::step_decay schedule{0.1, 0.5, 1000};   // 0.1, halved every 1000 steps
/// @endcode
struct step_decay {
  double initial;
  double factor;
  std::uint64_t every;

  step_decay(double initial, double factor, std::uint64_t every)
      : initial(initial), factor(factor), every(every) {
    if (every == 0) switchyard::detail::raise<usage_error>("optim::step_decay: `every` must be > 0");
  }
  [[nodiscard]] double lr(std::uint64_t step) const {
    return initial * std::pow(factor, static_cast<double>(step / every));
  }
};

}  // namespace switchyard::optim

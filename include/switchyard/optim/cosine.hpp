// Cosine annealing: a half cosine from the initial rate down to a final rate over a fixed
// number of steps, then the final rate (Loshchilov and Hutter's SGDR without restarts).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "switchyard/core/error.hpp"

namespace switchyard::optim {

/// @brief lr(step) = final + (initial - final) * (1 + cos(pi * min(step, steps) / steps)) / 2.
/// @code
/// optim::cosine schedule{0.1, 9000};            // 0.1 down to 0 over 9000 steps
/// optim::warmup with_warmup{500, schedule};     // 500 warm-up steps first
/// @endcode
struct cosine {
  double initial;
  std::uint64_t steps;
  double final = 0.0;

  cosine(double initial, std::uint64_t steps, double final = 0.0)
      : initial(initial), steps(steps), final(final) {
    if (steps == 0) switchyard::detail::raise<usage_error>("optim::cosine: `steps` must be > 0");
  }
  [[nodiscard]] double lr(std::uint64_t step) const {
    const double progress =
        static_cast<double>(std::min(step, steps)) / static_cast<double>(steps);
    return final + (initial - final) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  }
};

}  // namespace switchyard::optim

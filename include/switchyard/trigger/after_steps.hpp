// Switch after a number of worker steps.
#pragma once

#include <switchyard/train/history.hpp>

#include <cstddef>

namespace switchyard::trigger {

/// @brief Fires at the end of the first epoch by which the workers together have taken at least
/// N steps. Switches happen between epochs, so the switch lands on the epoch boundary that
/// follows step N.
template <std::size_t N = 1>
struct after_steps {
  std::size_t steps = N;
  std::size_t taken = 0;
  constexpr after_steps() = default;
  constexpr explicit after_steps(std::size_t n) : steps(n) {}
  constexpr bool fire(const train::epoch_record& record) noexcept {
    taken += record.steps;
    return taken >= steps;
  }
};
after_steps(std::size_t) -> after_steps<1>;

}  // namespace switchyard::trigger

// The constant learning rate, the default schedule of every optimizer.
#pragma once

#include <cstdint>

namespace switchyard::optim {

/// @brief The same learning rate at every step. Converts implicitly from a `double`, so an
/// optimizer can be given a plain number where it expects a schedule.
/// @code
/// optim::sgd opt{model.parameters().size(), 0.1};           // optim::sgd<optim::constant>
/// optim::adam opt2{model.parameters().size(), optim::constant{1e-3}};
/// @endcode
struct constant {
  double rate;

  // Implicit on purpose: a number where a schedule is expected means a constant rate.
  constexpr constant(double rate) noexcept : rate(rate) {}
  [[nodiscard]] constexpr double lr(std::uint64_t) const noexcept { return rate; }
};

}  // namespace switchyard::optim

// Plain stochastic gradient descent: p -= lr * g, no state beyond the step count.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <utility>

#include "switchyard/optim/constant.hpp"
#include "switchyard/optim/optimizer.hpp"
#include "switchyard/optim/schedule.hpp"

namespace switchyard::optim {

/// @brief SGD: p_i -= lr(step) * g_i.
/// @tparam Schedule learning-rate schedule (default `constant`; a number converts to it).
/// @tparam T parameter type (default `float`).
/// @code
/// optim::sgd opt{model.parameters().size(), 0.1};
/// opt.step(model.parameters(), model.gradients());
/// @endcode
template <schedule Schedule = constant, std::floating_point T = float>
class sgd : public detail::optimizer_base<T, Schedule, 0> {
 public:
  /// SGD over `size` parameters with learning rates from `schedule`.
  sgd(std::size_t size, Schedule schedule) : detail::optimizer_base<T, Schedule, 0>(size, std::move(schedule)) {}

  void step(std::span<T> params, std::span<const T> grads) {
    const T rate = this->begin_step(params, grads, "optim::sgd");
    for (std::size_t i = 0; i < params.size(); ++i) params[i] -= rate * grads[i];
  }
};

sgd(std::size_t, double) -> sgd<constant>;

}  // namespace switchyard::optim

// SGD with heavy-ball or Nesterov momentum, in the convention of PyTorch (the learning rate
// multiplies the velocity, so a schedule changes the step without rescaling the history).
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <utility>

#include "switchyard/core/error.hpp"
#include "switchyard/optim/constant.hpp"
#include "switchyard/optim/optimizer.hpp"
#include "switchyard/optim/schedule.hpp"

namespace switchyard::optim {

/// @brief Momentum SGD: v_i = mu v_i + g_i, then p_i -= lr v_i (heavy ball) or
/// p_i -= lr (g_i + mu v_i) (Nesterov, as in Sutskever et al. 2013 rewritten for the current
/// parameters). One slot: the velocity v, zero at the start.
/// @tparam Schedule learning-rate schedule (default `constant`; a number converts to it).
/// @tparam T parameter type (default `float`).
/// @code
/// optim::momentum opt{model.parameters().size(), 0.05, 0.9, /*nesterov=*/true};
/// opt.step(model.parameters(), model.gradients());
/// @endcode
template <schedule Schedule = constant, std::floating_point T = float>
class momentum : public detail::optimizer_base<T, Schedule, 1> {
 public:
  /// Momentum SGD over `size` parameters with coefficient `mu` in [0, 1).
  momentum(std::size_t size, Schedule schedule, double mu = 0.9, bool nesterov = false)
      : detail::optimizer_base<T, Schedule, 1>(size, std::move(schedule)), mu_(static_cast<T>(mu)),
        nesterov_(nesterov) {
    if (!(mu >= 0.0 && mu < 1.0)) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str("optim::momentum: mu ", mu,
                                                                     " is not in [0, 1)"));
    }
  }

  void step(std::span<T> params, std::span<const T> grads) {
    const T rate = this->begin_step(params, grads, "optim::momentum");
    T* velocity = this->state_.slots[0].data();
    // Two loops rather than a branch per element, so each one vectorizes.
    if (nesterov_) {
      for (std::size_t i = 0; i < params.size(); ++i) {
        velocity[i] = mu_ * velocity[i] + grads[i];
        params[i] -= rate * (grads[i] + mu_ * velocity[i]);
      }
    } else {
      for (std::size_t i = 0; i < params.size(); ++i) {
        velocity[i] = mu_ * velocity[i] + grads[i];
        params[i] -= rate * velocity[i];
      }
    }
  }

  [[nodiscard]] double mu() const noexcept { return mu_; }
  [[nodiscard]] bool nesterov() const noexcept { return nesterov_; }

 private:
  T mu_;
  bool nesterov_;
};

template <class... Hyperparameters>
momentum(std::size_t, double, Hyperparameters...) -> momentum<constant>;

}  // namespace switchyard::optim

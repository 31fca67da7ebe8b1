// Adam with bias correction (Kingma and Ba 2015), in the form PyTorch computes it, so that runs
// can be compared against it step for step.
#pragma once

#include <cmath>
#include <concepts>
#include <cstddef>
#include <span>
#include <utility>

#include "switchyard/core/error.hpp"
#include "switchyard/optim/constant.hpp"
#include "switchyard/optim/optimizer.hpp"
#include "switchyard/optim/schedule.hpp"

// xsimd (installed with xtensor) vectorizes the update when it is there; without it the same
// update runs scalar.
#if __has_include(<xsimd/xsimd.hpp>)
#include <xsimd/xsimd.hpp>
#define SWITCHYARD_ADAM_XSIMD 1
#else
#define SWITCHYARD_ADAM_XSIMD 0
#endif

namespace switchyard::optim {

/// @brief Adam: with t the step number counted from 1,
/// m_i = b1 m_i + (1 - b1) g_i,  v_i = b2 v_i + (1 - b2) g_i^2,
/// p_i -= lr / (1 - b1^t) * m_i / (sqrt(v_i) / sqrt(1 - b2^t) + eps).
/// Epsilon is added to the bias-corrected sqrt(v), outside the root, as in the paper and
/// PyTorch. Two slots: m then v, zero at the start. The bias corrections depend on the step
/// count, which the state carries, so an imported state continues exactly.
/// @tparam Schedule learning-rate schedule (default `constant`; a number converts to it).
/// @tparam T parameter type (default `float`).
/// @code
/// optim::adam opt{model.parameters().size(), 1e-3};
/// opt.step(model.parameters(), model.gradients());
/// @endcode
template <schedule Schedule = constant, std::floating_point T = float>
class adam : public detail::optimizer_base<T, Schedule, 2> {
 public:
  /// Adam over `size` parameters; `beta1`, `beta2` in [0, 1), `epsilon` > 0.
  adam(std::size_t size, Schedule schedule, double beta1 = 0.9, double beta2 = 0.999,
       double epsilon = 1e-8)
      : detail::optimizer_base<T, Schedule, 2>(size, std::move(schedule)), beta1_(beta1),
        beta2_(beta2), epsilon_(epsilon) {
    if (!(beta1 >= 0.0 && beta1 < 1.0 && beta2 >= 0.0 && beta2 < 1.0 && epsilon > 0.0)) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          "optim::adam: needs beta1, beta2 in [0, 1) and epsilon > 0, got ", beta1, ", ", beta2,
          ", ", epsilon));
    }
  }

  void step(std::span<T> params, std::span<const T> grads) {
    const double rate = this->begin_step(params, grads, "optim::adam");
    const auto t = static_cast<double>(this->state_.step);
    // Per-step scalars in double: b^t underflows gracefully and 1 - b2^t keeps its digits.
    const T step_size = static_cast<T>(rate / (1.0 - std::pow(beta1_, t)));
    const T root_correction = static_cast<T>(1.0 / std::sqrt(1.0 - std::pow(beta2_, t)));
    const T b1 = static_cast<T>(beta1_);
    const T b2 = static_cast<T>(beta2_);
    const T epsilon = static_cast<T>(epsilon_);
    T* m = this->state_.slots[0].data();
    T* v = this->state_.slots[1].data();
    std::size_t i = 0;
#if SWITCHYARD_ADAM_XSIMD
    // Compilers keep std::sqrt scalar for its errno path (-fmath-errno is the default), which
    // makes this loop 4x slower than it needs to be; xsimd's sqrt has no such path. Same
    // operations in the same order, and square roots are exact: the results are the same bits.
    using batch = xsimd::batch<T>;
    for (; i + batch::size <= params.size(); i += batch::size) {
      const batch g = batch::load_unaligned(grads.data() + i);
      const batch mi = b1 * batch::load_unaligned(m + i) + (T{1} - b1) * g;
      const batch vi = b2 * batch::load_unaligned(v + i) + (T{1} - b2) * g * g;
      const batch pi = batch::load_unaligned(params.data() + i) - step_size * mi / (xsimd::sqrt(vi) * root_correction + epsilon);
      mi.store_unaligned(m + i);
      vi.store_unaligned(v + i);
      pi.store_unaligned(params.data() + i);
    }
#endif
    for (; i < params.size(); ++i) {
      m[i] = b1 * m[i] + (T{1} - b1) * grads[i];
      v[i] = b2 * v[i] + (T{1} - b2) * grads[i] * grads[i];
      params[i] -= step_size * m[i] / (std::sqrt(v[i]) * root_correction + epsilon);
    }
  }

  [[nodiscard]] double beta1() const noexcept { return beta1_; }
  [[nodiscard]] double beta2() const noexcept { return beta2_; }
  [[nodiscard]] double epsilon() const noexcept { return epsilon_; }

 private:
  double beta1_;
  double beta2_;
  double epsilon_;
};

template <class... Hyperparameters>
adam(std::size_t, double, Hyperparameters...) -> adam<constant>;

}  // namespace switchyard::optim

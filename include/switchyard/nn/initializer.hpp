// How the weight matrices of dense and convolution layers are drawn at construction: the He and
// Glorot schemes over the portable generator, so a seed fixes the initial parameters exactly.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>

#include "switchyard/nn/rng.hpp"

namespace switchyard::nn {

/// @brief The initialization scheme of a layer's weights (biases always start at zero).
///
/// With `fan_in` inputs and `fan_out` outputs per weight:
/// - `he_uniform` (the default): U(-a, a), a = sqrt(6 / fan_in), keeps the activation variance of
///   ReLU networks constant (He et al. 2015);
/// - `glorot_uniform`: U(-a, a), a = sqrt(6 / (fan_in + fan_out)), for tanh/linear layers
///   (Glorot and Bengio 2010);
/// - `he_normal`, `glorot_normal`: N(0, s^2) with s = sqrt(2 / fan_in), sqrt(2 / (fan_in + fan_out)).
///
/// The uniform schemes are bitwise identical on every platform; the normal ones within one math
/// library (see `portable_rng::normal`).
/// @code
/// nn::dense<> logits{128, 10, nn::initializer::glorot_uniform};
/// @endcode
enum class initializer { he_uniform, glorot_uniform, he_normal, glorot_normal };

namespace detail {

/// Fills `weights` from `rng` by `scheme`, drawing one value per element in order.
template <class T>
void initialize(std::span<T> weights, initializer scheme, std::size_t fan_in, std::size_t fan_out,
                portable_rng& rng) {
  const double in = static_cast<double>(fan_in);
  const double in_out = static_cast<double>(fan_in + fan_out);
  switch (scheme) {
    case initializer::he_uniform:
    case initializer::glorot_uniform: {
      const double limit = std::sqrt(6.0 / (scheme == initializer::he_uniform ? in : in_out));
      for (T& w : weights) w = static_cast<T>(rng.uniform(-limit, limit));
      break;
    }
    case initializer::he_normal:
    case initializer::glorot_normal: {
      const double stddev = std::sqrt(2.0 / (scheme == initializer::he_normal ? in : in_out));
      for (T& w : weights) w = static_cast<T>(rng.normal(0.0, stddev));
      break;
    }
  }
}

}  // namespace detail
}  // namespace switchyard::nn

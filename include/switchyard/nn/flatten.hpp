// The reshape between convolution blocks and dense layers: a new shape over the same values,
// so it neither copies nor allocates.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "switchyard/nn/layer.hpp"
#include "switchyard/nn/rng.hpp"

namespace switchyard::nn {

/// @brief Flattens each example's `{h, w, c}` features to `{1, 1, h * w * c}`.
///
/// Examples are already stored contiguously, so forward returns its input and backward its
/// incoming gradient: the layer exists to make the change of shape explicit for `nn::dense`.
/// @tparam T element type (default `float`).
/// @code
/// nn::sequential model{seed, nn::feature_shape{28, 28, 1}, nn::flatten{}, nn::dense{784, 10}};
/// @endcode
template <class T = float>
class flatten {
 public:
  using value_type = T;

  feature_shape configure(feature_shape in) const noexcept { return {1, 1, in.size()}; }
  [[nodiscard]] std::size_t parameter_count() const noexcept { return 0; }
  /// `"flatten"`: its part of `nn::sequential::layout()`.
  [[nodiscard]] std::string describe() const { return "flatten"; }
  void bind(std::span<T>, std::span<T>) noexcept {}
  void initialize(portable_rng&) noexcept {}
  std::span<const T> forward(std::span<const T> x, std::size_t) const noexcept { return x; }
  std::span<const T> backward(std::span<const T> dy, std::size_t, bool propagate) const noexcept {
    return propagate ? dy : std::span<const T>{};
  }
};

}  // namespace switchyard::nn

// The rectified linear unit, elementwise max(x, 0), with no parameters.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "switchyard/nn/layer.hpp"
#include "switchyard/nn/rng.hpp"

namespace switchyard::nn {

/// @brief ReLU activation: y = max(x, 0) elementwise; the gradient passes where y > 0.
/// @tparam T element type (default `float`).
/// @code
/// nn::sequential model{seed, nn::feature_shape{1, 1, 784}, nn::dense{784, 64}, nn::relu{}, nn::dense{64, 10}};
/// @endcode
template <class T = float>
class relu {
 public:
  using value_type = T;

  feature_shape configure(feature_shape in) noexcept {
    size_ = in.size();
    return in;
  }
  [[nodiscard]] std::size_t parameter_count() const noexcept { return 0; }
  /// `"relu"`: its part of `nn::sequential::layout()`.
  [[nodiscard]] std::string describe() const { return "relu"; }
  void bind(std::span<T>, std::span<T>) noexcept {}
  void initialize(portable_rng&) noexcept {}

  std::span<const T> forward(std::span<const T> x, std::size_t n) {
    const std::size_t count = n * size_;
    detail::grow(output_, count);
    for (std::size_t i = 0; i < count; ++i) output_[i] = x[i] > T{0} ? x[i] : T{0};
    return {output_.data(), count};
  }

  std::span<const T> backward(std::span<const T> dy, std::size_t n, bool propagate) {
    if (!propagate) return {};
    const std::size_t count = n * size_;
    detail::grow(input_gradient_, count);
    // The mask comes from the output (y > 0 exactly where x > 0), so the input need not be kept.
    for (std::size_t i = 0; i < count; ++i) input_gradient_[i] = output_[i] > T{0} ? dy[i] : T{0};
    return {input_gradient_.data(), count};
  }

 private:
  std::size_t size_ = 0;
  std::vector<T> output_;
  std::vector<T> input_gradient_;
};

}  // namespace switchyard::nn

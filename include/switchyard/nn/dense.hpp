// The fully connected layer: y = x W + b for a batch, one GEMM forward and two backward, with W
// and b living in the model's parameter arena.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/nn/initializer.hpp"
#include "switchyard/nn/layer.hpp"
#include "switchyard/nn/rng.hpp"

namespace switchyard::nn {

/// @brief A dense (fully connected) layer from `inputs` to `outputs` features.
///
/// Parameters, in arena order: the weights W, `inputs x outputs` row-major (so the forward pass is
/// x W without a transpose), then the bias b of `outputs`. The input must be flat: put
/// `nn::flatten` after a convolution block.
/// @tparam T element type (default `float`; `double` for gradient checks).
/// @code
/// nn::sequential model{seed, nn::feature_shape{1, 1, 784}, nn::dense{784, 10}};
/// @endcode
template <class T = float>
class dense {
 public:
  using value_type = T;

  /// A layer mapping `inputs` features to `outputs`, weights drawn by `scheme`.
  dense(std::size_t inputs, std::size_t outputs, initializer scheme = initializer::he_uniform)
      : inputs_(inputs), outputs_(outputs), scheme_(scheme) {
    if (inputs == 0 || outputs == 0) {
      switchyard::detail::raise<usage_error>(
          switchyard::detail::str("nn::dense: inputs (", inputs, ") and outputs (", outputs, ") must be > 0"));
    }
  }

  /// Checks that `in` is flat with `inputs` values; returns `{1, 1, outputs}`.
  feature_shape configure(feature_shape in) const {
    if (!in.flat() || in.size() != inputs_) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          "nn::dense: expects a flat input of ", inputs_, " values, got ", in.height, "x",
          in.width, "x", in.channels, in.flat() ? "" : " (insert nn::flatten before it)"));
    }
    return {1, 1, outputs_};
  }

  [[nodiscard]] std::size_t parameter_count() const noexcept { return (inputs_ + 1) * outputs_; }
  /// `"dense 784x256"`: its part of `nn::sequential::layout()`.
  [[nodiscard]] std::string describe() const {
    return "dense " + std::to_string(inputs_) + "x" + std::to_string(outputs_);
  }

  void bind(std::span<T> params, std::span<T> grads) noexcept {
    params_ = params;
    grads_ = grads;
  }

  void initialize(portable_rng& rng) {
    detail::initialize(params_.first(inputs_ * outputs_), scheme_, inputs_, outputs_, rng);
    std::fill(params_.begin() + static_cast<std::ptrdiff_t>(inputs_ * outputs_), params_.end(), T{0});
  }

  std::span<const T> forward(std::span<const T> x, std::size_t n) {
    input_ = x;
    detail::grow(output_, n * outputs_);
    detail::broadcast_rows(params_.data() + inputs_ * outputs_, n, outputs_, output_.data());
    detail::gemm(x.data(), n, inputs_, false, params_.data(), inputs_, outputs_, false,
                 output_.data(), T{1});
    return {output_.data(), n * outputs_};
  }

  std::span<const T> backward(std::span<const T> dy, std::size_t n, bool propagate) {
    // dW = x^T dy and db = column sums of dy, both overwriting the gradient slice.
    detail::gemm(input_.data(), n, inputs_, true, dy.data(), n, outputs_, false, grads_.data(), T{0});
    detail::column_sums(dy.data(), n, outputs_, grads_.data() + inputs_ * outputs_);
    if (!propagate) return {};
    detail::grow(input_gradient_, n * inputs_);
    detail::gemm(dy.data(), n, outputs_, false, params_.data(), inputs_, outputs_, true,
                 input_gradient_.data(), T{0});
    return {input_gradient_.data(), n * inputs_};
  }

  /// The weights as an `inputs x outputs` xtensor view into the parameter arena (no copy).
  [[nodiscard]] auto weights() const {
    return detail::matrix(static_cast<const T*>(params_.data()), inputs_, outputs_);
  }
  /// The bias as an xtensor view of `outputs` values into the parameter arena (no copy).
  [[nodiscard]] auto bias() const {
    return xt::adapt(static_cast<const T*>(params_.data()) + inputs_ * outputs_, outputs_,
                     xt::no_ownership(), std::array<std::size_t, 1>{outputs_});
  }
  [[nodiscard]] std::size_t inputs() const noexcept { return inputs_; }
  [[nodiscard]] std::size_t outputs() const noexcept { return outputs_; }

 private:
  std::size_t inputs_;
  std::size_t outputs_;
  initializer scheme_;
  std::span<T> params_;
  std::span<T> grads_;
  std::span<const T> input_;
  std::vector<T> output_;
  std::vector<T> input_gradient_;
};

}  // namespace switchyard::nn

// The classification loss at the top of every shipped model: softmax over the logits and the
// negative log-likelihood of the labelled class, with its gradient w.r.t. the logits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/nn/evaluation.hpp"

namespace switchyard::nn {

/// @brief Softmax cross-entropy over `classes` logits per example, with integer labels.
///
/// Per example, loss = log(sum_j exp(z_j)) - z_label, computed around max_j z_j so that no
/// exponential overflows, and accumulated in double whatever `T` is. The gradient of the MEAN
/// loss over the batch, (softmax(z) - onehot(label)) / n, is what `forward_backward` leaves in
/// `gradient()`, so every layer below produces mean gradients with no further scaling.
/// @tparam T element type of the logits (default `float`).
/// @code
/// nn::softmax_cross_entropy<> loss{10};
/// const double mean = loss.forward_backward(logits, labels);  // logits: labels.size() x 10
/// std::span<const float> dlogits = loss.gradient();
/// @endcode
template <class T = float>
class softmax_cross_entropy {
 public:
  using value_type = T;

  /// A loss over `classes` (> 0) logits per example.
  explicit softmax_cross_entropy(std::size_t classes) : classes_(classes) {
    if (classes == 0) switchyard::detail::raise<usage_error>("nn::softmax_cross_entropy: classes must be > 0");
  }

  /// Mean loss of the batch; leaves d(mean loss)/d(logits) in `gradient()`.
  double forward_backward(std::span<const T> logits, std::span<const std::uint8_t> labels) {
    const std::size_t n = check(logits, labels);
    if (gradient_.size() < n * classes_) gradient_.resize(n * classes_);
    examples_ = n;
    const double inverse_n = 1.0 / static_cast<double>(n);
    double loss_sum = 0.0;
    for (std::size_t example = 0; example < n; ++example) {
      const T* z = logits.data() + example * classes_;
      T* dz = gradient_.data() + example * classes_;
      const std::size_t label = labels[example];
      const double normalizer = log_sum_exp(z);
      loss_sum += normalizer - static_cast<double>(z[label]);
      for (std::size_t j = 0; j < classes_; ++j) {
        const double probability = std::exp(static_cast<double>(z[j]) - normalizer);
        dz[j] = static_cast<T>((probability - (j == label ? 1.0 : 0.0)) * inverse_n);
      }
    }
    return loss_sum * inverse_n;
  }

  /// d(mean loss)/d(logits) of the last `forward_backward`, `n x classes`.
  [[nodiscard]] std::span<const T> gradient() const noexcept {
    return {gradient_.data(), examples_ * classes_};
  }

  /// Loss sum and correct predictions (argmax, first on ties) of a batch; no gradient.
  [[nodiscard]] evaluation evaluate(std::span<const T> logits,
                                    std::span<const std::uint8_t> labels) const {
    const std::size_t n = check(logits, labels);
    evaluation result{0.0, 0, n};
    for (std::size_t example = 0; example < n; ++example) {
      const T* z = logits.data() + example * classes_;
      const std::size_t label = labels[example];
      result.loss_sum += log_sum_exp(z) - static_cast<double>(z[label]);
      result.correct += static_cast<std::size_t>(std::max_element(z, z + classes_) - z) == label;
    }
    return result;
  }

  [[nodiscard]] std::size_t classes() const noexcept { return classes_; }

 private:
  /// log(sum_j exp(z_j)) for one example, shifted by max_j z_j so that no exponential overflows.
  double log_sum_exp(const T* z) const {
    const double top = *std::max_element(z, z + classes_);
    double sum = 0.0;
    for (std::size_t j = 0; j < classes_; ++j) sum += std::exp(static_cast<double>(z[j]) - top);
    return top + std::log(sum);
  }

  /// Checks the sizes and label range; returns the number of examples.
  std::size_t check(std::span<const T> logits, std::span<const std::uint8_t> labels) const {
    const std::size_t n = labels.size();
    if (logits.size() != n * classes_) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str("nn::softmax_cross_entropy: ", logits.size(),
                                             " logits for ", n, " labels of ", classes_, " classes"));
    }
    for (std::size_t example = 0; example < n; ++example) {
      if (labels[example] >= classes_) {
        switchyard::detail::raise<data_error>(switchyard::detail::str("nn::softmax_cross_entropy: label ",
                                              int{labels[example]}, " of example ", example,
                                              " is not below ", classes_, " classes"));
      }
    }
    return n;
  }

  std::size_t classes_;
  std::size_t examples_ = 0;  // batch size of the last forward_backward
  std::vector<T> gradient_;
};

}  // namespace switchyard::nn

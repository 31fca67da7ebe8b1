// The user model of docs/models.md, kept here verbatim so that the test proves the page's code
// satisfies nn::model and trains.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "switchyard/data/batch.hpp"
#include "switchyard/nn/evaluation.hpp"

// Multinomial logistic regression on raw pixels: one weight row (plus a bias) per class.
class logistic_regression {
 public:
  logistic_regression(std::size_t pixels, std::size_t classes)
      : pixels_(pixels), params_((pixels + 1) * classes), grads_(params_.size()), p_(classes) {}

  std::span<float> parameters() { return params_; }
  std::span<float> gradients() { return grads_; }

  double forward_backward(const switchyard::data::batch_view& batch) {
    std::fill(grads_.begin(), grads_.end(), 0.0f);  // overwrite, never accumulate
    double loss = 0.0;
    for (std::size_t e = 0; e < batch.size(); ++e) {
      loss -= std::log(softmax(batch, e)[batch.labels[e]]);
      for (std::size_t k = 0; k < p_.size(); ++k) {  // d(mean loss)/d(logit k)
        const double d = (p_[k] - (k == batch.labels[e])) / static_cast<double>(batch.size());
        float* row = grads_.data() + k * (pixels_ + 1);
        for (std::size_t i = 0; i < pixels_; ++i) row[i] += static_cast<float>(d * pixel(batch, e, i));
        row[pixels_] += static_cast<float>(d);
      }
    }
    return loss / static_cast<double>(batch.size());
  }

  switchyard::nn::evaluation evaluate(const switchyard::data::batch_view& batch) {
    switchyard::nn::evaluation result{0.0, 0, batch.size()};
    for (std::size_t e = 0; e < batch.size(); ++e) {
      result.loss_sum -= std::log(softmax(batch, e)[batch.labels[e]]);
      result.correct += std::max_element(p_.begin(), p_.end()) - p_.begin() == batch.labels[e];
    }
    return result;
  }

 private:
  static double pixel(const switchyard::data::batch_view& b, std::size_t e, std::size_t i) {
    return b.images[e * b.pixels() + i] / 255.0;
  }
  const std::vector<double>& softmax(const switchyard::data::batch_view& batch, std::size_t e) {
    for (std::size_t k = 0; k < p_.size(); ++k) {
      const float* row = params_.data() + k * (pixels_ + 1);
      p_[k] = row[pixels_];
      for (std::size_t i = 0; i < pixels_; ++i) p_[k] += row[i] * pixel(batch, e, i);
    }
    const double top = *std::max_element(p_.begin(), p_.end());
    double sum = 0.0;
    for (double& z : p_) sum += (z = std::exp(z - top));
    for (double& z : p_) z /= sum;
    return p_;
  }

  std::size_t pixels_;
  std::vector<float> params_, grads_;
  std::vector<double> p_;  // class probabilities of the current example
};

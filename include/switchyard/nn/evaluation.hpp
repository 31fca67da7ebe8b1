// What a model reports for a batch it does not learn from: summed loss and correct predictions,
// in sums so that batches, shards and ranks combine by addition.
#pragma once

#include <cstddef>

namespace switchyard::nn {

/// @brief Loss sum, correct predictions and examples seen over one or more batches.
///
/// Kept as sums, not means, so that the results of batches of unequal size (and of several
/// ranks, after an all-reduce of the three numbers) combine exactly with `+=`.
/// @code
/// nn::evaluation total;
/// for (const auto& batch : test_batches) total += model.evaluate(batch);
/// std::printf("loss %.4f accuracy %.4f\n", total.mean_loss(), total.accuracy());
/// @endcode
struct evaluation {
  double loss_sum = 0.0;
  std::size_t correct = 0;
  std::size_t count = 0;

  evaluation& operator+=(const evaluation& other) noexcept {
    loss_sum += other.loss_sum;
    correct += other.correct;
    count += other.count;
    return *this;
  }
  friend evaluation operator+(evaluation left, const evaluation& right) noexcept {
    return left += right;
  }

  /// Mean loss per example (0 when nothing was evaluated).
  [[nodiscard]] double mean_loss() const noexcept {
    return count == 0 ? 0.0 : loss_sum / static_cast<double>(count);
  }
  /// Fraction of correct predictions (0 when nothing was evaluated).
  [[nodiscard]] double accuracy() const noexcept {
    return count == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(count);
  }
};

}  // namespace switchyard::nn

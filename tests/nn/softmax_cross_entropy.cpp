// Tests of nn/softmax_cross_entropy.hpp: known values, stability with large logits, the
// gradient of the mean loss, evaluation counts, and label checks.
#include "switchyard/nn/softmax_cross_entropy.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gradient_check.hpp"
#include "switchyard/core/error.hpp"

namespace nn = switchyard::nn;

TEST_CASE("softmax_cross_entropy.uniform_logits_give_log_classes") {
  nn::softmax_cross_entropy<float> loss{4};
  const std::vector<float> logits(8, 3.0f);
  const std::vector<std::uint8_t> labels{0, 3};
  CHECK(loss.forward_backward(logits, labels) == doctest::Approx(std::log(4.0)));
  // (1/4 - onehot) / 2 per entry.
  const auto dz = loss.gradient();
  REQUIRE(dz.size() == 8);
  CHECK(dz[0] == doctest::Approx(-0.375));
  CHECK(dz[1] == doctest::Approx(0.125));
  CHECK(dz[7] == doctest::Approx(-0.375));
}

TEST_CASE("softmax_cross_entropy.large_logits_stay_finite") {
  nn::softmax_cross_entropy<float> loss{3};
  const std::vector<float> logits{1000.0f, 0.0f, -1000.0f};
  const std::vector<std::uint8_t> labels{1};
  CHECK(loss.forward_backward(logits, labels) == doctest::Approx(1000.0));
  for (const float g : loss.gradient()) CHECK(std::isfinite(g));
}

TEST_CASE("softmax_cross_entropy.gradient_matches_central_differences") {
  constexpr std::size_t classes = 5, n = 4;
  nn::softmax_cross_entropy<double> loss{classes};
  std::vector<double> logits = switchyard::test::random_values(n * classes, 11, -3.0, 3.0);
  const std::vector<std::uint8_t> labels{0, 4, 2, 2};
  loss.forward_backward(logits, labels);
  const std::vector<double> analytic(loss.gradient().begin(), loss.gradient().end());
  nn::softmax_cross_entropy<double> probe{classes};
  const double error = switchyard::test::gradient_error(
      std::span(logits), std::span<const double>(analytic),
      [&] { return probe.forward_backward(logits, labels); });
  CHECK(error < 1e-6);
}

TEST_CASE("softmax_cross_entropy.evaluate_sums_and_counts") {
  nn::softmax_cross_entropy<double> loss{3};
  const std::vector<double> logits{2, 1, 0, 0, 0, 5, 1, 1, 1};
  const std::vector<std::uint8_t> labels{0, 1, 0};  // right, wrong, tie resolved to class 0
  const nn::evaluation result = loss.evaluate(logits, labels);
  CHECK(result.count == 3);
  CHECK(result.correct == 2);
  nn::softmax_cross_entropy<double> same{3};
  CHECK(result.loss_sum == doctest::Approx(3 * same.forward_backward(logits, labels)));
}

TEST_CASE("softmax_cross_entropy.rejects_bad_labels_and_sizes") {
  CHECK_THROWS_AS(nn::softmax_cross_entropy<>{0}, switchyard::usage_error);
  nn::softmax_cross_entropy<float> loss{3};
  const std::vector<float> logits(6);
  CHECK_THROWS_AS(loss.forward_backward(logits, std::vector<std::uint8_t>{0, 3}), switchyard::data_error);
  CHECK_THROWS_AS((void)loss.evaluate(logits, std::vector<std::uint8_t>{0}), switchyard::usage_error);
}

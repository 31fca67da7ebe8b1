// Tests of nn/mlp.hpp: size, seeding, a gradient check of the whole model, and learning a
// small separable problem.
#include "switchyard/nn/mlp.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "gradient_check.hpp"
#include "switchyard/nn/model.hpp"

namespace nn = switchyard::nn;
using switchyard::test::random_batch;

TEST_CASE("mlp.size_and_layout") {
  const nn::mlp model{1};
  static_assert(nn::model<nn::mlp<>>);
  CHECK(model.parameters().size() == 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  CHECK(model.classes() == 10);
  CHECK(model.layer<1>().inputs() == 784);
  CHECK(nn::mlp<>{1, {8, 8, 1}, 3}.parameters().size() == 64 * 256 + 256 + 256 * 128 + 128 + 128 * 3 + 3);
}

TEST_CASE("mlp.same_seed_same_parameters") {
  const nn::mlp a{2024};
  const nn::mlp b{2024};
  const nn::mlp c{2025};
  CHECK(std::equal(a.parameters().begin(), a.parameters().end(), b.parameters().begin()));
  CHECK(!std::equal(a.parameters().begin(), a.parameters().end(), c.parameters().begin()));
}

TEST_CASE("mlp.gradient_matches_central_differences") {
  nn::mlp<double> model{3};
  const random_batch batch{3, 28, 28, 10, 5};
  CHECK(switchyard::test::model_gradient_error(model, batch.view(), 400) < 1e-6);
}

TEST_CASE("mlp.loss_decreases_on_a_separable_problem") {
  // Ten classes on 8x8 images: class k lights up row k mod 8 (and the first column for k >= 8),
  // over random background noise.
  constexpr std::size_t n = 64;
  random_batch batch{n, 8, 8, 10, 17};
  for (std::size_t e = 0; e < n; ++e) {
    const std::size_t k = batch.labels[e];
    for (std::size_t i = 0; i < 64; ++i) {
      const bool lit = i / 8 == k % 8 && (k < 8 || i % 8 == 0);
      batch.images[e * 64 + i] = static_cast<std::uint8_t>(lit ? 255 : batch.images[e * 64 + i] / 8);
    }
  }
  nn::mlp model{4, {8, 8, 1}, 10};
  const double initial = model.evaluate(batch.view()).mean_loss();
  double last = initial;
  for (int step = 0; step < 60; ++step) {
    last = model.forward_backward(batch.view());
    auto p = model.parameters();
    const auto g = model.gradients();
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= 0.1f * g[i];
  }
  CHECK(last < 0.2 * initial);
  CHECK(model.evaluate(batch.view()).accuracy() > 0.95);
}

// Tests of nn/model.hpp: the shipped models and the user model of docs/models.md satisfy the
// concept, near misses do not, and the user model trains through the concept's calls alone.
#include "switchyard/nn/model.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "gradient_check.hpp"
#include "logistic_regression.hpp"
#include "switchyard/nn/cnn.hpp"
#include "switchyard/nn/mlp.hpp"

namespace nn = switchyard::nn;
namespace data = switchyard::data;

namespace {

struct no_evaluate {
  std::span<float> parameters();
  std::span<float> gradients();
  double forward_backward(const data::batch_view&);
};

struct read_only_arenas {
  std::span<const float> parameters();
  std::span<const float> gradients();
  double forward_backward(const data::batch_view&);
  nn::evaluation evaluate(const data::batch_view&);
};

struct mismatched_arenas {
  std::span<float> parameters();
  std::span<double> gradients();
  double forward_backward(const data::batch_view&);
  nn::evaluation evaluate(const data::batch_view&);
};

/// Plain SGD through nothing but the concept's expressions.
template <nn::model M>
double train(M& model, const data::batch_view& batch, int steps, float rate) {
  for (int s = 0; s < steps; ++s) {
    model.forward_backward(batch);
    auto p = model.parameters();
    auto g = model.gradients();
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= rate * g[i];
  }
  return model.evaluate(batch).mean_loss();
}

}  // namespace

TEST_CASE("model.concept_accepts_shipped_and_user_models") {
  static_assert(nn::model<nn::mlp<float>> && nn::model<nn::mlp<double>>);
  static_assert(nn::model<nn::cnn<float>>);
  static_assert(nn::model<logistic_regression>);
  static_assert(!nn::model<no_evaluate>);
  static_assert(!nn::model<read_only_arenas>);
  static_assert(!nn::model<mismatched_arenas>);
  CHECK(nn::model<logistic_regression>);
}

TEST_CASE("model.user_logistic_regression_trains_and_reports") {
  // Class k: the k-th quarter of a 4x4 image is bright.
  switchyard::test::random_batch batch{32, 4, 4, 4, 21};
  for (std::size_t e = 0; e < 32; ++e) {
    for (std::size_t i = 0; i < 16; ++i) {
      batch.images[e * 16 + i] = static_cast<std::uint8_t>(i / 4 == batch.labels[e] ? 200 : 20);
    }
  }
  logistic_regression model{16, 4};
  const double initial = model.evaluate(batch.view()).mean_loss();
  CHECK(initial == doctest::Approx(std::log(4.0)));  // zero weights: uniform prediction
  const double final = train(model, batch.view(), 100, 1.0f);
  CHECK(final < 0.25 * initial);
  CHECK(model.evaluate(batch.view()).correct == 32);
}

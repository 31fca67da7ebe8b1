// Tests of nn/cnn.hpp: size, seeding, input checks, and a gradient check of the whole model.
#include "switchyard/nn/cnn.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include "gradient_check.hpp"
#include "switchyard/core/error.hpp"
#include "switchyard/nn/model.hpp"

namespace nn = switchyard::nn;

TEST_CASE("cnn.size_and_layout") {
  static_assert(nn::model<nn::cnn<>>);
  const nn::cnn model{1};
  constexpr std::size_t c1 = nn::cnn<>::channels1, c2 = nn::cnn<>::channels2;
  CHECK(model.parameters().size() ==
        (25 + 1) * c1 + (25 * c1 + 1) * c2 + (16 * c2 + 1) * 128 + (128 + 1) * 10);
  CHECK(model.layer<7>().inputs() == 4 * 4 * c2);
  CHECK(nn::cnn<>{1, {20, 16, 1}, 5}.layer<7>().inputs() == 2 * 1 * c2);
  CHECK_THROWS_AS(nn::cnn<>(1, {15, 28, 1}), switchyard::usage_error);
}

TEST_CASE("cnn.same_seed_same_parameters") {
  const nn::cnn a{77};
  const nn::cnn b{77};
  const nn::cnn c{78};
  CHECK(std::equal(a.parameters().begin(), a.parameters().end(), b.parameters().begin()));
  CHECK(!std::equal(a.parameters().begin(), a.parameters().end(), c.parameters().begin()));
}

TEST_CASE("cnn.gradient_matches_central_differences") {
  nn::cnn<double> model{5};
  const switchyard::test::random_batch batch{2, 28, 28, 10, 6};
  CHECK(switchyard::test::model_gradient_error(model, batch.view(), 300) < 1e-6);
}

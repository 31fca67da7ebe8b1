// Tests of nn/relu.hpp: values, mask of the gradient, and central differences.
#include "switchyard/nn/relu.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "gradient_check.hpp"

namespace nn = switchyard::nn;

TEST_CASE("relu.forward_and_backward_values") {
  nn::relu<float> layer;
  CHECK(layer.configure({1, 2, 2}) == nn::feature_shape{1, 2, 2});
  CHECK(layer.parameter_count() == 0);
  const std::vector<float> x{-1, 0, 2, -3, 4, 0.5f, -0.5f, 1};
  const auto y = layer.forward(x, 2);
  CHECK(std::vector<float>(y.begin(), y.end()) == std::vector<float>{0, 0, 2, 0, 4, 0.5f, 0, 1});
  const std::vector<float> dy{1, 2, 3, 4, 5, 6, 7, 8};
  const auto dx = layer.backward(dy, 2, true);
  CHECK(std::vector<float>(dx.begin(), dx.end()) == std::vector<float>{0, 0, 3, 0, 5, 6, 0, 8});
  CHECK(layer.backward(dy, 2, false).empty());
}

TEST_CASE("relu.gradient_matches_central_differences") {
  switchyard::test::layer_fixture fixture{nn::relu<double>{}, {3, 3, 2}, 3};
  CHECK(fixture.input_error() < 1e-6);
}

// Tests of nn/dense.hpp: forward on a hand example, gradient checks, shape errors, and buffer
// reuse across batches.
#include "switchyard/nn/dense.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "gradient_check.hpp"
#include "switchyard/core/error.hpp"

namespace nn = switchyard::nn;
using switchyard::test::layer_fixture;

TEST_CASE("dense.forward_hand_example") {
  nn::dense<double> layer{2, 3};
  CHECK(layer.configure({1, 1, 2}) == nn::feature_shape{1, 1, 3});
  REQUIRE(layer.parameter_count() == 9);
  // W = [[1, 2, 3], [4, 5, 6]], b = [0.5, -1, 0].
  std::vector<double> params{1, 2, 3, 4, 5, 6, 0.5, -1, 0};
  std::vector<double> grads(9);
  layer.bind(params, grads);
  const std::vector<double> x{1, -1, 2, 0.5};  // two examples
  const auto y = layer.forward(x, 2);
  CHECK(std::vector<double>(y.begin(), y.end()) == std::vector<double>{-2.5, -4, -3, 4.5, 5.5, 9});
  CHECK(layer.weights()(1, 2) == 6);
  CHECK(layer.bias()(0) == 0.5);
  CHECK(layer.weights().data() == params.data());  // a view into the arena, not a copy
}

TEST_CASE("dense.gradients_match_central_differences") {
  layer_fixture fixture{nn::dense<double>{7, 5}, {1, 1, 7}, 4};
  CHECK(fixture.parameter_error() < 1e-6);
  CHECK(fixture.input_error() < 1e-6);
}

TEST_CASE("dense.backward_overwrites_gradients_and_skips_input_gradient_on_request") {
  layer_fixture fixture{nn::dense<double>{3, 2}, {1, 1, 3}, 2};
  fixture.backward();
  const std::vector<double> once = fixture.grads;
  fixture.backward();
  CHECK(fixture.grads == once);
  fixture.loss();
  CHECK(fixture.layer.backward(fixture.readout, 2, false).empty());
  CHECK(fixture.grads == once);
}

TEST_CASE("dense.rejects_mismatched_input") {
  CHECK_THROWS_AS(nn::dense<>(0, 3), switchyard::usage_error);
  nn::dense<> layer{12, 3};
  CHECK_THROWS_AS(layer.configure({1, 1, 11}), switchyard::usage_error);
  CHECK_THROWS_WITH(layer.configure({2, 2, 3}), doctest::Contains("nn::flatten"));
}

TEST_CASE("dense.buffers_are_reused_for_equal_and_smaller_batches") {
  layer_fixture fixture{nn::dense<double>{4, 3}, {1, 1, 4}, 8};
  const double* first = fixture.layer.forward(fixture.input, 8).data();
  CHECK(fixture.layer.forward(fixture.input, 8).data() == first);
  CHECK(fixture.layer.forward(fixture.input, 3).data() == first);
  CHECK(fixture.layer.forward(fixture.input, 3).size() == 9);
}

// Tests of nn/max_pool.hpp: a hand example with two channels and a dropped border, gradient
// routing to the winners, and central differences.
#include "switchyard/nn/max_pool.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "gradient_check.hpp"
#include "switchyard/core/error.hpp"

namespace nn = switchyard::nn;

TEST_CASE("max_pool.hand_example_two_channels_odd_size") {
  nn::max_pool<float> pool{2};
  // 3x3 input, 2 channels: the last row and column do not fill a window and are dropped.
  CHECK(pool.configure({3, 3, 2}) == nn::feature_shape{1, 1, 2});
  // Channel 0 holds 1..9 row-major, channel 1 holds 9..1; interleaved (channels innermost).
  std::vector<float> x;
  for (int i = 0; i < 9; ++i) {
    x.push_back(static_cast<float>(i + 1));
    x.push_back(static_cast<float>(9 - i));
  }
  const auto y = pool.forward(x, 1);
  // Window rows 0-1, cols 0-1: channel 0 {1, 2, 4, 5} -> 5, channel 1 {9, 8, 6, 5} -> 9.
  CHECK(std::vector<float>(y.begin(), y.end()) == std::vector<float>{5, 9});
  const std::vector<float> dy{10, 20};
  const auto dx = pool.backward(dy, 1, true);
  std::vector<float> expected(18, 0.0f);
  expected[4 * 2 + 0] = 10;  // channel 0's max at (1, 1)
  expected[0 * 2 + 1] = 20;  // channel 1's max at (0, 0)
  CHECK(std::vector<float>(dx.begin(), dx.end()) == expected);
}

TEST_CASE("max_pool.gradient_matches_central_differences") {
  switchyard::test::layer_fixture fixture{nn::max_pool<double>{2}, {6, 4, 3}, 2};
  CHECK(fixture.out == nn::feature_shape{3, 2, 3});
  CHECK(fixture.input_error() < 1e-6);
}

TEST_CASE("max_pool.rejects_bad_windows") {
  CHECK_THROWS_AS(nn::max_pool<>{0}, switchyard::usage_error);
  nn::max_pool<> pool{5};
  CHECK_THROWS_AS(pool.configure({4, 8, 1}), switchyard::usage_error);
}

// Tests of nn/flatten.hpp: the shape change, and that no value is copied either way.
#include "switchyard/nn/flatten.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace nn = switchyard::nn;

TEST_CASE("flatten.shape_and_zero_copy") {
  nn::flatten<float> layer;
  CHECK(layer.configure({4, 5, 3}) == nn::feature_shape{1, 1, 60});
  CHECK(layer.parameter_count() == 0);
  const std::vector<float> x(120, 1.0f);
  const auto y = layer.forward(x, 2);
  CHECK(y.data() == x.data());
  CHECK(y.size() == 120);
  const std::vector<float> dy(120, 2.0f);
  CHECK(layer.backward(dy, 2, true).data() == dy.data());
  CHECK(layer.backward(dy, 2, false).empty());
}

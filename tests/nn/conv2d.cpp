// Tests of nn/conv2d.hpp: forward against a direct convolution over several geometries
// (channels, stride, padding), gradient checks, and shape errors.
#include "switchyard/nn/conv2d.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

#include "gradient_check.hpp"
#include "switchyard/core/error.hpp"

namespace nn = switchyard::nn;
using switchyard::test::layer_fixture;

namespace {

struct geometry {
  std::size_t height, width, inputs, outputs, kernel, stride, padding;
};

// Stride 1 valid, stride 2 with padding, non-square input, and padding wider than a border.
constexpr geometry geometries[] = {
    {6, 6, 1, 2, 3, 1, 0}, {7, 5, 2, 3, 3, 2, 1}, {5, 8, 3, 2, 2, 1, 0}, {4, 4, 2, 2, 3, 1, 2}};

/// y[b, oy, ox, o] = bias[o] + sum over (ky, kx, c) of x[b, iy, ix, c] W[(ky, kx, c), o].
std::vector<double> direct_convolution(const geometry& g, const nn::feature_shape& out,
                                       const std::vector<double>& x,
                                       const std::vector<double>& params, std::size_t n) {
  const std::size_t patch = g.kernel * g.kernel * g.inputs;
  std::vector<double> y(n * out.size());
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t oy = 0; oy < out.height; ++oy)
      for (std::size_t ox = 0; ox < out.width; ++ox)
        for (std::size_t o = 0; o < g.outputs; ++o) {
          double sum = params[patch * g.outputs + o];
          for (std::size_t ky = 0; ky < g.kernel; ++ky)
            for (std::size_t kx = 0; kx < g.kernel; ++kx) {
              const auto iy = static_cast<std::ptrdiff_t>(oy * g.stride + ky) -
                              static_cast<std::ptrdiff_t>(g.padding);
              const auto ix = static_cast<std::ptrdiff_t>(ox * g.stride + kx) -
                              static_cast<std::ptrdiff_t>(g.padding);
              if (iy < 0 || ix < 0 || iy >= static_cast<std::ptrdiff_t>(g.height) ||
                  ix >= static_cast<std::ptrdiff_t>(g.width)) {
                continue;
              }
              for (std::size_t c = 0; c < g.inputs; ++c) {
                const std::size_t at =
                    ((b * g.height + static_cast<std::size_t>(iy)) * g.width + static_cast<std::size_t>(ix)) *
                        g.inputs + c;
                sum += x[at] * params[((ky * g.kernel + kx) * g.inputs + c) * g.outputs + o];
              }
            }
          y[((b * out.height + oy) * out.width + ox) * g.outputs + o] = sum;
        }
  return y;
}

layer_fixture<nn::conv2d<double>> make_fixture(const geometry& g, std::size_t n) {
  return {nn::conv2d<double>{g.inputs, g.outputs, g.kernel, g.stride, g.padding},
          {g.height, g.width, g.inputs}, n};
}

}  // namespace

TEST_CASE("conv2d.forward_matches_direct_convolution") {
  for (const geometry& g : geometries) {
    CAPTURE(g.height);
    CAPTURE(g.stride);
    CAPTURE(g.padding);
    auto fixture = make_fixture(g, 3);
    CHECK(fixture.out.height == (g.height + 2 * g.padding - g.kernel) / g.stride + 1);
    CHECK(fixture.out.width == (g.width + 2 * g.padding - g.kernel) / g.stride + 1);
    CHECK(fixture.out.channels == g.outputs);
    const auto y = fixture.layer.forward(fixture.input, 3);
    const auto expected = direct_convolution(g, fixture.out, fixture.input, fixture.params, 3);
    REQUIRE(y.size() == expected.size());
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(expected[i]));
  }
}

TEST_CASE("conv2d.gradients_match_central_differences") {
  for (const geometry& g : geometries) {
    CAPTURE(g.height);
    CAPTURE(g.stride);
    CAPTURE(g.padding);
    auto fixture = make_fixture(g, 2);
    CHECK(fixture.parameter_error() < 1e-6);
    CHECK(fixture.input_error() < 1e-6);
  }
}

TEST_CASE("conv2d.views_into_the_arena") {
  auto fixture = make_fixture(geometries[1], 1);
  CHECK(fixture.layer.weights().shape()[0] == 3 * 3 * 2);
  CHECK(fixture.layer.weights().shape()[1] == 3);
  CHECK(fixture.layer.weights().data() == fixture.params.data());
  CHECK(fixture.layer.bias()(2) == fixture.params[3 * 3 * 2 * 3 + 2]);
}

TEST_CASE("conv2d.rejects_bad_geometry") {
  CHECK_THROWS_AS(nn::conv2d<>(1, 4, 0), switchyard::usage_error);
  CHECK_THROWS_AS(nn::conv2d<>(1, 4, 3, 0), switchyard::usage_error);
  nn::conv2d<> layer{2, 4, 5};
  CHECK_THROWS_AS(layer.configure({8, 8, 1}), switchyard::usage_error);  // channels
  CHECK_THROWS_AS(layer.configure({4, 8, 2}), switchyard::usage_error);  // too small
}

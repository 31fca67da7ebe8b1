// Tests of nn/initializer.hpp: each scheme's range or spread, and determinism from the seed.
#include "switchyard/nn/initializer.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "switchyard/nn/rng.hpp"

namespace nn = switchyard::nn;

namespace {

std::vector<float> draw(nn::initializer scheme, std::size_t fan_in, std::size_t fan_out,
                        std::uint64_t seed, std::size_t count = 100000) {
  std::vector<float> weights(count);
  nn::portable_rng rng{seed};
  nn::detail::initialize(std::span(weights), scheme, fan_in, fan_out, rng);
  return weights;
}

double max_abs(const std::vector<float>& w) {
  double m = 0.0;
  for (float x : w) m = std::max(m, static_cast<double>(std::abs(x)));
  return m;
}

double rms(const std::vector<float>& w) {
  double s = 0.0;
  for (float x : w) s += static_cast<double>(x) * x;
  return std::sqrt(s / static_cast<double>(w.size()));
}

}  // namespace

TEST_CASE("initializer.he_uniform_bounds") {
  const auto w = draw(nn::initializer::he_uniform, 24, 10, 1);
  const double limit = std::sqrt(6.0 / 24.0);
  CHECK(max_abs(w) <= limit);
  CHECK(max_abs(w) > 0.999 * limit);
  CHECK(rms(w) == doctest::Approx(limit / std::sqrt(3.0)).epsilon(0.01));  // U(-a, a): a / sqrt 3
}

TEST_CASE("initializer.glorot_uniform_bounds") {
  const auto w = draw(nn::initializer::glorot_uniform, 24, 40, 1);
  const double limit = std::sqrt(6.0 / 64.0);
  CHECK(max_abs(w) <= limit);
  CHECK(max_abs(w) > 0.999 * limit);
}

TEST_CASE("initializer.normal_spreads") {
  CHECK(rms(draw(nn::initializer::he_normal, 50, 10, 2)) ==
        doctest::Approx(std::sqrt(2.0 / 50.0)).epsilon(0.02));
  CHECK(rms(draw(nn::initializer::glorot_normal, 50, 150, 2)) ==
        doctest::Approx(std::sqrt(2.0 / 200.0)).epsilon(0.02));
}

TEST_CASE("initializer.deterministic_from_seed") {
  for (const auto scheme : {nn::initializer::he_uniform, nn::initializer::glorot_uniform,
                            nn::initializer::he_normal, nn::initializer::glorot_normal}) {
    CAPTURE(static_cast<int>(scheme));
    CHECK(draw(scheme, 9, 3, 5, 1000) == draw(scheme, 9, 3, 5, 1000));
    CHECK(draw(scheme, 9, 3, 5, 1000) != draw(scheme, 9, 3, 6, 1000));
  }
}

// Tests of nn/rng.hpp: the splitmix64 stream is the published one, and draws are deterministic.
#include "switchyard/nn/rng.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

using switchyard::nn::portable_rng;

TEST_CASE("rng.splitmix64_reference_values") {
  // First outputs of splitmix64 from state 0, as in Vigna's reference implementation.
  portable_rng rng{0};
  CHECK(rng.next() == 0xe220a8397b1dcdafULL);
  CHECK(rng.next() == 0x6e789e6aa1b965f4ULL);
  CHECK(rng.next() == 0x06c45d188009454fULL);
}

TEST_CASE("rng.same_seed_same_stream_different_seed_different_stream") {
  portable_rng a{42};
  portable_rng b{42};
  portable_rng c{43};
  int differing = 0;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next();
    CHECK(x == b.next());
    differing += x != c.next();
  }
  CHECK(differing == 100);
}

TEST_CASE("rng.uniform_range_and_moments") {
  portable_rng rng{7};
  constexpr int draws = 200000;
  double sum = 0.0;
  double low = 1.0;
  double high = 0.0;
  for (int i = 0; i < draws; ++i) {
    const double u = rng.uniform(-2.0, 3.0);
    REQUIRE(u >= -2.0);
    REQUIRE(u < 3.0);
    sum += u;
    low = std::min(low, u);
    high = std::max(high, u);
  }
  // Mean 0.5, standard error 5 / sqrt(12 * draws) ~ 0.003.
  CHECK(sum / draws == doctest::Approx(0.5).epsilon(0.03));
  CHECK(low < -1.99);
  CHECK(high > 2.99);
}

TEST_CASE("rng.normal_moments") {
  portable_rng rng{9};
  constexpr int draws = 200000;
  double sum = 0.0;
  double squares = 0.0;
  for (int i = 0; i < draws; ++i) {
    const double z = rng.normal(1.0, 2.0);
    REQUIRE(std::isfinite(z));
    sum += z;
    squares += (z - 1.0) * (z - 1.0);
  }
  // Standard errors: 2 / sqrt(draws) ~ 0.0045 for the mean, ~0.3% for the variance.
  CHECK(std::abs(sum / draws - 1.0) < 0.02);
  CHECK(squares / draws == doctest::Approx(4.0).epsilon(0.02));
}

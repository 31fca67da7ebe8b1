// Tests of optim/cosine.hpp.
#include "switchyard/optim/cosine.hpp"

#include <doctest/doctest.h>

#include "switchyard/core/error.hpp"

namespace optim = switchyard::optim;

TEST_CASE("cosine.rates_at_specific_steps") {
  const optim::cosine schedule{0.1, 100, 0.01};
  CHECK(schedule.lr(0) == doctest::Approx(0.1));
  CHECK(schedule.lr(50) == doctest::Approx(0.055));                 // halfway: the mean
  CHECK(schedule.lr(25) == doctest::Approx(0.01 + 0.09 * (1 + 0.7071067811865476) / 2));
  CHECK(schedule.lr(100) == doctest::Approx(0.01));
  CHECK(schedule.lr(1000) == doctest::Approx(0.01));                // stays at the floor
  CHECK(optim::cosine{1.0, 4}.lr(4) == doctest::Approx(0.0));
  CHECK_THROWS_AS(optim::cosine(0.1, 0), switchyard::usage_error);
}

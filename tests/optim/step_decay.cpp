// Tests of optim/step_decay.hpp.
#include "switchyard/optim/step_decay.hpp"

#include <doctest/doctest.h>

#include "switchyard/core/error.hpp"

namespace optim = switchyard::optim;

TEST_CASE("step_decay.rates_at_specific_steps") {
  const optim::step_decay schedule{0.1, 0.5, 100};
  CHECK(schedule.lr(0) == 0.1);
  CHECK(schedule.lr(99) == 0.1);
  CHECK(schedule.lr(100) == doctest::Approx(0.05));
  CHECK(schedule.lr(250) == doctest::Approx(0.025));
  CHECK(schedule.lr(1000) == doctest::Approx(0.1 / 1024));
  CHECK_THROWS_AS(optim::step_decay(0.1, 0.5, 0), switchyard::usage_error);
}

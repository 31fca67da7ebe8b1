// Tests of optim/warmup.hpp: the ramp, the hand-over, and composition with cosine and decay.
#include "switchyard/optim/warmup.hpp"

#include <doctest/doctest.h>

#include "switchyard/core/error.hpp"
#include "switchyard/optim/constant.hpp"
#include "switchyard/optim/cosine.hpp"
#include "switchyard/optim/step_decay.hpp"

namespace optim = switchyard::optim;

TEST_CASE("warmup.then_cosine") {
  const optim::warmup schedule{4, optim::cosine{0.2, 10}};
  CHECK(schedule.lr(0) == doctest::Approx(0.05));   // 0.2 * 1 / 4
  CHECK(schedule.lr(1) == doctest::Approx(0.10));
  CHECK(schedule.lr(3) == doctest::Approx(0.20));   // ramp ends at cosine's start
  CHECK(schedule.lr(4) == doctest::Approx(0.20));   // cosine's step 0
  CHECK(schedule.lr(9) == doctest::Approx(0.10));   // cosine's step 5: halfway
  CHECK(schedule.lr(14) == doctest::Approx(0.0));
}

TEST_CASE("warmup.composes_with_any_schedule") {
  const optim::warmup decayed{2, optim::step_decay{1.0, 0.1, 3}};
  CHECK(decayed.lr(0) == doctest::Approx(0.5));
  CHECK(decayed.lr(4) == doctest::Approx(1.0));
  CHECK(decayed.lr(5) == doctest::Approx(0.1));
  const optim::warmup<optim::constant> flat{10, 0.3};
  CHECK(flat.lr(4) == doctest::Approx(0.15));
  CHECK(flat.lr(100) == 0.3);
  CHECK_THROWS_AS(optim::warmup(0, optim::constant{0.1}), switchyard::usage_error);
}

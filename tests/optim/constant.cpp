// Tests of optim/constant.hpp.
#include "switchyard/optim/constant.hpp"

#include <doctest/doctest.h>

namespace optim = switchyard::optim;

TEST_CASE("constant.same_rate_at_every_step") {
  constexpr optim::constant schedule = 0.25;  // converts from a number
  static_assert(schedule.lr(0) == 0.25);
  CHECK(schedule.lr(1'000'000'000'000) == 0.25);
}

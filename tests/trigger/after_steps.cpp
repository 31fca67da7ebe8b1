#include <switchyard/trigger/after_steps.hpp>

#include "records.hpp"

#include <doctest/doctest.h>

TEST_CASE("after_steps: fires at the end of the epoch in which the workers' steps reach N") {
  switchyard::trigger::after_steps t{250};
  CHECK(!t.fire(record(1, 1.0, 0.0, 100)));
  CHECK(!t.fire(record(2, 1.0, 0.0, 100)));
  CHECK(t.fire(record(3, 1.0, 0.0, 100)));  // 300 >= 250
  switchyard::trigger::after_steps<100> exact;
  CHECK(exact.fire(record(1, 1.0, 0.0, 100)));
}

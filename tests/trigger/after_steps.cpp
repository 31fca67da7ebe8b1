#include <switchyard/trigger/after_steps.hpp>

#include "records.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <type_traits>

TEST_CASE("after_steps: fires at the end of the epoch in which the workers' steps reach N") {
  switchyard::trigger::after_steps t{250};
  CHECK(!t.fire(record(1, 1.0, 0.0, 100)));
  CHECK(!t.fire(record(2, 1.0, 0.0, 100)));
  CHECK(t.fire(record(3, 1.0, 0.0, 100)));  // 300 >= 250
  switchyard::trigger::after_steps<100> exact;
  CHECK(exact.fire(record(1, 1.0, 0.0, 100)));
}

TEST_CASE("after_steps.fire_at: fires inside the epoch at the first step boundary where N is reached") {
  const switchyard::trigger::after_steps t{250};
  static_assert(switchyard::trigger::within_epoch<switchyard::trigger::after_steps<>>);
  CHECK(!t.fire_at({249}));
  CHECK(t.fire_at({250}));
  CHECK(t.fire_at({252}));
}

// A run-time count deduces the dynamic threshold (not after_steps<1>), a fixed one takes no value.
static_assert(std::is_same_v<decltype(switchyard::trigger::after_steps{250}),
                             switchyard::trigger::after_steps<switchyard::dynamic_threshold>>);
static_assert(!std::is_constructible_v<switchyard::trigger::after_steps<100>, std::size_t>);
static_assert(!std::is_default_constructible_v<switchyard::trigger::after_steps<>>);

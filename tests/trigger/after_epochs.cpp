#include <switchyard/trigger/after_epochs.hpp>

#include "records.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <type_traits>

TEST_CASE("after_epochs: fires at the end of epoch N, as a template argument or a value") {
  switchyard::trigger::after_epochs<3> fixed;
  switchyard::trigger::after_epochs chosen{2};
  CHECK(!fixed.fire(record(1)));
  CHECK(!fixed.fire(record(2)));
  CHECK(fixed.fire(record(3)));
  CHECK(!chosen.fire(record(1)));
  CHECK(chosen.fire(record(2)));
}

// The threshold is given one way or the other, and the type says which: a run-time value deduces
// the dynamic threshold (not after_epochs<1>, whose epoch would then lie), a fixed one takes no value.
namespace trigger = switchyard::trigger;
static_assert(std::is_same_v<decltype(trigger::after_epochs{3}), trigger::after_epochs<switchyard::dynamic_threshold>>);
static_assert(std::is_same_v<trigger::after_epochs<>, trigger::after_epochs<switchyard::dynamic_threshold>>);
static_assert(!std::is_constructible_v<trigger::after_epochs<3>, std::size_t>);
static_assert(!std::is_default_constructible_v<trigger::after_epochs<>>);
static_assert(std::is_default_constructible_v<trigger::after_epochs<3>>);

TEST_CASE("after_epochs: the threshold a value gives is the one that fires") {
  const trigger::after_epochs chosen{3};
  CHECK(chosen.value() == 3);
  CHECK(!chosen.fire(record(2)));
  CHECK(chosen.fire(record(3)));
}

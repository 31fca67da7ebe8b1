#include <switchyard/trigger/combinators.hpp>

#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/after_steps.hpp>
#include <switchyard/trigger/loss_plateau.hpp>

#include "records.hpp"

#include <doctest/doctest.h>

namespace trigger = switchyard::trigger;

TEST_CASE("any_of: the first trigger to fire wins, and every trigger sees every record") {
  trigger::any_of t{trigger::after_epochs{5}, trigger::after_steps{250}};
  CHECK(!t.fire(record(1)));
  CHECK(!t.fire(record(2)));
  CHECK(t.fire(record(3)));  // 300 steps
  CHECK(std::get<1>(t.triggers).taken == 300);
}

TEST_CASE("all_of: fires only when all fire on the same record") {
  trigger::all_of t{trigger::after_epochs{2}, trigger::after_steps{350}};
  CHECK(!t.fire(record(1)));
  CHECK(!t.fire(record(2)));  // epochs yes, 200 steps no
  CHECK(!t.fire(record(3)));  // 300
  CHECK(t.fire(record(4)));   // 400
}

TEST_CASE("any_of.fire_at: fires inside an epoch through the triggers that can") {
  trigger::any_of t{trigger::after_epochs{5}, trigger::after_steps{250}};
  static_assert(trigger::within_epoch<decltype(t)>);
  CHECK(!t.fire_at({249}));
  CHECK(t.fire_at({250}));
  // Made only of epoch triggers, it cannot fire inside an epoch.
  static_assert(!trigger::within_epoch<trigger::any_of<trigger::after_epochs<5>, trigger::loss_plateau>>);
}

TEST_CASE("all_of.fire_at: only when every part can fire inside an epoch, and all do") {
  trigger::all_of t{trigger::after_steps{100}, trigger::after_steps{250}};
  static_assert(trigger::within_epoch<decltype(t)>);
  CHECK(!t.fire_at({100}));
  CHECK(t.fire_at({250}));
  static_assert(!trigger::within_epoch<trigger::all_of<trigger::after_epochs<2>, trigger::after_steps<250>>>);
}

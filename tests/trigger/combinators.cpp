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

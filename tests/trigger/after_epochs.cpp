#include <switchyard/trigger/after_epochs.hpp>

#include "records.hpp"

#include <doctest/doctest.h>

TEST_CASE("after_epochs: fires at the end of epoch N, as a template argument or a value") {
  switchyard::trigger::after_epochs<3> fixed;
  switchyard::trigger::after_epochs chosen{2};
  CHECK(!fixed.fire(record(1)));
  CHECK(!fixed.fire(record(2)));
  CHECK(fixed.fire(record(3)));
  CHECK(!chosen.fire(record(1)));
  CHECK(chosen.fire(record(2)));
}

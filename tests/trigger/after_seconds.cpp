#include <switchyard/trigger/after_seconds.hpp>

#include "records.hpp"

#include <doctest/doctest.h>

TEST_CASE("after_seconds: fires at the first epoch that ends after the time") {
  switchyard::trigger::after_seconds t{10.0};
  CHECK(!t.fire(record(1, 1.0, 4.0)));
  CHECK(!t.fire(record(2, 1.0, 9.99)));
  CHECK(t.fire(record(3, 1.0, 10.5)));
}

#include <switchyard/trigger/loss_plateau.hpp>

#include "records.hpp"

#include <doctest/doctest.h>

TEST_CASE("loss_plateau: fires after `window` flat epochs in a row, a drop resets the count") {
  switchyard::trigger::loss_plateau t{0.05, 2, 0.5};
  CHECK(!t.fire(record(1, 1.0)));   // smoothed 1.0
  CHECK(!t.fire(record(2, 0.6)));   // smoothed 0.8: a 20% change
  CHECK(!t.fire(record(3, 0.78)));  // 0.79: 1.25%, flat 1
  CHECK(!t.fire(record(4, 0.5)));   // 0.645: 18%, the count resets
  CHECK(!t.fire(record(5, 0.64)));  // 0.6425: flat 1
  CHECK(t.fire(record(6, 0.64)));   // 0.64125: flat 2 -> fires
}

TEST_CASE("loss_plateau: a steadily falling loss never fires") {
  switchyard::trigger::loss_plateau t{0.01, 2};
  double loss = 2.0;
  for (std::size_t epoch = 1; epoch <= 30; ++epoch, loss *= 0.9) CHECK(!t.fire(record(epoch, loss)));
}

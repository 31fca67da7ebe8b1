#include <switchyard/trigger/trigger.hpp>

#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/after_seconds.hpp>
#include <switchyard/trigger/after_steps.hpp>
#include <switchyard/trigger/combinators.hpp>
#include <switchyard/trigger/loss_plateau.hpp>

#include "records.hpp"

#include <doctest/doctest.h>

namespace trigger = switchyard::trigger;

// A user trigger: fires once the test accuracy passes a bar.
struct accuracy_above {
  double bar = 0.8;
  bool fire(const switchyard::train::epoch_record& r) const { return r.test_accuracy > bar; }
};

struct not_a_trigger {
  void fire() {}
};

static_assert(trigger::trigger<trigger::after_epochs<3>> && trigger::trigger<trigger::after_steps<10>>);
static_assert(trigger::trigger<trigger::after_seconds> && trigger::trigger<trigger::loss_plateau>);
static_assert(trigger::trigger<trigger::any_of<trigger::after_epochs<3>, accuracy_above>>);
static_assert(trigger::trigger<accuracy_above> && !trigger::trigger<not_a_trigger>);

TEST_CASE("trigger.user: a user type that satisfies the concept decides on the shared record") {
  accuracy_above t{0.9};
  auto r = record(1);
  r.test_accuracy = 0.85;
  CHECK(!t.fire(r));
  r.test_accuracy = 0.91;
  CHECK(t.fire(r));
}

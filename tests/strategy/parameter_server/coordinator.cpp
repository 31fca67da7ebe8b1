// strategy/parameter_server/coordinator.hpp: which batch of the epoch server 0 hands out next,
// and the rule that stops the hand-out inside an epoch.
#include <switchyard/strategy/parameter_server/coordinator.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace sy = switchyard;
using sy::strategy::batch_coordinator;

namespace {

// Everything `c` hands out until it says there is nothing more.
std::vector<std::size_t> drain(batch_coordinator& c) {
  std::vector<std::size_t> handed;
  while (const std::optional<std::size_t> next = c.next()) handed.push_back(*next);
  return handed;
}

}  // namespace

TEST_CASE("ps.coordinator.hand_out: after the workers' first batches, each batch once, in order") {
  batch_coordinator c;
  c.begin_epoch(8, 3);
  CHECK(c.batches() == 8);
  CHECK(drain(c) == std::vector<std::size_t>{3, 4, 5, 6, 7});
  CHECK(c.next() == std::nullopt);  // and it stays empty
  CHECK(c.stopped_after() == std::nullopt);
  // The next epoch starts over.
  c.begin_epoch(5, 2);
  CHECK(drain(c) == std::vector<std::size_t>{2, 3, 4});
}

TEST_CASE("ps.coordinator.few_batches: fewer batches than workers leave nothing to hand out") {
  batch_coordinator c;
  c.begin_epoch(2, 3);
  CHECK(c.next() == std::nullopt);
  c.begin_epoch(0, 1);
  CHECK(c.next() == std::nullopt);
  CHECK(c.batches() == 0);
}

TEST_CASE("ps.coordinator.stop: the rule sees the batches handed out so far and stops the hand-out") {
  batch_coordinator c;
  std::vector<std::size_t> asked;
  c.stop_when([&asked](std::size_t handed_out) {
    asked.push_back(handed_out);
    return handed_out >= 5;
  });
  c.begin_epoch(10, 2);
  CHECK(drain(c) == std::vector<std::size_t>{2, 3, 4});
  CHECK(c.stopped_after() == std::optional<std::size_t>(5));
  CHECK(asked == std::vector<std::size_t>{2, 3, 4, 5});
  // Stopped: no more batches, and the rule is not asked again this epoch.
  CHECK(c.next() == std::nullopt);
  CHECK(asked.size() == 4);
  // The rule stays for the next epoch, where it is asked from the start again.
  c.begin_epoch(4, 2);
  CHECK(c.stopped_after() == std::nullopt);
  CHECK(drain(c) == std::vector<std::size_t>{2, 3});
  CHECK(c.stopped_after() == std::nullopt);  // the epoch ended before the rule held
}

TEST_CASE("ps.coordinator.stop: a rule that holds at once hands out nothing; an empty rule never stops") {
  batch_coordinator c;
  c.stop_when([](std::size_t) { return true; });
  c.begin_epoch(6, 2);
  CHECK(c.next() == std::nullopt);
  CHECK(c.stopped_after() == std::optional<std::size_t>(2));
  c.stop_when({});
  c.begin_epoch(6, 2);
  CHECK(drain(c) == std::vector<std::size_t>{2, 3, 4, 5});
  CHECK(c.stopped_after() == std::nullopt);
}

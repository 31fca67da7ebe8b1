// strategy/parameter_server/coordinator.hpp: which batch of the epoch server 0 hands out next,
// and the rule that stops the hand-out inside an epoch.
#include <switchyard/strategy/parameter_server/coordinator.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <thread>
#include <vector>

namespace sy = switchyard;
using sy::strategy::batch_coordinator;

namespace {

// Everything `c` hands out until it says there is nothing more.
std::vector<std::size_t> drain(batch_coordinator& c) {
  std::vector<std::size_t> handed;
  while (const std::optional<std::size_t> next = c.next(0)) handed.push_back(*next);
  return handed;
}

}  // namespace

TEST_CASE("ps.coordinator.hand_out: after the workers' first batches, each batch once, in order") {
  batch_coordinator c;
  c.begin_epoch(8, 3);
  CHECK(c.batches() == 8);
  CHECK(drain(c) == std::vector<std::size_t>{3, 4, 5, 6, 7});
  CHECK(c.next(0) == std::nullopt);  // and it stays empty
  CHECK(c.stopped_after() == std::nullopt);
  // The next epoch starts over.
  c.begin_epoch(5, 2);
  CHECK(drain(c) == std::vector<std::size_t>{2, 3, 4});
}

TEST_CASE("ps.coordinator.few_batches: fewer batches than workers leave nothing to hand out") {
  batch_coordinator c;
  c.begin_epoch(2, 3);
  CHECK(c.next(0) == std::nullopt);
  c.begin_epoch(0, 1);
  CHECK(c.next(0) == std::nullopt);
  CHECK(c.batches() == 0);
}

TEST_CASE("ps.coordinator.stop: the rule sees the batches handed out so far and stops the hand-out") {
  batch_coordinator c;
  std::vector<std::size_t> asked;
  c.stop_when({[&asked](const switchyard::trigger::progress& p) {
    asked.push_back(p.batches);
    CHECK_FALSE(p.sample);  // no samples asked for
    return p.batches >= 5;
  }});
  c.begin_epoch(10, 2);
  CHECK(drain(c) == std::vector<std::size_t>{2, 3, 4});
  CHECK(c.stopped_after() == std::optional<std::size_t>(5));
  CHECK(asked == std::vector<std::size_t>{2, 3, 4, 5});
  // Stopped: no more batches, and the rule is not asked again this epoch.
  CHECK(c.next(0) == std::nullopt);
  CHECK(asked.size() == 4);
  // The rule stays for the next epoch, where it is asked from the start again.
  c.begin_epoch(4, 2);
  CHECK(c.stopped_after() == std::nullopt);
  CHECK(drain(c) == std::vector<std::size_t>{2, 3});
  CHECK(c.stopped_after() == std::nullopt);  // the epoch ended before the rule held
}

TEST_CASE("ps.coordinator.stop: a rule that holds at once hands out nothing; an empty rule never stops") {
  batch_coordinator c;
  c.stop_when({[](const switchyard::trigger::progress&) { return true; }});
  c.begin_epoch(6, 2);
  CHECK(c.next(0) == std::nullopt);
  CHECK(c.stopped_after() == std::optional<std::size_t>(2));
  c.stop_when({});
  c.begin_epoch(6, 2);
  CHECK(drain(c) == std::vector<std::size_t>{2, 3, 4, 5});
  CHECK(c.stopped_after() == std::nullopt);
}

TEST_CASE("ps.coordinator.samples: every K requests per worker, the workers' times between their requests") {
  using namespace std::chrono_literals;
  batch_coordinator c;
  std::vector<std::optional<sy::trigger::step_sample>> samples;
  c.stop_when({[&samples](const sy::trigger::progress& p) {
                 samples.push_back(p.sample);
                 return false;
               },
               2});
  c.begin_epoch(100, 3);
  // Worker 2 asks once, then no more: its step is longer than the whole sampling window. Workers
  // 0 and 1 ask in turn, 2 ms apart.
  REQUIRE(c.next(2));
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(2ms);
    REQUIRE(c.next(static_cast<std::size_t>(i % 2)));
  }
  REQUIRE(samples.size() == 6);
  for (std::size_t i = 0; i < 5; ++i) CHECK_FALSE(samples[i]);
  REQUIRE(samples[5]);
  const sy::trigger::step_sample s = *samples[5];
  // The first request of each starts its clock. Worker 0 asked after 2, 6 and 10 ms (two steps of
  // 4 ms), worker 1 after 4 and 8 (one of 4 ms, and 2 ms since); worker 2 has waited 10 ms.
  CHECK(s.median_seconds >= 0.004);
  CHECK(s.slowest_seconds >= 0.010);
  CHECK(s.slowest_seconds > 1.5 * s.median_seconds);
  // The next sample covers only the requests after this one.
  for (int i = 0; i < 6; ++i) REQUIRE(c.next(static_cast<std::size_t>(i % 3)));
  REQUIRE(samples.size() == 12);
  CHECK(samples[11]);
  // A new epoch: workers that have not asked yet are left out of the sample.
  c.begin_epoch(100, 3);
  for (int i = 0; i < 6; ++i) REQUIRE(c.next(0));
  REQUIRE(samples.size() == 18);
  REQUIRE(samples[17]);
  CHECK(samples[17]->slowest_seconds == samples[17]->median_seconds);  // worker 0 alone
}

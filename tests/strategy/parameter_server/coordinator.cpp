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

TEST_CASE("ps.coordinator.blocks: a node's request takes a block of its workers' batches") {
  batch_coordinator c;
  // Nodes of 3, 1 and 2 workers: batches 0 to 5 are the workers' first.
  c.hand_out_blocks({3, 1, 2});
  c.begin_epoch(14, 3);
  CHECK(c.next(0) == 6);   // 6, 7, 8
  CHECK(c.next(1) == 9);   // 9
  CHECK(c.next(2) == 10);  // 10, 11
  CHECK(c.next(0) == 12);  // 12, 13: what is left
  CHECK(c.next(1) == std::nullopt);
  // Fewer batches than workers: nothing to hand out.
  c.begin_epoch(5, 3);
  CHECK(c.next(2) == std::nullopt);
  // Without blocks, one batch per request again.
  c.hand_out_blocks({});
  c.begin_epoch(5, 3);
  CHECK(drain(c) == std::vector<std::size_t>{3, 4});
}

TEST_CASE("ps.coordinator.few_batches: fewer batches than workers leave nothing to hand out") {
  batch_coordinator c;
  c.begin_epoch(2, 3);
  CHECK(c.next(0) == std::nullopt);
  c.begin_epoch(0, 1);
  CHECK(c.next(0) == std::nullopt);
  CHECK(c.batches() == 0);
}

TEST_CASE("ps.coordinator.ahead: workers of a pipelined server start with two batches each") {
  batch_coordinator c;
  c.begin_epoch(10, 3, 2);  // worker w holds w and w + 3
  CHECK(drain(c) == std::vector<std::size_t>{6, 7, 8, 9});
  c.begin_epoch(5, 3, 2);  // worker 2's second batch would be 5: there is none
  CHECK(c.next(1) == std::nullopt);
  // The rule is first asked for the batch after the workers' second ones.
  std::vector<std::size_t> asked;
  c.stop_when({[&asked](const switchyard::trigger::progress& p) {
    asked.push_back(p.batches);
    return p.batches >= 5;
  }});
  c.begin_epoch(10, 2, 2);
  CHECK(drain(c) == std::vector<std::size_t>{4});
  CHECK(c.stopped_after() == std::optional<std::size_t>(5));
  CHECK(asked == std::vector<std::size_t>{4, 5});
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

TEST_CASE("ps.coordinator.samples: every K requests per worker, the compute times the workers report") {
  using namespace std::chrono_literals;
  batch_coordinator c;
  std::vector<std::optional<sy::trigger::step_sample>> samples;
  c.stop_when({[&samples](const sy::trigger::progress& p) {
                 samples.push_back(p.sample);
                 return false;
               },
               2});
  c.begin_epoch(100, 3);
  // Every worker's first request reports nothing. Workers 0 and 1 then report steps of 10 and
  // 30 ms; worker 2 asks no more.
  REQUIRE(c.next(2));
  REQUIRE(c.next(0));
  REQUIRE(c.next(1));
  std::this_thread::sleep_for(20ms);
  REQUIRE(c.next(0, 0.010));
  REQUIRE(c.next(1, 0.030));
  REQUIRE(c.next(0, 0.010));
  REQUIRE(samples.size() == 6);
  for (std::size_t i = 0; i < 5; ++i) CHECK_FALSE(samples[i]);
  REQUIRE(samples[5]);
  // Worker 0: 10 ms, worker 1: 30 ms, worker 2: no report, so the 20 ms and more since it asked.
  // The lower median of three is the middle one (worker 2, unless the machine slept past 30 ms).
  CHECK(samples[5]->median_seconds >= 0.020);
  CHECK(samples[5]->median_seconds <= doctest::Approx(0.030));
  CHECK(samples[5]->slowest_seconds >= doctest::Approx(0.030));
  // The next sample covers only the reports after this one: all three report 10 ms, and the
  // time since a request does not count for a worker that reported.
  for (int i = 0; i < 6; ++i) REQUIRE(c.next(static_cast<std::size_t>(i % 3), 0.010));
  REQUIRE(samples.size() == 12);
  REQUIRE(samples[11]);
  CHECK(samples[11]->slowest_seconds == doctest::Approx(0.010));
  CHECK(samples[11]->median_seconds == doctest::Approx(0.010));
  // A worker that reported before but has not asked since the last sample counts with the longer
  // of its last report and the time since its request: worker 2 reported 10 ms, then waits 25.
  std::this_thread::sleep_for(25ms);
  for (int i = 0; i < 6; ++i) REQUIRE(c.next(static_cast<std::size_t>(i % 2), 0.005));
  REQUIRE(samples.size() == 18);
  REQUIRE(samples[17]);
  CHECK(samples[17]->median_seconds == doctest::Approx(0.005));
  CHECK(samples[17]->slowest_seconds >= 0.025);
  // A new epoch: workers that have not asked yet are left out of the sample.
  c.begin_epoch(100, 3);
  for (int i = 0; i < 6; ++i) REQUIRE(c.next(0, 0.004));
  REQUIRE(samples.size() == 24);
  REQUIRE(samples[23]);
  CHECK(samples[23]->slowest_seconds == samples[23]->median_seconds);  // worker 0 alone
}

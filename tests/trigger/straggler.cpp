#include <switchyard/trigger/straggler.hpp>

#include <switchyard/trigger/trigger.hpp>

#include "records.hpp"

#include <boost/archive/text_iarchive.hpp>
#include <boost/archive/text_oarchive.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <vector>

namespace sy = switchyard;
using sy::trigger::straggler_detected;
using sy::trigger::stragglers_gone;

static_assert(sy::trigger::trigger<straggler_detected> && sy::trigger::trigger<stragglers_gone>);
static_assert(sy::trigger::samples_steps<straggler_detected> && sy::trigger::samples_steps<stragglers_gone>);

namespace {

// An epoch whose median worker computes `median` seconds per step and whose slowest `ratio` times
// that.
sy::train::epoch_record timed(std::size_t epoch, double ratio, double median = 0.010) {
  sy::train::epoch_record r = record(epoch);
  r.median_step_compute_seconds = median;
  r.slowest_step_compute_seconds = ratio * median;
  return r;
}

// A step inside an epoch with a sample whose slowest worker takes `ratio` times the median's 10 ms.
sy::trigger::progress sampled_at(double ratio) { return {0, sy::trigger::step_sample{ratio * 0.010, 0.010}}; }

// The samples (counted from 1) at which `t` fires over `ratios`, with a step without a sample
// between every two.
template <class Trigger>
std::vector<std::size_t> sample_firings(Trigger t, const std::vector<double>& ratios) {
  std::vector<std::size_t> fired;
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    CHECK_FALSE(t.fire_at(sy::trigger::progress{i}));  // no sample: not an observation
    if (t.fire_at(sampled_at(ratios[i]))) fired.push_back(i + 1);
  }
  return fired;
}

// A trace of straggler ratios, one per epoch from epoch 1.
using trace = std::vector<double>;

// The epochs at which `t` fires over `ratios`, asked once per epoch.
template <class Trigger>
std::vector<std::size_t> firings(Trigger t, const trace& ratios) {
  std::vector<std::size_t> fired;
  for (std::size_t e = 0; e < ratios.size(); ++e) {
    if (t.fire(timed(e + 1, ratios[e]))) fired.push_back(e + 1);
  }
  return fired;
}

// A run that toggles between a synchronous and an asynchronous stage, as an alternating policy
// would: it starts synchronous, asks the trigger of the stage it is in after every epoch, and each
// stage starts with a fresh copy of its trigger. Returns the epochs after which it switched.
std::vector<std::size_t> toggles(const trace& ratios, straggler_detected to_async = {},
                                 stragglers_gone to_sync = {}) {
  std::vector<std::size_t> switched;
  bool synchronous = true;
  straggler_detected detect = to_async;
  stragglers_gone gone = to_sync;
  for (std::size_t e = 0; e < ratios.size(); ++e) {
    const auto r = timed(e + 1, ratios[e]);
    if (synchronous ? detect.fire(r) : gone.fire(r)) {
      switched.push_back(e + 1);
      synchronous = !synchronous;
      detect = to_async;
      gone = to_sync;
    }
  }
  return switched;
}

// Ratios spread around `centre` by up to `spread`, from a fixed linear congruential sequence.
trace noisy(std::size_t epochs, double centre, double spread, unsigned seed) {
  trace ratios;
  unsigned x = seed;
  for (std::size_t e = 0; e < epochs; ++e) {
    x = x * 1664525u + 1013904223u;
    ratios.push_back(centre + spread * (2.0 * static_cast<double>(x >> 8) / static_cast<double>(1u << 24) - 1.0));
  }
  return ratios;
}

}  // namespace

TEST_CASE("straggler_ratio: the slowest worker's compute per step over the median's; 1 without times") {
  CHECK(sy::trigger::straggler_ratio(timed(1, 3.0)) == doctest::Approx(3.0));
  CHECK(sy::trigger::straggler_ratio(timed(1, 1.0, 0.5)) == doctest::Approx(1.0));
  CHECK(sy::trigger::straggler_ratio(record(1)) == 1.0);
}

TEST_CASE("straggler triggers: steady workers") {
  const trace steady = noisy(20, 1.05, 0.05, 1);
  CHECK(firings(straggler_detected{}, steady).empty());
  // Nothing to wait for: the way back to the synchronous stage opens after the dwell.
  CHECK(firings(stragglers_gone{}, steady).front() == 2);
  CHECK(toggles(steady).empty());
}

TEST_CASE("straggler triggers: one persistent straggler") {
  const trace slow(20, 3.0);
  // The second slow epoch in a row, with the default window and dwell of 2.
  CHECK(firings(straggler_detected{}, slow).front() == 2);
  CHECK(firings(stragglers_gone{}, slow).empty());
  // Switches to the asynchronous stage once, and stays.
  CHECK(toggles(slow) == std::vector<std::size_t>{2});
}

TEST_CASE("straggler triggers: a transient straggler comes and goes") {
  trace ratios(5, 1.0);
  ratios.insert(ratios.end(), 6, 3.0);  // epochs 6 to 11
  ratios.insert(ratios.end(), 6, 1.0);  // epochs 12 to 17
  // To asynchronous after the straggler's second epoch, back after the second calm one.
  CHECK(toggles(ratios) == std::vector<std::size_t>{7, 13});
  // A longer window waits longer each way.
  CHECK(toggles(ratios, straggler_detected{.window = 3}, stragglers_gone{.window = 3}) ==
        std::vector<std::size_t>{8, 14});
  // A straggler shorter than the window never causes a switch.
  trace blip(5, 1.0);
  blip.push_back(3.0);
  blip.insert(blip.end(), 5, 1.0);
  CHECK(toggles(blip).empty());
}

TEST_CASE("straggler triggers: a ratio that wavers around a threshold does not flap") {
  // Around the detection threshold: it may switch to the asynchronous stage, but never back, since
  // the way back needs ratios under 1.2.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    const auto switched = toggles(noisy(40, 1.5, 0.2, seed));
    CHECK(switched.size() <= 1);
  }
  // Around the way-back threshold, after a real straggler: back once at most, never out again,
  // since leaving needs ratios above 1.5.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    trace ratios(4, 3.0);
    const trace wavering = noisy(40, 1.2, 0.15, seed);
    ratios.insert(ratios.end(), wavering.begin(), wavering.end());
    const auto switched = toggles(ratios);
    REQUIRE(!switched.empty());
    CHECK(switched.front() == 2);
    CHECK(switched.size() <= 2);
  }
  // Without the band (both thresholds at 1.5) the same noise does flap: the band is what holds it.
  std::size_t most = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    most = std::max(most, toggles(noisy(40, 1.5, 0.2, seed), straggler_detected{.ratio = 1.5, .window = 1, .dwell = 1},
                                  stragglers_gone{.ratio = 1.5, .window = 1, .dwell = 1})
                              .size());
  }
  CHECK(most > 4);
}

TEST_CASE("straggler triggers: every worker slow alike is no straggler") {
  straggler_detected detect;
  for (std::size_t e = 1; e <= 12; ++e) {
    // The whole cluster slows down 3x after epoch 4: the median and the slowest together.
    const double median = e <= 4 ? 0.010 : 0.030;
    CHECK_FALSE(detect.fire(timed(e, 1.05, median)));
  }
}

TEST_CASE("straggler triggers: the dwell holds a stage for its first epochs") {
  const trace slow(10, 3.0);
  CHECK(firings(straggler_detected{.window = 1, .dwell = 4}, slow).front() == 4);
  CHECK(firings(straggler_detected{.window = 1, .dwell = 1}, slow).front() == 1);
  CHECK(firings(stragglers_gone{.window = 1, .dwell = 5}, trace(10, 1.0)).front() == 5);
}

TEST_CASE("straggler triggers: a bad ratio or window is refused with what was given") {
  straggler_detected below{.ratio = 0.9};
  CHECK_THROWS_WITH_AS(below.fire(timed(1, 1.0)),
                       doctest::Contains("straggler_detected needs a ratio >= 1 (the slowest worker's time per "
                                         "step over the median's), a window of at least 1 and every at most 1000000 "
                                         "steps, got ratio 0.9, window 2 and every 0"),
                       sy::usage_error);
  stragglers_gone empty{.window = 0};
  CHECK_THROWS_WITH_AS(empty.fire(timed(1, 1.0)), doctest::Contains("stragglers_gone needs a ratio >= 1"),
                       sy::usage_error);
  // Sampling inside epochs: refused at the first sample.
  straggler_detected sampled{.ratio = 0.5, .every = 10};
  CHECK_THROWS_WITH_AS(sampled.fire_at(sampled_at(1.0)), doctest::Contains("got ratio 0.5"), sy::usage_error);
  // validate() says the same before any observation, as switch_to and alternate ask on every rank.
  CHECK_THROWS_WITH_AS(sampled.validate(), doctest::Contains("got ratio 0.5"), sy::usage_error);
  CHECK_THROWS_WITH_AS(stragglers_gone{.every = 2000000}.validate(), doctest::Contains("every 2000000"),
                       sy::usage_error);
  CHECK_NOTHROW(stragglers_gone{.every = 10}.validate());
}

TEST_CASE("straggler triggers: a checkpoint keeps the run of epochs") {
  straggler_detected before{.window = 3};
  CHECK_FALSE(before.fire(timed(1, 3.0)));
  CHECK_FALSE(before.fire(timed(2, 3.0)));
  std::stringstream stream;
  {
    boost::archive::text_oarchive out(stream);
    out << before;
  }
  straggler_detected after{.window = 3};
  {
    boost::archive::text_iarchive in(stream);
    in >> after;
  }
  CHECK(after.state.streak == 2);
  CHECK(after.fire(timed(3, 3.0)));
}

TEST_CASE("straggler triggers: with every = K, samples inside the epoch are the observations, not records") {
  // Steady, then a straggler for 4 samples, then steady again.
  const std::vector<double> ratios{1.0, 1.1, 3.0, 3.0, 3.0, 3.0, 1.0, 1.0, 1.0};
  CHECK(sample_firings(straggler_detected{.window = 2, .dwell = 2, .every = 5}, ratios) ==
        std::vector<std::size_t>{4, 5, 6});
  CHECK(sample_firings(stragglers_gone{.window = 2, .dwell = 2, .every = 5}, ratios) ==
        std::vector<std::size_t>{2, 8, 9});
  // Records do not count in sampling mode, and samples do not in per-epoch mode.
  straggler_detected sampling{.window = 1, .dwell = 1, .every = 5};
  CHECK_FALSE(sampling.fire(timed(1, 5.0)));
  CHECK(sampling.state.seen == 0);
  CHECK(sampling.sample_every() == 5);
  straggler_detected per_epoch{.window = 1, .dwell = 1};
  CHECK_FALSE(per_epoch.fire_at(sampled_at(5.0)));
  CHECK(per_epoch.sample_every() == 0);
  CHECK(per_epoch.fire(timed(1, 5.0)));
}

TEST_CASE("straggler triggers: the reason names the ratio, the threshold and the run of observations") {
  straggler_detected detect{.window = 2, .dwell = 1, .every = 5};
  CHECK_FALSE(detect.fire_at(sampled_at(2.5)));
  CHECK(detect.fire_at(sampled_at(2.5)));
  CHECK(detect.reason() == "straggler ratio 2.50 > 1.5 for 2 samples");
  stragglers_gone calm{.window = 1, .dwell = 1};
  CHECK(calm.fire(timed(1, 1.0)));
  CHECK(calm.reason() == "straggler ratio 1.00 < 1.2 for 1 epoch");
}

TEST_CASE("straggler triggers: min_wait asks that the straggler also cost the synchronous stage that share") {
  // Samples with a step time: the straggler computes `ratio` x 10 ms, and a step lasts `step`.
  const auto sample = [](double ratio, double step) {
    return sy::trigger::progress{0, sy::trigger::step_sample{ratio * 0.010, 0.010, step}};
  };
  // Ratio 2.4 in both, but communication-bound (a 140 ms step: the others wait 10%) or
  // compute-bound (a 30 ms step: they wait 47%).
  straggler_detected costly{.window = 2, .dwell = 1, .every = 5, .min_wait = 0.25};
  for (int i = 0; i < 10; ++i) CHECK_FALSE(costly.fire_at(sample(2.4, 0.140)));
  CHECK_FALSE(costly.fire_at(sample(2.4, 0.030)));
  CHECK(costly.fire_at(sample(2.4, 0.030)));
  CHECK(costly.reason() == "straggler ratio 2.40 > 1.5 for 2 samples, the others waiting 47% >= 25% of each step");
  // Without min_wait the ratio alone decides, and the reason says nothing of waiting.
  straggler_detected any{.window = 2, .dwell = 1, .every = 5};
  CHECK_FALSE(any.fire_at(sample(2.4, 0.140)));
  CHECK(any.fire_at(sample(2.4, 0.140)));
  CHECK(any.reason() == "straggler ratio 2.40 > 1.5 for 2 samples");
  // A sample without a step time (an asynchronous stage's) is judged by its ratio alone.
  straggler_detected async{.window = 1, .dwell = 1, .every = 5, .min_wait = 0.25};
  CHECK(async.fire_at(sampled_at(2.4)));
  // Per epoch: the wait share of a record is the mean worker's exchange beyond the least one's
  // over its training time, here (3 - 1) / (5 + 3) = 25%.
  sy::train::epoch_record r = timed(1, 3.0);
  r.compute_seconds = 5.0;
  r.exchange_seconds = 3.0;
  r.least_exchange_seconds = 1.0;
  CHECK(sy::trigger::straggler_wait_share(r) == doctest::Approx(0.25));
  CHECK(straggler_detected{.window = 1, .dwell = 1, .min_wait = 0.25}.fire(r));
  CHECK_FALSE(straggler_detected{.window = 1, .dwell = 1, .min_wait = 0.3}.fire(r));
  CHECK(sy::trigger::straggler_wait_share(record(1)) == 0.0);  // no times
  // min_wait is a share of a step.
  CHECK_THROWS_WITH_AS(straggler_detected{.min_wait = 1.0}.validate(),
                       doctest::Contains("straggler_detected needs min_wait in [0, 1)"), sy::usage_error);
  CHECK_THROWS_WITH_AS(straggler_detected{.min_wait = -0.1}.fire(r), doctest::Contains("got -0.1"), sy::usage_error);
}

TEST_CASE("trigger.summarize_steps: the slowest and the (lower) median of the workers' times") {
  std::vector<double> odd{0.3, 0.1, 0.2};
  const sy::trigger::step_sample a = sy::trigger::summarize_steps(odd);
  CHECK(a.slowest_seconds == 0.3);
  CHECK(a.median_seconds == 0.2);
  std::vector<double> even{0.4, 0.1, 0.9, 0.2};
  const sy::trigger::step_sample b = sy::trigger::summarize_steps(even);
  CHECK(b.slowest_seconds == 0.9);
  CHECK(b.median_seconds == 0.2);  // of two workers, one slow: the fast one is the yardstick
  std::vector<double> two{0.05, 0.01};
  CHECK(sy::trigger::straggler_ratio(sy::trigger::summarize_steps(two)) == doctest::Approx(5.0));
  std::vector<double> none;
  CHECK(sy::trigger::summarize_steps(none).median_seconds == 0.0);
  CHECK(sy::trigger::straggler_ratio(sy::trigger::step_sample{}) == 1.0);
}

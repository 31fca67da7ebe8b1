#include <switchyard/strategy/alternate.hpp>

#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/adam.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/after_steps.hpp>
#include <switchyard/trigger/straggler.hpp>

#include "../train/fixtures.hpp"
#include "../train/paced_mlp.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sy = switchyard;
namespace strategy = sy::strategy;
namespace trigger = sy::trigger;

using ar = strategy::all_reduce<>;
using ps = strategy::parameter_server<>;
using adaptive = strategy::alternate<ar, ps, trigger::straggler_detected, trigger::stragglers_gone>;

static_assert(strategy::policy<adaptive, sy::nn::mlp<>, sy::optim::sgd<>, sy::transport::inproc>);

namespace {

struct outcome {
  std::vector<std::string> stages;
  std::vector<strategy::alternation> switches;
  std::vector<float> parameters;
};

// When rank 2 lags: given the epoch about to train and the passes it has made so far.
using lag_schedule = std::function<bool(std::size_t epoch, std::size_t passes)>;

// Trains over 4 in-process ranks for `epochs` epochs of 60 batches; rank 2 computes `slow` a pass
// while `lags` says so, and `normal` otherwise, as every other rank does.
template <class Policy>
std::vector<outcome> train_paced(const Policy& prototype, std::size_t epochs, const lag_schedule& lags,
                                 std::chrono::milliseconds normal, std::chrono::milliseconds slow, bool checked) {
  const auto data = fixtures::quadrants(480, 7);
  sy::transport::inproc_options world;
  world.check_collectives = checked;
  return sy::transport::run_inproc(
      4,
      [&](sy::transport::inproc& t) {
        fixtures::paced_mlp model{normal, fixtures::pacing::at_least};
        sy::optim::sgd optimizer{model.parameters().size(), 0.05};
        sy::train::trainer_options options;
        options.epochs = epochs;
        options.batch_size = 8;
        sy::train::trainer trainer{model, optimizer, prototype, options};
        std::size_t epoch = 1;
        std::size_t passes = 0;
        const auto pace = [&] { model.delay = t.rank() == 2 && lags(epoch, passes) ? slow : normal; };
        pace();
        trainer.on_step([&](const sy::train::step_record&) {
          ++passes;
          pace();
        });
        trainer.on_epoch([&](const sy::train::epoch_record& e) {
          epoch = e.epoch + 1;
          pace();
        });
        outcome result;
        for (const auto& e : trainer.fit(t, data, *data).epochs) result.stages.push_back(e.stage);
        result.switches = trainer.strategy().switches();
        result.parameters.assign(model.parameters().begin(), model.parameters().end());
        return result;
      },
      world);
}

// Rank 2 computes 100 ms a pass during the epochs [slow_from, slow_to] and 10 ms otherwise: 10x, so
// that the ratio stays far above the trigger's 2.5 when a loaded machine (ThreadSanitizer, tests
// side by side) stretches every rank's passes (at 15 ms one CI run saw no switch at all). The
// normal pace is a floor well above a pass's own time under ThreadSanitizer: at 3 ms, one CI run's
// workers still differed by a ratio of 1.5 or more in the first fast epoch under the server, and
// the run came back to all-reduce an epoch late.
template <class Policy>
std::vector<outcome> train(const Policy& prototype, std::size_t epochs, std::size_t slow_from, std::size_t slow_to,
                           bool checked = false) {
  using std::chrono::milliseconds;
  return train_paced(
      prototype, epochs, [=](std::size_t epoch, std::size_t) { return epoch >= slow_from && epoch <= slow_to; },
      milliseconds(10), milliseconds(100), checked);
}

adaptive straggler_aware() {
  return adaptive{ar{}, ps{1}, trigger::straggler_detected{.ratio = 2.5}, trigger::stragglers_gone{.ratio = 1.5}};
}

}  // namespace

TEST_CASE("alternate.straggler: to the parameter server when a straggler comes, back to all-reduce when it goes" *
          doctest::timeout(180)) {
  // Rank 2 lags in epochs 3 to 5. With windows and dwells of 2: the second slow epoch (4) sends the
  // run to the server; epoch 5 is still slow, 6 and 7 are not, so it comes back after epoch 7.
  // Collectives are checked: replicas are verified identical when all-reduce starts again.
  const auto runs = train(straggler_aware(), 8, 3, 5, true);
  for (const outcome& r : runs) {
    CHECK(r.stages == std::vector<std::string>{"allreduce", "allreduce", "allreduce", "allreduce", "ps", "ps", "ps",
                                               "allreduce"});
    REQUIRE(r.switches.size() == 2);
    CHECK(r.switches[0].after_epoch == 4);
    CHECK(r.switches[0].to == "ps");
    CHECK(r.switches[1].after_epoch == 7);
    CHECK(r.switches[1].to == "allreduce");
    // Every rank switched at the same epochs and ends, under all-reduce, with the same bits.
    CHECK(r.parameters == runs[0].parameters);
  }
}

TEST_CASE("alternate.steady: without a straggler it never leaves all-reduce" * doctest::timeout(180)) {
  for (const outcome& r : train(straggler_aware(), 5, 0, 0)) {
    CHECK(r.stages == std::vector<std::string>(5, "allreduce"));
    CHECK(r.switches.empty());
  }
}

TEST_CASE("alternate.persistent: a straggler that stays keeps the parameter server after one switch" *
          doctest::timeout(180)) {
  for (const outcome& r : train(straggler_aware(), 5, 1, 5)) {
    CHECK(r.stages == std::vector<std::string>{"allreduce", "allreduce", "ps", "ps", "ps"});
    CHECK(r.switches.size() == 1);
  }
}

TEST_CASE("alternate.triggers: each stage starts with a fresh copy of its trigger") {
  // after_epochs<1> leaves all-reduce after any of its epochs; the server is left after two of
  // its own, counted afresh each time: allreduce, ps, ps, allreduce, ps, ps.
  using toggling = strategy::alternate<ar, strategy::parameter_server<strategy::consistency::sync>,
                                       trigger::after_epochs<1>, trigger::stragglers_gone>;
  const toggling prototype{{}, strategy::parameter_server<strategy::consistency::sync>{1}, {},
                           trigger::stragglers_gone{.ratio = 1e9, .window = 1, .dwell = 2}};
  CHECK_FALSE(prototype.in_second());
  const auto data = fixtures::quadrants(480, 7);
  const auto runs = sy::transport::run_inproc(3, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::train::trainer_options options;
    options.epochs = 6;
    options.batch_size = 8;
    sy::train::trainer trainer{model, optimizer, prototype, options};
    std::vector<std::string> stages;
    for (const auto& e : trainer.fit(t, data, *data).epochs) stages.push_back(e.stage);
    // The server's second epoch was the run's last: the trigger still fired, back to all-reduce.
    const auto& switches = trainer.strategy().switches();
    REQUIRE(switches.size() == 4);
    CHECK(switches[0].after_epoch == 1);
    CHECK(switches[1].after_epoch == 3);
    CHECK(switches[2].after_epoch == 4);
    CHECK(switches[3].after_epoch == 6);
    CHECK_FALSE(trainer.strategy().in_second());
    return stages;
  });
  for (const auto& stages : runs) {
    CHECK(stages == std::vector<std::string>{"allreduce", "ps", "ps", "allreduce", "ps", "ps"});
  }
}

namespace {

// Which triggers of type `never_leaves` are alive, and how often one was asked after its end.
struct trigger_lives {
  std::mutex mutex;
  std::set<const void*> alive;
  int asked_after_end = 0;
};
trigger_lives& lives() {
  static trigger_lives l;
  return l;
}

// A step trigger that never fires and counts the times it is asked after its destructor ran.
struct never_leaves {
  never_leaves() { enter(); }
  never_leaves(const never_leaves&) { enter(); }
  never_leaves& operator=(const never_leaves&) = default;
  ~never_leaves() {
    std::lock_guard lock(lives().mutex);
    lives().alive.erase(this);
  }
  bool fire(const sy::train::epoch_record&) const { return false; }
  bool fire_at(const trigger::progress&) const {
    std::lock_guard lock(lives().mutex);
    if (lives().alive.count(this) == 0) ++lives().asked_after_end;
    return false;
  }

 private:
  void enter() {
    std::lock_guard lock(lives().mutex);
    lives().alive.insert(this);
  }
};

// All-reduce that takes its time to be destroyed, as a stage that owns much might.
struct slow_to_end : ar {
  ~slow_to_end() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }
};

}  // namespace

TEST_CASE("alternate.teardown: a co-located server's stop rule never asks a trigger that has ended" *
          doctest::timeout(120)) {
  // Rank 0's worker throws; while its alternate is destroyed, its serving thread still answers the
  // other workers and asks the stop rule, which holds the active copy of the trigger: the stages
  // (and their threads) must end before the triggers.
  using toggling = strategy::alternate<ps, slow_to_end, never_leaves, trigger::after_epochs<1>>;
  const toggling prototype{ps{strategy::colocated}, slow_to_end{}, never_leaves{}, trigger::after_epochs<1>{}};
  const auto data = fixtures::quadrants(480, 7);
  CHECK_THROWS_WITH_AS(sy::transport::run_inproc(3,
                                                 [&](sy::transport::inproc& t) {
                                                   sy::nn::mlp model{11, {8, 8, 1}, 4};
                                                   sy::optim::sgd optimizer{model.parameters().size(), 0.05};
                                                   sy::train::trainer_options options;
                                                   options.epochs = 3;
                                                   options.batch_size = 4;
                                                   sy::train::trainer trainer{model, optimizer, prototype, options};
                                                   trainer.on_step([&](const sy::train::step_record& s) {
                                                     if (t.rank() == 0 && s.step == 3) {
                                                       throw std::runtime_error("rank 0's worker failed");
                                                     }
                                                   });
                                                   trainer.fit(t, data, *data);
                                                 }),
                       "rank 0's worker failed", std::runtime_error);
  std::lock_guard lock(lives().mutex);
  CHECK(lives().asked_after_end == 0);
}

TEST_CASE("alternate.rescale_for_batch: the learning rate goes with the batch to the server and back again, under "
          "either rule") {
  // 4 ranks, one of them the server's: all-reduce's update averages 4 batches, the server's one.
  using rule = strategy::switch_options::batch_rule;
  using toggling = strategy::alternate<ar, ps, trigger::after_epochs<1>, trigger::after_epochs<1>>;
  const auto data = fixtures::quadrants(480, 7);
  for (const auto& rule_and_factor : {std::pair{rule::linear, 0.25}, std::pair{rule::square_root, 0.5}}) {
    const double rate_factor = rule_and_factor.second;
    strategy::switch_options switching;
    switching.rescale_for_batch = true;
    switching.learning_rate_rule = rule_and_factor.first;
    const toggling prototype{{}, ps{1}, {}, {}, switching};
    // Ending in the server's stage (3 epochs: switches after 1, 2 and 3) and in all-reduce's (4).
    for (std::size_t epochs : {3u, 4u}) {
      const auto rates = sy::transport::run_inproc(4, [&](sy::transport::inproc& t) {
        sy::nn::mlp model{11, {8, 8, 1}, 4};
        sy::optim::adam optimizer{model.parameters().size(), 0.01};
        sy::train::trainer_options options;
        options.epochs = epochs;
        options.batch_size = 8;
        sy::train::trainer trainer{model, optimizer, prototype, options};
        trainer.fit(t, data, *data);
        CHECK(trainer.strategy().switches().size() == epochs);
        return optimizer.learning_rate();
      });
      const double expected = epochs % 2 == 1 ? 0.01 * rate_factor : 0.01;
      for (double rate : rates) {
        INFO("epochs ", epochs, ", the rate's factor ", rate_factor);
        CHECK(rate == doctest::Approx(expected).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("alternate.within_epoch: step triggers switch inside epochs, both ways, at the same batch on every rank") {
  // 3 ranks, 60 batches an epoch: all-reduce (3 workers) for 24 batches, then the parameter
  // server (2 workers, 1 server) for 30, then all-reduce again, and so on, each stage counting its
  // batches from its start across epochs. Collectives are checked: every return to all-reduce
  // verifies identical replicas.
  using toggling = strategy::alternate<ar, ps, trigger::after_steps<>, trigger::after_steps<>>;
  const toggling prototype{ar{}, ps{1}, trigger::after_steps{24}, trigger::after_steps{30}};
  const auto data = fixtures::quadrants(480, 7);
  sy::transport::inproc_options world;
  world.check_collectives = true;
  const auto runs = sy::transport::run_inproc(
      3,
      [&](sy::transport::inproc& t) {
        sy::nn::mlp model{11, {8, 8, 1}, 4};
        sy::optim::sgd optimizer{model.parameters().size(), 0.05};
        sy::train::trainer_options options;
        options.epochs = 3;
        options.batch_size = 8;
        sy::train::trainer trainer{model, optimizer, prototype, options};
        outcome result;
        std::size_t steps = 0;
        for (const auto& e : trainer.fit(t, data, *data).epochs) {
          result.stages.push_back(e.stage);
          steps += e.steps;
        }
        CHECK(steps == 3 * 60);  // every batch of every epoch trained once
        // The server's figures add up over its three periods of 30 batches.
        if (t.rank() == 2) CHECK(trainer.strategy().second().statistics().updates == 90);
        result.switches = trainer.strategy().switches();
        result.parameters.assign(model.parameters().begin(), model.parameters().end());
        return result;
      },
      world);
  for (const outcome& r : runs) {
    CHECK(r.stages == std::vector<std::string>(3, "allreduce>ps>allreduce"));
    // Epoch 1: 24 + 30, 6 left; epoch 2: 18 more to 24, then 30, 12 left; epoch 3: 12, 30, 18.
    const std::vector<std::pair<std::size_t, std::size_t>> expected{{0, 24}, {0, 54}, {1, 18}, {1, 48}, {2, 12}, {2, 42}};
    REQUIRE(r.switches.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      CAPTURE(i);
      CHECK(r.switches[i].after_epoch == expected[i].first);
      CHECK(r.switches[i].at_batch == expected[i].second);
      CHECK(r.switches[i].to == (i % 2 == 0 ? "ps" : "allreduce"));
    }
    CHECK(r.parameters == runs[0].parameters);
  }
}

namespace {

// Rank 2's passes last 240 ms from its pass `slow_from` (counted from 0) to the end of epoch
// `slow_through`, every other pass 24 ms (at least, compute included); checked collectives. The
// lag ends at an epoch, not a pass: under the server the straggler trains only 2 to 3 of each
// epoch's 60 batches. 10x, because what a sample times also holds the
// work between two passes: under AddressSanitizer at -O0, with 4 rank threads on 2 cores, that
// added 8 to 20 ms to every worker's figure, and at 12 against 60 ms a sample's ratio fell to 2.3
// (one CI run saw no switch at all). The 24 ms floor keeps that work small beside a pass: at 12 ms,
// one CI run under ThreadSanitizer (pipelined, co-located, beside another test) never saw the
// workers within 1.5 of each other again and stayed under the server.
template <class Policy>
std::vector<outcome> train_by_steps(const Policy& prototype, std::size_t epochs, std::size_t slow_from,
                                    std::size_t slow_through) {
  using std::chrono::milliseconds;
  return train_paced(
      prototype, epochs,
      [=](std::size_t epoch, std::size_t passes) { return passes >= slow_from && epoch <= slow_through; },
      milliseconds(24), milliseconds(240), true);
}

}  // namespace

namespace {

// Samples every 3 steps, windows and dwells of 3 samples; rank 2 lags 10x from its 11th pass (in
// epoch 1, of 15 steps under all-reduce) to the end of epoch 3. The switch to the server comes
// three samples after the lag starts (early in epoch 2), and the one back a few after it ends,
// each inside an epoch (or at its end), on every rank after the same batch and with the same
// reason; the run ends under all-reduce with identical replicas.
template <class Server>
void check_sampled(const Server& server) {
  using toggling = strategy::alternate<ar, Server, trigger::straggler_detected, trigger::stragglers_gone>;
  const toggling sampled{ar{}, server, trigger::straggler_detected{.ratio = 2.5, .window = 3, .dwell = 3, .every = 3},
                         trigger::stragglers_gone{.ratio = 1.5, .window = 3, .dwell = 3, .every = 3}};
  const auto runs = train_by_steps(sampled, 6, 10, 3);
  for (const outcome& r : runs) {
    std::string seen;
    for (const auto& s : r.switches) {
      seen += "after epoch " + std::to_string(s.after_epoch) + " at batch " + std::to_string(s.at_batch.value_or(0)) +
              " to " + s.to + ": " + s.reason + "; ";
    }
    INFO(seen);
    REQUIRE(r.switches.size() == 2);
    CHECK(r.switches[0].to == "ps");
    CHECK(r.switches[1].to == "allreduce");
    CHECK(r.switches[0].reason.find("straggler ratio") == 0);
    CHECK(r.switches[0].reason.find("> 2.5 for 3 samples") != std::string::npos);
    CHECK(r.switches[1].reason.find("< 1.5 for 3 samples") != std::string::npos);
    // Two samples of the lag in epoch 1, the third in epoch 2: the switch comes inside epoch 2.
    CHECK(r.switches[0].after_epoch == 1);
    CHECK(r.stages[1].find("allreduce>ps") == 0);
    CHECK(r.stages.back().ends_with("allreduce"));
    for (std::size_t i = 0; i < r.switches.size(); ++i) {
      CHECK(r.switches[i].reason == runs[0].switches[i].reason);
      CHECK(r.switches[i].after_epoch == runs[0].switches[i].after_epoch);
      CHECK(r.switches[i].at_batch == runs[0].switches[i].at_batch);
    }
    CHECK(r.stages == runs[0].stages);
    CHECK(r.parameters == runs[0].parameters);
  }
}

}  // namespace

TEST_CASE("alternate.sampled: a straggler seen every few steps switches inside the epoch, and back when it goes" *
          doctest::timeout(240)) {
  check_sampled(ps{1});
}

TEST_CASE("alternate.sampled.colocated: the same with co-located servers, rank 0's serving thread taking the samples" *
          doctest::timeout(240)) {
  check_sampled(ps{strategy::colocated});
}

TEST_CASE("alternate.sampled.backups: the same with backup-worker rounds on co-located servers, which drop the "
          "straggler's late pushes" * doctest::timeout(240)) {
  check_sampled(strategy::parameter_server(strategy::colocated, strategy::consistency::backups{1}));
}

TEST_CASE("alternate.sampled.pipelined: the same with pipelined workers, whose compute reports ride on their "
          "posted exchanges" * doctest::timeout(240)) {
  for (const ps& server : {ps{1, {}, sy::compression::format::none, strategy::pipelining::one_ahead},
                           ps{strategy::colocated, {}, sy::compression::format::none, strategy::pipelining::one_ahead}}) {
    CAPTURE(server.colocated());
    check_sampled(server);
  }
}

TEST_CASE("alternate.sampled_min_wait: all-reduce is left only when the straggler costs it that share of a step" *
          doctest::timeout(240)) {
  // Rank 2 lags 10x from its 11th pass to the end: the others wait for it about 216 of every 240 ms
  // or so, some 75 to 90% of each step (the samples measure the whole step, so a min_wait above
  // that share would keep all-reduce, as it should where communication dominates).
  const auto with_min_wait = [](double share) {
    return adaptive{ar{}, ps{1},
                    trigger::straggler_detected{.ratio = 2.5, .window = 3, .dwell = 3, .every = 3, .min_wait = share},
                    trigger::stragglers_gone{.ratio = 1.5, .window = 3, .dwell = 3, .every = 3}};
  };
  // Three epochs: 35 lagging steps, about 11 samples, several times the window and the dwell.
  for (const outcome& r : train_by_steps(with_min_wait(0.95), 3, 10, 3)) {
    CHECK(r.switches.empty());
    CHECK(r.stages == std::vector<std::string>(3, "allreduce"));
  }
  for (const outcome& r : train_by_steps(with_min_wait(0.4), 3, 10, 3)) {
    REQUIRE(r.switches.size() == 1);
    CHECK(r.switches[0].to == "ps");
    CHECK(r.switches[0].reason.find("> 2.5 for 3 samples, the others waiting ") != std::string::npos);
    CHECK(r.switches[0].reason.ends_with(">= 40% of each step"));
  }
}

TEST_CASE("alternate.sampled_busy_server: a straggler behind a slow server is still seen, by its compute time" *
          doctest::timeout(240)) {
  // Starts under the parameter server; rank 2 computes 30 ms a pass, the others 6 ms, all run long.
  // The server, rank 3, waits 10 ms before each of its messages (four per push), so every worker
  // waits about 120 ms for each reply and the workers' requests come at about the same rate: timed
  // by their requests, the straggler would look gone within the first epoch. By the compute times
  // the workers report with their pushes, the ratio stays near 5 and the run stays with the server.
  using namespace std::chrono_literals;
  using ps_first = strategy::alternate<ps, ar, trigger::stragglers_gone, trigger::straggler_detected>;
  const ps_first prototype{ps{1}, ar{}, trigger::stragglers_gone{.ratio = 1.5, .window = 3, .dwell = 1, .every = 2},
                           trigger::straggler_detected{.ratio = 2.5}};
  const auto data = fixtures::quadrants(240, 7);
  const auto runs = sy::transport::run_inproc(4, [&](sy::transport::inproc& t) {
    sy::transport::faulty f(t, {.slow_rank = 3, .slow_delay = 10ms});
    fixtures::paced_mlp model{t.rank() == 2 ? 30ms : 6ms, fixtures::pacing::at_least};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::train::trainer_options options;
    options.epochs = 1;
    options.batch_size = 8;
    sy::train::trainer trainer{model, optimizer, prototype, options};
    outcome result;
    for (const auto& e : trainer.fit(f, data, *data).epochs) result.stages.push_back(e.stage);
    result.switches = trainer.strategy().switches();
    return result;
  });
  for (const outcome& r : runs) {
    const std::string reason = r.switches.empty() ? std::string{} : r.switches[0].reason;
    INFO(reason);
    CHECK(r.switches.empty());
    CHECK(r.stages == std::vector<std::string>{"ps"});
  }
}

TEST_CASE("alternate.sampled_steady: sampling without a straggler never leaves all-reduce" * doctest::timeout(180)) {
  const adaptive sampled{ar{}, ps{1}, trigger::straggler_detected{.ratio = 2.5, .every = 3},
                         trigger::stragglers_gone{.ratio = 1.5, .every = 3}};
  for (const outcome& r : train_by_steps(sampled, 3, 0, 0)) {
    CHECK(r.stages == std::vector<std::string>(3, "allreduce"));
    CHECK(r.switches.empty());
  }
}

TEST_CASE("alternate.sampled_refusals: a sampling trigger on a stage that gives no samples is refused on every rank") {
  const auto data = fixtures::quadrants(480, 7);
  const auto fit = [&](const auto& prototype) {
    sy::transport::run_inproc(3, [&](sy::transport::inproc& t) {
      sy::nn::mlp model{11, {8, 8, 1}, 4};
      sy::optim::sgd optimizer{model.parameters().size(), 0.05};
      sy::train::trainer_options options;
      options.epochs = 1;
      options.batch_size = 8;
      sy::train::trainer trainer{model, optimizer, prototype, options};
      trainer.fit(t, data, *data);
    });
  };
  using sync_ps = strategy::parameter_server<strategy::consistency::sync>;
  using bounded_ps = strategy::parameter_server<strategy::consistency::bounded<>>;  // a run-time bound
  // A synchronous parameter server: its servers take no steps, so no all-gather of samples.
  CHECK_THROWS_WITH_AS(fit(strategy::alternate{sync_ps{1}, ar{}, trigger::straggler_detected{.every = 5},
                                               trigger::stragglers_gone{}}),
                       doctest::Contains("a trigger that samples every 5 steps cannot watch stage 'ps'"),
                       sy::usage_error);
  // Bounded staleness: its replies wait for the slowest worker.
  CHECK_THROWS_WITH_AS(fit(strategy::alternate{bounded_ps{1, strategy::consistency::bounded{2}}, ar{},
                                               trigger::stragglers_gone{.every = 5}, trigger::straggler_detected{}}),
                       doctest::Contains("needs asynchronous or backup-worker consistency"), sy::usage_error);
  // A bad setting is refused before the first part, on every rank alike.
  CHECK_THROWS_WITH_AS(fit(strategy::alternate{ar{}, ps{1}, trigger::straggler_detected{.window = 0, .every = 5},
                                               trigger::stragglers_gone{}}),
                       doctest::Contains("straggler_detected needs a ratio >= 1"), sy::usage_error);
}

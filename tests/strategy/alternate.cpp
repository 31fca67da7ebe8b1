#include <switchyard/strategy/alternate.hpp>

#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/straggler.hpp>

#include "../train/fixtures.hpp"
#include "../train/paced_mlp.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <string>
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

// Trains over 4 in-process ranks for `epochs` epochs; rank 2 computes 15 ms a pass during the
// epochs [slow_from, slow_to] and 3 ms otherwise, as every other rank does.
template <class Policy>
std::vector<outcome> train(const Policy& prototype, std::size_t epochs, std::size_t slow_from, std::size_t slow_to,
                           bool checked = false) {
  const auto data = fixtures::quadrants(480, 7);
  sy::transport::inproc_options world;
  world.check_collectives = checked;
  return sy::transport::run_inproc(
      4,
      [&](sy::transport::inproc& t) {
        using std::chrono::milliseconds;
        fixtures::paced_mlp model{milliseconds(3)};
        sy::optim::sgd optimizer{model.parameters().size(), 0.05};
        sy::train::trainer_options options;
        options.epochs = epochs;
        options.batch_size = 8;
        sy::train::trainer trainer{model, optimizer, prototype, options};
        // The epoch about to train decides the pace: the straggler comes and goes.
        const auto pace = [&](std::size_t epoch) {
          const bool slow = t.rank() == 2 && epoch >= slow_from && epoch <= slow_to;
          model.delay = slow ? milliseconds(15) : milliseconds(3);
        };
        pace(1);
        trainer.on_epoch([&](const sy::train::epoch_record& e) { pace(e.epoch + 1); });
        outcome result;
        for (const auto& e : trainer.fit(t, data, *data).epochs) result.stages.push_back(e.stage);
        result.switches = trainer.strategy().switches();
        result.parameters.assign(model.parameters().begin(), model.parameters().end());
        return result;
      },
      world);
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

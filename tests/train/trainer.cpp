#include <switchyard/train/trainer.hpp>

#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/transport/inproc.hpp>

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

namespace sy = switchyard;

namespace {

struct run_result {
  std::vector<float> parameters;
  sy::train::history history;
  std::size_t steps_seen = 0;
};

// Trains an mlp on the quadrant problem over `ranks` in-process ranks with `batch` per worker.
std::vector<run_result> train(int ranks, std::size_t batch, std::size_t epochs) {
  const auto data = fixtures::quadrants(480, 7);
  const auto test = fixtures::quadrants(100, 8);
  return sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::train::trainer_options options;
    options.epochs = epochs;
    options.batch_size = batch;
    options.seed = 3;
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
    run_result result;
    trainer.on_step([&](const sy::train::step_record& s) {
      ++result.steps_seen;
      CHECK(s.stage == "allreduce");
    });
    result.history = trainer.fit(t, data, *test);
    result.parameters.assign(model.parameters().begin(), model.parameters().end());
    return result;
  });
}


}  // namespace

TEST_CASE("trainer.allreduce.equivalence: W ranks x batch B train as 1 rank with batch W*B" * doctest::timeout(300)) {
  const std::vector<float> single = train(1, 24, 2).front().parameters;
  for (int ranks : {2, 3}) {
    CAPTURE(ranks);
    const auto runs = train(ranks, 24 / static_cast<std::size_t>(ranks), 2);
    for (const run_result& r : runs) {
      REQUIRE(r.parameters.size() == single.size());
      // Same batches, same mean gradient; only the order of float additions differs.
      CHECK(fixtures::max_difference(r.parameters, single) < 1e-4);
    }
  }
}

TEST_CASE("trainer.allreduce.replicas: bitwise identical parameters after many steps on 3 ranks" *
          doctest::timeout(300)) {
  const auto runs = train(3, 8, 6);  // 6 epochs of 20 steps
  for (const run_result& r : runs) {
    CHECK(std::memcmp(r.parameters.data(), runs[0].parameters.data(), r.parameters.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("trainer.history: one agreed record per epoch, a step callback per worker step, learning happens" *
          doctest::timeout(300)) {
  const auto runs = train(2, 16, 4);
  for (const run_result& r : runs) {
    REQUIRE(r.history.epochs.size() == 4);
    CHECK(r.steps_seen == 4 * (480 / 32));
    for (std::size_t e = 0; e < 4; ++e) {
      const auto& record = r.history.epochs[e];
      CHECK(record.epoch == e + 1);
      CHECK(record.samples == 480);
      CHECK(record.stage == "allreduce");
      CHECK(record.bytes_sent > 0);
      CHECK(record.test_loss == runs[0].history.epochs[e].test_loss);
    }
    CHECK(r.history.last().train_loss < r.history.epochs.front().train_loss);
    CHECK(r.history.last().test_accuracy > 0.9);
  }
}

TEST_CASE("trainer.progress: rank 0 prints one line per epoch") {
  const auto data = fixtures::quadrants(64, 1);
  std::ostringstream out;
  sy::transport::run_inproc(2, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{1, {8, 8, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::train::trainer_options options;
    options.epochs = 2;
    options.batch_size = 8;
    options.progress = &out;
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
    trainer.fit(t, data, *data);
  });
  const std::string text = out.str();
  CHECK(text.find("epoch   1/2") != std::string::npos);
  CHECK(text.find("epoch   2/2") != std::string::npos);
  CHECK(text.find("test accuracy") != std::string::npos);
}

TEST_CASE("trainer.errors: more workers x batch than examples is refused on every rank") {
  const auto data = fixtures::quadrants(10, 1);
  CHECK_THROWS_WITH_AS(sy::transport::run_inproc(2,
                                                 [&](sy::transport::inproc& t) {
                                                   sy::nn::mlp model{1, {8, 8, 1}, 4};
                                                   sy::optim::sgd optimizer{model.parameters().size(), 0.05};
                                                   sy::train::trainer_options options;
                                                   options.batch_size = 8;
                                                   sy::train::trainer trainer{model, optimizer,
                                                                              sy::strategy::all_reduce<>{}, options};
                                                   trainer.fit(t, data, *data);
                                                 }),
                       doctest::Contains("2 workers x batch 8 need more than the 10"), sy::usage_error);
}

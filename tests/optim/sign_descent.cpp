// The documented minimal optimizer: it leaves zero gradients alone, covers its parameters (so a
// parameter server can shard it), counts its steps and clock, and trains under all-reduce and a
// parameter server with the stock trainer.
#include "sign_descent.hpp"

#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>

#include "../nn/logistic_regression.hpp"
#include "../train/fixtures.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace sy = switchyard;

TEST_CASE("sign_descent: steps by the gradient's sign, not at all on a zero gradient; counts step and clock") {
  sign_descent optimizer{3};
  std::vector<float> p{1.0f, 1.0f, 1.0f};
  optimizer.step(p, std::vector<float>{2.0f, 0.0f, -0.5f});
  CHECK(p == std::vector<float>{0.99f, 1.0f, 1.01f});
  CHECK(optimizer.export_state().size == 3);
  CHECK(optimizer.export_state().step == 1);
  CHECK(optimizer.export_state().clock == 1);
  // A shard's state, as a parameter server's server imports it.
  const auto shard = optimizer.export_state().slice(1, 2);
  CHECK(shard.size == 2);
  CHECK(shard.step == 1);
}

TEST_CASE("sign_descent: trains under all-reduce and under a parameter server, with every rank agreeing" *
          doctest::timeout(120)) {
  const auto data = fixtures::quadrants(160, 7);
  const auto train = [&](int ranks, auto strategy) {
    return sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
      logistic_regression model(64, 4);
      sign_descent optimizer{model.parameters().size()};
      sy::train::trainer_options options;
      options.epochs = 3;
      options.batch_size = 8;
      sy::train::trainer trainer{model, optimizer, strategy, options};
      const sy::train::history h = trainer.fit(t, data, *data);
      return std::pair{h.last().test_accuracy, std::vector<float>(model.parameters().begin(), model.parameters().end())};
    });
  };
  for (const auto& runs : {train(2, sy::strategy::all_reduce<>{}), train(3, sy::strategy::parameter_server<>(1))}) {
    for (const auto& [accuracy, parameters] : runs) {
      CHECK(accuracy > 0.9);
      CHECK(parameters == runs.front().second);
    }
  }
}

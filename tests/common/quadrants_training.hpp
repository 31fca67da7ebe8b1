// The small training run that the transports' training tests compare: a 3-layer MLP fitted for 2
// epochs to the quadrants fixture (480 examples, 4 classes) with plain SGD, the same on every rank
// and every transport, so that two transports, or two shapes of one, must end with the same
// parameters.
#pragma once

#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>

#include "../train/fixtures.hpp"

#include <cstddef>
#include <vector>

namespace fixtures {

/// Trains on `t` with `batch` examples per worker under `strategy`; returns this rank's parameters.
template <class Transport, class Strategy = switchyard::strategy::all_reduce<>>
std::vector<float> train(Transport& t, std::size_t batch, Strategy strategy = {}) {
  const auto data = quadrants(480, 7);
  switchyard::nn::mlp model{11, {8, 8, 1}, 4};
  switchyard::optim::sgd optimizer{model.parameters().size(), 0.05};
  switchyard::train::trainer_options options;
  options.epochs = 2;
  options.batch_size = batch;
  options.seed = 3;
  switchyard::train::trainer trainer{model, optimizer, strategy, options};
  trainer.fit(t, data, *data);
  return {model.parameters().begin(), model.parameters().end()};
}

}  // namespace fixtures

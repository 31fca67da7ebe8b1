// All-reduce training under mpiexec: W processes with batch B per worker end with the parameters
// of one in-process rank trained on batches of W * B, and all processes agree to the last bit.
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/transport/mpi.hpp>

#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>

#include "../collective/scenarios.hpp"
#include "../train/fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace sy = switchyard;

namespace {

template <class Transport>
std::vector<float> train(Transport& t, std::size_t batch) {
  const auto data = fixtures::quadrants(480, 7);
  sy::nn::mlp model{11, {8, 8, 1}, 4};
  sy::optim::sgd optimizer{model.parameters().size(), 0.05};
  sy::train::trainer_options options;
  options.epochs = 2;
  options.batch_size = batch;
  options.seed = 3;
  sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
  trainer.fit(t, data, *data);
  return {model.parameters().begin(), model.parameters().end()};
}

}  // namespace

TEST_CASE("mpi.train.allreduce: W processes x batch B match one rank with batch W*B") {
  sy::transport::mpi t;
  const std::size_t combined = 24;
  if (combined % static_cast<std::size_t>(t.size()) != 0) return;  // the equivalence needs W | 24
  const std::vector<float> distributed = train(t, combined / static_cast<std::size_t>(t.size()));
  const std::vector<float> single =
      sy::transport::run_inproc(1, [&](sy::transport::inproc& one) { return train(one, combined); }).front();
  REQUIRE(distributed.size() == single.size());
  double worst = 0;
  for (std::size_t i = 0; i < single.size(); ++i) {
    worst = std::max(worst, std::abs(double(distributed[i]) - double(single[i])));
  }
  CHECK(worst < 1e-4);
  std::vector<std::uint64_t> mine{scenarios::bit_hash(distributed)};
  std::vector<std::uint64_t> all(static_cast<std::size_t>(t.size()));
  sy::collective::allgather(t, mine, all);
  for (std::uint64_t h : all) CHECK(h == all[0]);
}

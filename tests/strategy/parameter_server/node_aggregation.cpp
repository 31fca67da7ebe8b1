// The node-aware parameter server (strategy/parameter_server/node_aggregation.hpp), trained in
// process over virtual nodes (inproc_options::node_sizes) in every grouping of 1 to 7 ranks: one
// push per node per step, one shard per node, the same model as per-rank pushes, pipelined or not.
#include <switchyard/strategy/parameter_server.hpp>

#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/after_steps.hpp>

#include "../../collective/harness.hpp"
#include "../../train/fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace sy = switchyard;
namespace consistency = sy::strategy::consistency;
using sy::strategy::aggregation;

namespace {

struct outcome {
  std::vector<float> parameters;
  sy::train::history history;
  sy::strategy::ps_statistics statistics;
  bool by_node = false;
  std::size_t steps = 0;  // the steps this rank trained
  int local_rank = 0;
  std::vector<std::vector<std::size_t>> batches;  // per epoch, the batches this rank trained
};

int ranks_of(const std::vector<int>& sizes) {
  int ranks = 0;
  for (const int size : sizes) ranks += size;
  return ranks;
}

// Trains the quadrant mlp under `strategy` over virtual nodes of `sizes` ranks, consecutive ranks
// or (`round_robin`) ranks dealt to the nodes in turn, on `examples` examples (batches of 8).
template <class Strategy>
std::vector<outcome> train(const std::vector<int>& sizes, Strategy strategy, std::size_t epochs = 2,
                           bool round_robin = false, std::size_t examples = 480) {
  const auto data = fixtures::quadrants(examples, 7);
  const auto test = fixtures::quadrants(200, 8);
  sy::transport::inproc_options options;
  options.node_sizes = sizes;
  options.round_robin_nodes = round_robin;
  return sy::transport::run_inproc(
      ranks_of(sizes),
      [&](sy::transport::inproc& t) {
        sy::nn::mlp<> model{11, {8, 8, 1}, 4};
        sy::optim::sgd optimizer{model.parameters().size(), 0.05};
        sy::train::trainer_options settings;
        settings.epochs = epochs;
        settings.batch_size = 8;
        settings.seed = 3;
        sy::train::trainer trainer{model, optimizer, strategy, settings};
        outcome result;
        result.batches.resize(epochs);
        trainer.on_step([&](const sy::train::step_record& step) {
          ++result.steps;
          result.batches[step.epoch - 1].push_back(step.batch);
        });
        result.history = trainer.fit(t, data, *test);
        result.parameters.assign(model.parameters().begin(), model.parameters().end());
        if constexpr (requires { trainer.strategy().statistics(); }) {
          result.statistics = trainer.strategy().statistics();
          result.by_node = trainer.strategy().aggregates_by_node();
        }
        result.local_rank = t.topology().local_rank;
        return result;
      },
      options);
}

template <class Consistency>
sy::strategy::parameter_server<Consistency> colocated(aggregation aggregate,
                                                      sy::strategy::pipelining pipeline = sy::strategy::pipelining::off) {
  return sy::strategy::parameter_server<Consistency>(sy::strategy::colocated, Consistency{},
                                                     sy::compression::format::none, pipeline, aggregate);
}

// The batches of epoch `e` the ranks trained, sorted.
std::vector<std::size_t> trained_in(const std::vector<outcome>& runs, std::size_t e) {
  std::vector<std::size_t> trained;
  for (const outcome& r : runs) trained.insert(trained.end(), r.batches[e].begin(), r.batches[e].end());
  std::sort(trained.begin(), trained.end());
  return trained;
}

// Every batch of each epoch trained once, by one rank or another.
void check_every_batch_once(const std::vector<outcome>& runs, std::size_t batches) {
  for (std::size_t e = 0; e < runs.front().batches.size(); ++e) {
    CAPTURE(e);
    std::vector<std::size_t> all(batches);
    for (std::size_t b = 0; b < batches; ++b) all[b] = b;
    CHECK(trained_in(runs, e) == all);
  }
}

// Every rank ends with the same parameters, bit for bit.
void check_replicas(const std::vector<outcome>& runs) {
  for (const outcome& r : runs) CHECK(r.parameters == runs.front().parameters);
}

// The pushes each serving rank received: one per step of each node's local rank 0.
void check_one_push_per_node(const std::vector<outcome>& runs, std::size_t nodes) {
  std::size_t leader_steps = 0;
  std::size_t serving = 0;
  for (const outcome& r : runs) {
    CHECK(r.by_node);
    if (r.local_rank == 0) leader_steps += r.steps;
  }
  for (const outcome& r : runs) {
    if (r.local_rank != 0) {
      CHECK(r.statistics.pushes == 0);  // one shard per node: only its local rank 0 serves
      continue;
    }
    ++serving;
    CHECK(r.statistics.pushes == leader_steps);
  }
  CHECK(serving == nodes);
}

}  // namespace

TEST_CASE("parameter_server.node.sync: one node, and one rank per node, equal per-rank pushes bit for bit" *
          doctest::timeout(300)) {
  for (int ranks = 1; ranks <= 7; ++ranks) {
    CAPTURE(ranks);
    // The node's sum in local-rank order, divided by every worker, is the per-rank server's sum
    // in worker order, divided by every worker.
    const auto flat = train({ranks}, colocated<consistency::sync>(aggregation::rank));
    const auto one_node = train({ranks}, colocated<consistency::sync>(aggregation::node));
    check_replicas(one_node);
    CHECK(one_node.front().parameters == flat.front().parameters);
    check_one_push_per_node(one_node, 1);
    // Per rank, every rank pushes its own gradient to every rank's shard.
    for (const outcome& r : flat) CHECK(r.statistics.pushes == flat.front().steps * static_cast<std::size_t>(ranks));
    const auto separate = train(std::vector<int>(static_cast<std::size_t>(ranks), 1),
                                colocated<consistency::sync>(aggregation::node));
    CHECK(separate.front().parameters == flat.front().parameters);
    check_one_push_per_node(separate, static_cast<std::size_t>(ranks));
  }
}

TEST_CASE("parameter_server.node.sync: every grouping of 1 to 7 ranks, one push per node per step" *
          doctest::timeout(600)) {
  for (const std::vector<int>& sizes : harness::groupings) {
    const std::string nodes = harness::grouping_name(sizes);
    CAPTURE(nodes);
    const auto flat = train(sizes, colocated<consistency::sync>(aggregation::rank));
    // automatic aggregates by node over a hierarchical topology, per rank otherwise.
    const auto runs = train(sizes, sy::strategy::parameter_server<consistency::sync>(sy::strategy::colocated));
    const sy::transport::node_topology shape{0, 0, 1, static_cast<int>(sizes.size()),
                                             *std::max_element(sizes.begin(), sizes.end()), 1};
    if (!shape.hierarchical()) {
      for (const outcome& r : runs) CHECK_FALSE(r.by_node);
      continue;
    }
    check_replicas(runs);
    check_one_push_per_node(runs, sizes.size());
    // Another sum order, the same mean: close to per-rank pushes, and training.
    CHECK(fixtures::max_difference(runs.front().parameters, flat.front().parameters) < 1e-5);
    CHECK(runs.front().history.epochs.back().train_loss < runs.front().history.epochs.front().train_loss);
  }
}

TEST_CASE("parameter_server.node.async and bounded: uneven nodes train, one push per node step" *
          doctest::timeout(600)) {
  for (const std::vector<int>& sizes : {std::vector<int>{3, 1, 2}, {2, 2}, {3, 1}, {1, 5, 1}, {2, 1}}) {
    const std::string nodes = harness::grouping_name(sizes);
    CAPTURE(nodes);
    const auto async = train(sizes, colocated<consistency::async>(aggregation::node), 4);
    check_replicas(async);
    check_one_push_per_node(async, sizes.size());
    // Every batch of each epoch trained once, a node's block at a time.
    check_every_batch_once(async, 480 / 8);
    const auto& epochs = async.front().history.epochs;
    CHECK(epochs.back().train_loss < epochs.front().train_loss);
    CHECK(epochs.back().test_accuracy > 0.8);
    const auto bounded = train(sizes, colocated<consistency::bounded<1>>(aggregation::node), 3);
    check_replicas(bounded);
    check_one_push_per_node(bounded, sizes.size());
    CHECK(bounded.front().history.epochs.back().train_loss < bounded.front().history.epochs.front().train_loss);
  }
}

TEST_CASE("parameter_server.node.pipelined: the node computes ahead as per-rank pipelined workers do" *
          doctest::timeout(600)) {
  constexpr auto ahead = sy::strategy::pipelining::one_ahead;
  // Synchronous: one node, and one rank per node, end as pipelined per-rank pushes, bit for bit.
  for (int ranks = 1; ranks <= 7; ++ranks) {
    CAPTURE(ranks);
    const auto flat = train({ranks}, colocated<consistency::sync>(aggregation::rank, ahead));
    const auto one_node = train({ranks}, colocated<consistency::sync>(aggregation::node, ahead));
    check_replicas(one_node);
    check_one_push_per_node(one_node, 1);
    CHECK(one_node.front().parameters == flat.front().parameters);
    const auto separate =
        train(std::vector<int>(static_cast<std::size_t>(ranks), 1), colocated<consistency::sync>(aggregation::node, ahead));
    CHECK(separate.front().parameters == flat.front().parameters);
    // Pipelining trains on parameters one exchange old: not the unpipelined server's model.
    if (ranks == 4) {
      CHECK(one_node.front().parameters != train({ranks}, colocated<consistency::sync>(aggregation::node)).front().parameters);
    }
  }
  // Every grouping, synchronous: another sum order, the same mean.
  for (const std::vector<int>& sizes : harness::groupings) {
    const std::string nodes = harness::grouping_name(sizes);
    CAPTURE(nodes);
    const auto runs = train(sizes, colocated<consistency::sync>(aggregation::node, ahead));
    check_replicas(runs);
    check_one_push_per_node(runs, sizes.size());
    const auto flat = train(sizes, colocated<consistency::sync>(aggregation::rank, ahead));
    CHECK(fixtures::max_difference(runs.front().parameters, flat.front().parameters) < 1e-5);
  }
  // Asynchronous over uneven nodes, of consecutive ranks or dealt in turn: each worker holds its
  // second batch from the start, then a node takes a block at a time; every batch of each epoch is
  // trained once.
  for (const std::vector<int>& sizes : {std::vector<int>{3, 1, 2}, {2, 2}, {1, 5, 1}, {2, 1}}) {
    for (const bool round_robin : {false, true}) {
      const std::string nodes = harness::grouping_name(sizes);
      CAPTURE(nodes);
      CAPTURE(round_robin);
      const auto async = train(sizes, colocated<consistency::async>(aggregation::node, ahead), 4, round_robin);
      check_replicas(async);
      check_one_push_per_node(async, sizes.size());
      check_every_batch_once(async, 480 / 8);
      const auto& epochs = async.front().history.epochs;
      CHECK(epochs.back().train_loss < epochs.front().train_loss);
      CHECK(epochs.back().test_accuracy > 0.8);
      // 10 batches for 4 to 7 workers: some start a part without a second batch, or without any.
      const auto short_epochs = train(sizes, colocated<consistency::async>(aggregation::node, ahead), 3, round_robin, 80);
      check_replicas(short_epochs);
      check_every_batch_once(short_epochs, 80 / 8);
    }
  }
}

TEST_CASE("parameter_server.node.pipelined: bounded staleness, compressed pushes and a switch to all-reduce" *
          doctest::timeout(600)) {
  constexpr auto ahead = sy::strategy::pipelining::one_ahead;
  for (const std::vector<int>& sizes : {std::vector<int>{3, 1, 2}, {2, 2}}) {
    const std::string nodes = harness::grouping_name(sizes);
    CAPTURE(nodes);
    const auto bounded = train(sizes, colocated<consistency::bounded<1>>(aggregation::node, ahead), 3, true);
    check_replicas(bounded);
    check_one_push_per_node(bounded, sizes.size());
    check_every_batch_once(bounded, 480 / 8);
    CHECK(bounded.front().history.epochs.back().train_loss < bounded.front().history.epochs.front().train_loss);
    const auto compressed = train(sizes,
                                  sy::strategy::parameter_server<consistency::async>(
                                      sy::strategy::colocated, {}, sy::compression::format::bf16, ahead, aggregation::node),
                                  3, true);
    check_replicas(compressed);
    check_one_push_per_node(compressed, sizes.size());
    check_every_batch_once(compressed, 480 / 8);
    CHECK(compressed.front().history.epochs.back().test_accuracy > 0.8);
    // The switch inside the second epoch: the pipelined stage hands over with its last exchange.
    using ps = sy::strategy::parameter_server<consistency::async>;
    const auto switched = train(sizes,
                                sy::strategy::switch_to{ps(sy::strategy::colocated, {}, sy::compression::format::none,
                                                           ahead, aggregation::node),
                                                        sy::strategy::all_reduce<>{}, sy::trigger::after_steps<90>{}},
                                3, true);
    check_replicas(switched);
    CHECK(switched.front().history.epochs[1].stage == "ps>allreduce");
    CHECK(switched.front().history.epochs.back().stage == "allreduce");
    // No batch twice in the epoch of the switch (the synchronous rest drops what leaves a worker
    // without a full share), every batch in the epochs before and after.
    const std::vector<std::size_t> second = trained_in(switched, 1);
    CHECK(std::adjacent_find(second.begin(), second.end()) == second.end());
    CHECK(second.size() > 480 / 8 - sizes.size() * 2);
    CHECK(trained_in(switched, 0).size() == 480 / 8);
  }
}

TEST_CASE("parameter_server.node.dedicated: workers grouped by node push once per node" * doctest::timeout(300)) {
  // Ranks 0 to 3 work on nodes {0, 1} and {2, 3}; rank 4, the server, is on a node of its own.
  for (const std::vector<int>& sizes : {std::vector<int>{2, 2, 1}, {3, 2}, {1, 2, 2}}) {
    const std::string nodes = harness::grouping_name(sizes);
    CAPTURE(nodes);
    const auto flat = train(sizes, sy::strategy::parameter_server<consistency::sync>(
                                       1, {}, sy::compression::format::none, sy::strategy::pipelining::off,
                                       aggregation::rank));
    const auto runs = train(sizes, sy::strategy::parameter_server<consistency::sync>(
                                       1, {}, sy::compression::format::none, sy::strategy::pipelining::off,
                                       aggregation::node));
    check_replicas(runs);
    CHECK(fixtures::max_difference(runs.front().parameters, flat.front().parameters) < 1e-5);
    const outcome& server = runs.back();
    CHECK(server.steps == 0);
    std::size_t leader_steps = 0;
    for (std::size_t r = 0; r + 1 < runs.size(); ++r) {
      if (runs[r].local_rank == 0) leader_steps += runs[r].steps;
    }
    CHECK(server.statistics.pushes == leader_steps);
    CHECK(server.statistics.pushes < flat.back().statistics.pushes);
  }
}

TEST_CASE("parameter_server.node: a switch to all-reduce keeps the replicas identical" * doctest::timeout(300)) {
  using ps = sy::strategy::parameter_server<consistency::async>;
  for (const std::vector<int>& sizes : {std::vector<int>{3, 1, 2}, {2, 2}}) {
    const std::string nodes = harness::grouping_name(sizes);
    CAPTURE(nodes);
    const auto runs = train(sizes,
                            sy::strategy::switch_to{ps(sy::strategy::colocated), sy::strategy::all_reduce<>{},
                                                    sy::trigger::after_epochs<1>{}},
                            3);
    check_replicas(runs);
    CHECK(runs.front().history.epochs.back().stage == "allreduce");
  }
}

TEST_CASE("parameter_server.node: backup workers are refused by aggregation::node" * doctest::timeout(60)) {
  sy::transport::inproc_options options;
  options.node_sizes = {2, 2};
  const auto data = fixtures::quadrants(480, 7);
  const auto refused = [&](auto strategy, const std::string& says) {
    sy::transport::run_inproc(
        4,
        [&](sy::transport::inproc& t) {
          sy::nn::mlp<> model{11, {8, 8, 1}, 4};
          sy::optim::sgd optimizer{model.parameters().size(), 0.05};
          sy::train::trainer trainer{model, optimizer, strategy, sy::train::trainer_options{.epochs = 1}};
          CHECK_THROWS_WITH_AS(trainer.fit(t, data, *data), doctest::Contains(says.c_str()), sy::usage_error);
        },
        options);
  };
  refused(sy::strategy::parameter_server<consistency::backups<1>>(sy::strategy::colocated, {},
                                                                  sy::compression::format::none,
                                                                  sy::strategy::pipelining::off, aggregation::node),
          "backup workers");
  // automatic falls back to per-rank pushes there, and aggregates pipelined workers by node.
  sy::transport::run_inproc(
      4,
      [&](sy::transport::inproc& t) {
        const sy::strategy::parameter_server<consistency::backups<1>> backups(sy::strategy::colocated);
        CHECK_FALSE(backups.aggregates_by_node(t));
        const sy::strategy::parameter_server<> pipelined(sy::strategy::colocated, {}, sy::compression::format::none,
                                                         sy::strategy::pipelining::one_ahead);
        CHECK(pipelined.aggregates_by_node(t));
        CHECK(sy::strategy::parameter_server<>(sy::strategy::colocated).aggregates_by_node(t));
      },
      options);
}

// Tests of all_reduce's bucketed and overlapped exchanges (strategy/all_reduce.hpp, `exchange`)
// with nn::sequential's gradient hooks (nn/sequential.hpp): the overlapped run equals the bucketed
// one to the bit for mlp and cnn on 1..4 ranks, replicas stay identical, buckets follow the layers
// and `bucket_bytes`, a step allocates nothing, and a failure on the communication thread reaches
// every rank's step.
#include <switchyard/strategy/all_reduce.hpp>

#include <switchyard/nn/blas_threads.hpp>
#include <switchyard/nn/cnn.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/nn/model.hpp>
#include <switchyard/optim/momentum.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>

#include "../common/counting_new.hpp"
#include "../train/fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sy = switchyard;
using sy::strategy::exchange;

namespace {

// The ranks are threads: OpenBLAS computes on each rank's own thread, as nn::sequential advises
// (its thread pool's writes are invisible to ThreadSanitizer, which would report them).
const sy::nn::blas_threads_scope one_blas_thread{1};

using buckets = std::vector<std::pair<std::size_t, std::size_t>>;

struct run {
  std::vector<float> parameters;
  buckets last;
};

// Two epochs of the quadrant problem (16x16 images) on `ranks` in-process ranks: each rank's
// parameters and its last step's buckets.
template <class Model>
std::vector<run> train(Model prototype, int ranks, sy::strategy::all_reduce_options options) {
  const auto data = fixtures::quadrants(240, 7, 16);
  return sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
    Model model = prototype;
    sy::optim::momentum optimizer{model.parameters().size(), 0.05, 0.9};
    sy::train::trainer_options o;
    o.epochs = 2;
    o.batch_size = 10;
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{options}, o};
    trainer.fit(t, data, *data);
    return run{{model.parameters().begin(), model.parameters().end()}, trainer.strategy().last_buckets()};
  });
}

// The ranges nn::sequential reports: one per layer with parameters, last layer first.
template <class Model>
buckets per_layer(const Model& model) {
  const std::span<const std::size_t> offsets = model.layer_offsets();
  buckets layers;
  for (std::size_t i = offsets.size() - 1; i > 0; --i) {
    if (offsets[i] != offsets[i - 1]) layers.emplace_back(offsets[i - 1], offsets[i] - offsets[i - 1]);
  }
  return layers;
}

template <class Model>
void check_overlap_equals_buckets(const Model& prototype) {
  for (const int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    const std::vector<run> bucketed = train(prototype, ranks, {.exchange = exchange::buckets});
    const std::vector<run> overlapped = train(prototype, ranks, {.exchange = exchange::overlapped});
    const std::vector<run> whole = train(prototype, ranks, {});
    for (std::size_t r = 0; r < overlapped.size(); ++r) {
      CAPTURE(r);
      CHECK(overlapped[r].parameters == bucketed[r].parameters);
      CHECK(overlapped[r].parameters == overlapped[0].parameters);
      CHECK(overlapped[r].last == (ranks == 1 ? buckets{} : per_layer(prototype)));
      CHECK(whole[r].last.empty());
      // Bucketing changes only where each sum is split, so the runs stay close.
      CHECK(fixtures::max_difference(whole[r].parameters, bucketed[r].parameters) < 1e-4);
    }
  }
}

// A model whose pass reports the ranges it is given, and throws after `throw_after` of them.
struct ranges_of {
  std::size_t size;
  buckets reported;  // what the pass reports, in order
  std::size_t throw_after = 1000;
  std::vector<float> p = std::vector<float>(size, 1.0f), g = std::vector<float>(size, 0.0f);
  std::span<float> parameters() { return p; }
  std::span<float> gradients() { return g; }
  template <class Batch, class Ready>
  double forward_backward(const Batch&, Ready&& ready) {
    for (std::size_t i = 0; i < reported.size(); ++i) {
      if (i == throw_after) throw std::runtime_error("the pass failed");
      ready(reported[i].first, reported[i].second);
    }
    return 0.0;
  }
  template <class Batch>
  double forward_backward(const Batch& batch) {
    return forward_backward(batch, [](std::size_t, std::size_t) {});
  }
};

buckets closed(ranges_of model, std::size_t bucket_bytes) {
  const auto runs = sy::transport::run_inproc(2, [&](sy::transport::inproc& t) {
    ranges_of m = model;
    sy::optim::sgd optimizer{m.size, 0.1};
    sy::strategy::all_reduce<> strategy{{.exchange = exchange::buckets, .bucket_bytes = bucket_bytes}};
    const int batch = 0;
    static_cast<void>(strategy.forward_backward(t, m, batch));
    static_cast<void>(strategy.step(t, m, optimizer));
    return strategy.last_buckets();
  });
  CHECK(runs[0] == runs[1]);
  return runs[0];
}

}  // namespace

TEST_CASE("exchange.hooks: nn::sequential reports each layer's gradients once, last layer first") {
  static_assert(sy::nn::gradient_hooks<sy::nn::mlp<>>);
  static_assert(sy::nn::gradient_hooks<sy::nn::cnn<>>);
  const auto data = fixtures::quadrants(20, 3, 16);
  sy::nn::cnn model{5, {16, 16, 1}, 4};
  sy::nn::cnn reference = model;
  const sy::data::batch_view batch = data->slice(0, 10);
  buckets reported;
  const double loss = model.forward_backward(batch, [&](std::size_t first, std::size_t count) {
    reported.emplace_back(first, count);
  });
  CHECK(reported == per_layer(model));
  CHECK(loss == reference.forward_backward(batch));
  CHECK(std::vector<float>(model.gradients().begin(), model.gradients().end()) ==
        std::vector<float>(reference.gradients().begin(), reference.gradients().end()));
}

TEST_CASE("exchange.overlapped: the same bits as buckets after the pass, identical replicas, mlp on 1..4 ranks" *
          doctest::timeout(300)) {
  check_overlap_equals_buckets(sy::nn::mlp<>{11, {16, 16, 1}, 4});
}

TEST_CASE("exchange.overlapped: the same bits as buckets after the pass, identical replicas, cnn on 1..4 ranks" *
          doctest::timeout(300)) {
  check_overlap_equals_buckets(sy::nn::cnn<>{11, {16, 16, 1}, 4});
}

TEST_CASE("exchange.bucket_bytes: adjacent ranges join until a bucket holds bucket_bytes; a gap closes one") {
  const ranges_of layers{100, {{90, 10}, {60, 30}, {0, 60}}};
  CHECK(closed(layers, 0) == buckets{{90, 10}, {60, 30}, {0, 60}});
  CHECK(closed(layers, 40 * sizeof(float)) == buckets{{60, 40}, {0, 60}});
  CHECK(closed(layers, 1000 * sizeof(float)) == buckets{{0, 100}});
  const ranges_of gap{100, {{90, 10}, {0, 60}, {60, 30}}};
  CHECK(closed(gap, 1000 * sizeof(float)) == buckets{{90, 10}, {0, 60}, {60, 30}});
  const ranges_of beyond{100, {{90, 20}}};
  CHECK_THROWS_WITH_AS(closed(beyond, 0), doctest::Contains("gradients [90, 110) ready, beyond its arena of 100"),
                       sy::usage_error);
  const ranges_of short_of{100, {{90, 10}, {60, 30}}};
  CHECK_THROWS_WITH_AS(closed(short_of, 0),
                       doctest::Contains("reported 40 gradients ready in its pass, its arena has 100"),
                       sy::usage_error);
}

TEST_CASE("exchange.passes: a pass the strategy did not run is exchanged whole; a pass that throws leaves once its "
          "bucket in progress is reduced, and the next one exchanges normally") {
  sy::transport::run_inproc(2, [](sy::transport::inproc& t) {
    for (const exchange mode : {exchange::buckets, exchange::overlapped}) {
      CAPTURE(static_cast<int>(mode));
      ranges_of model{100, {{60, 40}, {0, 60}}};
      sy::optim::sgd optimizer{model.size, 0.0};
      sy::strategy::all_reduce<> strategy{{.exchange = mode}};
      const int batch = 0;
      const auto gradients_of_rank = [&] { std::fill(model.g.begin(), model.g.end(), static_cast<float>(t.rank() + 1)); };
      const auto averaged = [&] { return std::all_of(model.g.begin(), model.g.end(), [](float v) { return v == 1.5f; }); };

      gradients_of_rank();
      static_cast<void>(strategy.forward_backward(t, model, batch));
      static_cast<void>(strategy.step(t, model, optimizer));
      CHECK(strategy.last_buckets() == buckets{{60, 40}, {0, 60}});
      CHECK(averaged());

      // The model's own pass, then the step: the whole arena, not the last pass's buckets.
      static_cast<void>(model.forward_backward(batch));
      gradients_of_rank();
      static_cast<void>(strategy.step(t, model, optimizer));
      CHECK(strategy.last_buckets().empty());
      CHECK(averaged());

      // A pass that fails after its first range, on both ranks alike.
      model.throw_after = 1;
      CHECK_THROWS_WITH_AS(strategy.forward_backward(t, model, batch), "the pass failed", std::runtime_error);
      CHECK(strategy.last_buckets().empty());
      model.throw_after = 1000;
      gradients_of_rank();
      static_cast<void>(strategy.forward_backward(t, model, batch));
      static_cast<void>(strategy.step(t, model, optimizer));
      CHECK(averaged());
    }
  });
}

TEST_CASE("exchange.switch: the overlapped all-reduce keeps working as the second stage of a switch" *
          doctest::timeout(300)) {
  const auto data = fixtures::quadrants(240, 7, 16);
  const auto runs = sy::transport::run_inproc(3, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{11, {16, 16, 1}, 4};
    sy::optim::momentum optimizer{model.parameters().size(), 0.05, 0.9};
    sy::train::trainer_options o;
    o.epochs = 2;
    o.batch_size = 10;
    sy::train::trainer trainer{model, optimizer,
                               sy::strategy::switch_to{sy::strategy::all_reduce<>{},
                                                       sy::strategy::all_reduce<>{{.exchange = exchange::overlapped}},
                                                       sy::trigger::after_epochs<1>{}},
                               o};
    trainer.fit(t, data, *data);
    CHECK(trainer.strategy().second().last_buckets() == per_layer(model));
    return std::vector<float>(model.parameters().begin(), model.parameters().end());
  });
  for (const auto& replica : runs) CHECK(replica == runs[0]);
}

TEST_CASE("exchange.failure: a rank that fails on the communication thread fails every rank's step, naming it" *
          doctest::timeout(120)) {
  const auto data = fixtures::quadrants(240, 7, 16);
  sy::transport::fault_plan plan;
  plan.fail_rank = 1;
  plan.fail_after = 40;
  CHECK_THROWS_WITH(sy::transport::run_inproc(3,
                                              [&](sy::transport::inproc& t) {
                                                sy::transport::faulty<sy::transport::inproc> f{t, plan};
                                                sy::nn::mlp model{11, {16, 16, 1}, 4};
                                                sy::optim::sgd optimizer{model.parameters().size(), 0.05};
                                                sy::train::trainer_options o;
                                                o.epochs = 1;
                                                o.batch_size = 10;
                                                sy::train::trainer trainer{
                                                    model, optimizer,
                                                    sy::strategy::all_reduce<>{{.exchange = exchange::overlapped}}, o};
                                                trainer.fit(f, data, *data);
                                              }),
                    doctest::Contains("rank 1"));
}

TEST_CASE("exchange.no_allocation: after its first steps, an overlapped step allocates nothing on any rank") {
  const auto data = fixtures::quadrants(240, 7, 16);
  sy::transport::run_inproc(3, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{11, {16, 16, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::strategy::all_reduce<> strategy{{.exchange = exchange::overlapped}};
    const sy::data::batch_view batch = data->slice(10 * static_cast<std::size_t>(t.rank()), 10);
    const auto one_step = [&] {
      static_cast<void>(strategy.forward_backward(t, model, batch));
      static_cast<void>(strategy.step(t, model, optimizer));
    };
    for (int i = 0; i < 3; ++i) one_step();  // the thread, the buckets' capacity, the transport's pools
    t.barrier();
    const std::size_t before = counting_new::allocations.load();
    for (int i = 0; i < 5; ++i) one_step();
    t.barrier();
    const std::size_t after = counting_new::allocations.load();
    CHECK(after == before);
  });
}

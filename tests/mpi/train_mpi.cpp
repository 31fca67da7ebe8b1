// All-reduce training under mpiexec: W processes with batch B per worker end with the parameters
// of one in-process rank trained on batches of W * B, and all processes agree to the last bit.
#include <switchyard/core/floating_point.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/alternate.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/after_steps.hpp>
#include <switchyard/trigger/straggler.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/transport/mpi.hpp>

#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>

#include "../collective/scenarios.hpp"
#include "../common/quadrants_training.hpp"
#include "../train/fixtures.hpp"
#include "../train/flush_recorders.hpp"
#include "../train/paced_mlp.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sy = switchyard;

namespace {

using fixtures::train;

// Every process holds the same bits of `parameters`.
void check_identical_everywhere(sy::transport::mpi& t, const std::vector<float>& parameters) {
  std::vector<std::uint64_t> mine{scenarios::bit_hash(parameters)};
  std::vector<std::uint64_t> all(static_cast<std::size_t>(t.size()));
  sy::collective::allgather(t, mine, all);
  for (std::uint64_t h : all) CHECK(h == all[0]);
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
  CHECK(fixtures::max_difference(distributed, single) < 1e-4);
  check_identical_everywhere(t, distributed);
}

TEST_CASE("mpi.train.exchange: the overlapped all-reduce, reducing on a communication thread, equals the bucketed "
          "one to the bit in every process") {
  sy::transport::mpi t;
  REQUIRE(t.serves_other_threads());
  using sy::strategy::exchange;
  const std::vector<float> overlapped = train(t, 8, sy::strategy::all_reduce<>{{.exchange = exchange::overlapped}});
  const std::vector<float> bucketed = train(t, 8, sy::strategy::all_reduce<>{{.exchange = exchange::buckets}});
  CHECK(overlapped == bucketed);
  check_identical_everywhere(t, overlapped);
}

TEST_CASE("mpi.train.parameter_server.sync: 1 server and W workers match all-reduce over W ranks") {
  sy::transport::mpi t;
  if (t.size() < 2) return;
  const auto workers = static_cast<std::size_t>(t.size() - 1);
  const std::vector<float> served =
      train(t, 8, sy::strategy::parameter_server<sy::strategy::consistency::sync>(1));
  const std::vector<float> reference =
      sy::transport::run_inproc(static_cast<int>(workers), [&](sy::transport::inproc& local) { return train(local, 8); })
          .front();
  CHECK(fixtures::max_difference(served, reference) < 1e-5);
}

TEST_CASE("mpi.train.parameter_server.async_and_bounded: every process ends with the servers' model") {
  sy::transport::mpi t;
  if (t.size() < 2) return;
  const std::size_t servers = t.size() >= 4 ? 2 : 1;
  for (int round = 0; round < 2; ++round) {
    const std::vector<float> trained =
        round == 0 ? train(t, 8, sy::strategy::parameter_server<>(servers))
                   : train(t, 8, sy::strategy::parameter_server(servers, sy::strategy::consistency::bounded{1}));
    check_identical_everywhere(t, trained);
  }
}

TEST_CASE("mpi.train.parameter_server.backups: rounds that drop a straggler's late pushes, co-located and on server "
          "ranks; every server closes the same rounds (the last hand-over refuses shards that stepped unequally)") {
  sy::transport::mpi t;
  const sy::strategy::consistency::backups<1> one{};
  check_identical_everywhere(t, train(t, 8, sy::strategy::parameter_server(sy::strategy::colocated, one)));
  if (t.size() >= 3) {
    const std::size_t servers = t.size() >= 4 ? 2 : 1;
    check_identical_everywhere(t, train(t, 8, sy::strategy::parameter_server(servers, one)));
  }
}

TEST_CASE("mpi.train.parameter_server.compression: bf16 and fp16 pushes and pulls, synchronous within the codec's "
          "rounding of the float run, every process with the servers' model") {
  sy::transport::mpi t;
  if (t.size() < 2) return;
  namespace consistency = sy::strategy::consistency;
  const std::vector<float> floats = train(t, 8, sy::strategy::parameter_server<consistency::sync>(1));
  for (const sy::compression::format format : {sy::compression::format::fp16, sy::compression::format::bf16}) {
    CAPTURE(sy::compression::name(format));
    const std::vector<float> words = train(t, 8, sy::strategy::parameter_server<consistency::sync>(1, {}, format));
    check_identical_everywhere(t, words);
    const float bound = format == sy::compression::format::fp16 ? 8 * sy::compression::fp16::unit_roundoff
                                                                 : 8 * sy::compression::bf16::unit_roundoff;
    CHECK(fixtures::max_difference(words, floats) < bound);
    check_identical_everywhere(t, train(t, 8, sy::strategy::parameter_server<>(1, {}, format)));
  }
}

TEST_CASE("mpi.train.parameter_server.colocated: every process works and serves its shard on a thread; synchronous "
          "equals all-reduce, asynchronous, bounded and bf16 end with one model everywhere") {
  sy::transport::mpi t;
  REQUIRE(t.serves_concurrent_threads());  // main.cpp asks for threading::multiple
  namespace consistency = sy::strategy::consistency;
  using sy::strategy::colocated;
  {
    // The shard layout: each process's optimizer holds its own block of the arena.
    const auto data = fixtures::quadrants(48, 7);
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::strategy::parameter_server<> ps(colocated);
    ps.setup(t, model, optimizer);
    CHECK(ps.servers() == static_cast<std::size_t>(t.size()));
    CHECK(optimizer.export_state().size ==
          sy::block_of(model.parameters().size(), static_cast<std::size_t>(t.size()),
                       static_cast<std::size_t>(t.rank()))
              .size);
  }
  const std::vector<float> served = train(t, 8, sy::strategy::parameter_server<consistency::sync>(colocated));
  const std::vector<float> reference =
      sy::transport::run_inproc(t.size(), [&](sy::transport::inproc& local) { return train(local, 8); }).front();
  CHECK(fixtures::max_difference(served, reference) < 1e-5);
  check_identical_everywhere(t, served);
  check_identical_everywhere(t, train(t, 8, sy::strategy::parameter_server<>(colocated)));
  check_identical_everywhere(t, train(t, 8, sy::strategy::parameter_server(colocated, consistency::bounded{1})));
  check_identical_everywhere(
      t, train(t, 8, sy::strategy::parameter_server<>(colocated, {}, sy::compression::format::bf16)));
}

TEST_CASE("mpi.train.parameter_server.colocated.pipelined: workers one exchange ahead; synchronous equals the same "
          "run in process, asynchronous (co-located and a server rank) ends with one model everywhere") {
  sy::transport::mpi t;
  namespace consistency = sy::strategy::consistency;
  using sy::strategy::colocated;
  constexpr auto none = sy::compression::format::none;
  constexpr auto one_ahead = sy::strategy::pipelining::one_ahead;
  const sy::strategy::parameter_server<consistency::sync> delayed(colocated, {}, none, one_ahead);
  const std::vector<float> served = train(t, 8, delayed);
  const std::vector<float> reference =
      sy::transport::run_inproc(t.size(), [&](sy::transport::inproc& local) { return train(local, 8, delayed); })
          .front();
  CHECK(fixtures::max_difference(served, reference) < 1e-5);
  check_identical_everywhere(t, served);
  check_identical_everywhere(t, train(t, 8, sy::strategy::parameter_server<>(colocated, {}, none, one_ahead)));
  if (t.size() >= 2) check_identical_everywhere(t, train(t, 8, sy::strategy::parameter_server<>(1, {}, none, one_ahead)));
}

namespace {

// Trains the small mlp on the quadrant problem for 3 epochs of batches of 8 under the switch
// `prototype`; `watch(trainer)` runs before training, `examine(trainer, history)` after, and every
// process's parameters are checked identical.
template <class Switch, class Watch, class Examine>
void train_switch(sy::transport::mpi& t, Switch prototype, Watch watch, Examine examine) {
  const auto data = fixtures::quadrants(480, 7);
  sy::nn::mlp model{11, {8, 8, 1}, 4};
  sy::optim::sgd optimizer{model.parameters().size(), 0.05};
  sy::train::trainer_options options;
  options.epochs = 3;
  options.batch_size = 8;
  sy::train::trainer trainer{model, optimizer, prototype, options};
  watch(trainer);
  const sy::train::history h = trainer.fit(t, data, *data);
  examine(trainer, h);
  check_identical_everywhere(t, std::vector<float>(model.parameters().begin(), model.parameters().end()));
}

}  // namespace

TEST_CASE("mpi.train.switch: both orders switch after the same epoch with identical parameters everywhere") {
  sy::transport::mpi t;
  if (t.size() < 2) return;
  auto check = [&](auto prototype, const char* second) {
    train_switch(t, prototype, [](auto&) {}, [&](auto& trainer, const sy::train::history& h) {
      CHECK(trainer.strategy().switched_after_epoch() == 1u);
      CHECK(h.last().stage == second);
    });
  };
  using ps = sy::strategy::parameter_server<>;
  using ar = sy::strategy::all_reduce<>;
  check(sy::strategy::switch_to{ps{1}, ar{}, sy::trigger::after_epochs{1}}, "allreduce");
  check(sy::strategy::switch_to{ar{}, ps{1}, sy::trigger::after_epochs{1}}, "ps");
  check(sy::strategy::switch_to{ps{sy::strategy::colocated}, ar{}, sy::trigger::after_epochs{1}}, "allreduce");
  check(sy::strategy::switch_to{ar{}, ps{sy::strategy::colocated}, sy::trigger::after_epochs{1}}, "ps");
}

namespace {

// A user's strategy of the two required members: each process trains its replica alone.
struct independent_replicas {
  std::optional<std::vector<float>> first_parameters;  // at this stage's first step on this process
  [[nodiscard]] std::string_view name() const noexcept { return "independent"; }
  template <class Transport, class Model, class Optimizer>
  void step(Transport&, Model& m, Optimizer& o) {
    if (!first_parameters) first_parameters.emplace(m.parameters().begin(), m.parameters().end());
    o.step(m.parameters(), m.gradients());
  }
};

}  // namespace

TEST_CASE("mpi.train.two_members: name() and step() alone train in the trainer and in either order of a switch, "
          "every stage starting from identical replicas") {
  sy::transport::mpi t;
  using ar = sy::strategy::all_reduce<>;
  // Trains 3 epochs under `prototype` from a start that differs per process; returns the strategy.
  const auto trained = [&](auto prototype) {
    const auto data = fixtures::quadrants(480, 7);
    sy::nn::mlp model{11 + static_cast<std::uint64_t>(t.rank()), {8, 8, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::train::trainer_options options;
    options.epochs = 3;
    options.batch_size = 8;
    sy::train::trainer trainer{model, optimizer, prototype, options};
    const sy::train::history h = trainer.fit(t, data, *data);
    CHECK(h.epochs.size() == 3u);
    return trainer.strategy();
  };
  // First: the default setup gives every process rank 0's parameters before the first step.
  const auto first = trained(sy::strategy::switch_to{independent_replicas{}, ar{}, sy::trigger::after_epochs{2}});
  check_identical_everywhere(t, first.first().first_parameters.value());
  // Second, after all-reduce and after a parameter server: the default setup again.
  const auto after_ar = trained(sy::strategy::switch_to{ar{}, independent_replicas{}, sy::trigger::after_epochs{1}});
  check_identical_everywhere(t, after_ar.second().first_parameters.value());
  if (t.size() < 2) return;
  const auto after_ps = trained(sy::strategy::switch_to{sy::strategy::parameter_server<>{1}, independent_replicas{},
                                                        sy::trigger::after_epochs{1}});
  check_identical_everywhere(t, after_ps.second().first_parameters.value());
}

TEST_CASE("mpi.train.switch.within_epoch: a step trigger switches every process after the same batch") {
  sy::transport::mpi t;
  if (t.size() < 2) return;
  const auto ranks = static_cast<std::uint64_t>(t.size());
  auto check = [&](auto prototype, std::uint64_t batches, const std::string& stages) {
    std::vector<std::pair<std::string, double>> losses;  // this process's steps, in order
    train_switch(
        t, prototype,
        [&](auto& trainer) {
          trainer.on_step([&](const sy::train::step_record& s) { losses.emplace_back(s.stage, s.loss); });
        },
        [&](auto& trainer, const sy::train::history& h) {
          CHECK(trainer.strategy().switched_after_batches() == batches);
          CHECK(trainer.strategy().switched_after_epoch() == 1u);
          CHECK(h.epochs[1].stage == stages);
        });
    // No jump: rank 0 works in both stages; its 4 steps after the switch against the 4 before.
    if (t.rank() != 0 || t.size() < 2) return;
    const std::string second = stages.substr(stages.find('>') + 1);
    const auto boundary = std::find_if(losses.begin(), losses.end(), [&](const auto& s) { return s.first == second; });
    REQUIRE(boundary - losses.begin() >= 4);
    REQUIRE(losses.end() - boundary >= 4);
    auto mean = [](auto first, auto last) {
      double sum = 0;
      for (auto it = first; it != last; ++it) sum += it->second;
      return sum / static_cast<double>(last - first);
    };
    CHECK(mean(boundary, boundary + 4) < 1.25 * mean(boundary - 4, boundary) + 0.02);
  };
  using ps = sy::strategy::parameter_server<>;
  using ar = sy::strategy::all_reduce<>;
  // 60 batches an epoch; the switch lands on batch 90, or on the first multiple of the
  // all-reduce's workers at or above it.
  check(sy::strategy::switch_to{ps{1}, ar{}, sy::trigger::after_steps{90}}, 90, "ps>allreduce");
  check(sy::strategy::switch_to{ar{}, ps{1}, sy::trigger::after_steps{90}}, (90 + ranks - 1) / ranks * ranks,
        "allreduce>ps");
}

TEST_CASE("mpi.train.flush_subnormals: steps, the servers' loop and evaluation run flushed in every process; the "
          "process's mode comes back") {
  if constexpr (!sy::can_flush_subnormals) return;
  sy::transport::mpi t;
  REQUIRE_FALSE(sy::subnormals_flushed());
  const auto data = fixtures::quadrants(96, 7);
  for (const bool served : {false, true}) {
    if (served && t.size() < 2) continue;
    CAPTURE(served);
    fixtures::flush_counts computed, evaluated, stepped;
    fixtures::recording_mlp model(computed, evaluated);
    fixtures::recording_sgd optimizer(model.parameters().size(), stepped);
    sy::train::trainer_options options;
    options.epochs = 2;
    options.batch_size = 8;
    if (served) {
      sy::train::trainer trainer{model, optimizer, sy::strategy::parameter_server<>(1), options};
      trainer.fit(t, data, *data);
    } else {
      sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, options};
      trainer.fit(t, data, *data);
    }
    CHECK_FALSE(sy::subnormals_flushed());
    // This process's calls; under a parameter server only the server (the last rank) updates.
    const bool serves = served && t.rank() == t.size() - 1;
    CHECK(computed.kept + evaluated.kept + stepped.kept == 0);
    CHECK(evaluated.flushed > 0);
    CHECK((computed.flushed > 0) == !serves);
    CHECK((stepped.flushed > 0) == (serves || !served));
  }
}


TEST_CASE("mpi.train.alternate.sampled: a straggler seen every few steps sends every process to the server and "
          "back after the same batches") {
  // Passive waits: processes that spin while they wait would take the cores from the sleeping
  // straggler (4 processes on 2 cores), and every step time would measure the scheduler.
  sy::transport::mpi t{sy::transport::mpi_options{.wait = sy::transport::mpi_wait::passive}};
  if (t.size() < 3) return;  // two workers at least under the server, and three under all-reduce
  using ar = sy::strategy::all_reduce<>;
  using ps = sy::strategy::parameter_server<>;
  const sy::strategy::alternate adaptive{
      ar{}, ps{1}, sy::trigger::straggler_detected{.ratio = 2.5, .window = 3, .dwell = 3, .every = 3},
      sy::trigger::stragglers_gone{.ratio = 1.5, .window = 3, .dwell = 3, .every = 3}};
  const auto data = fixtures::quadrants(480, 7);
  using std::chrono::milliseconds;
  fixtures::paced_mlp model{milliseconds(6), fixtures::pacing::at_least};
  sy::optim::sgd optimizer{model.parameters().size(), 0.05};
  sy::train::trainer_options options;
  options.epochs = 6;
  options.batch_size = 8;
  sy::train::trainer trainer{model, optimizer, adaptive, options};
  // Rank 1, a worker under either stage, computes 30 ms a pass during its passes 20 to 49 (from
  // epoch 2 on), 6 ms otherwise.
  std::size_t passes = 0;
  trainer.on_step([&](const sy::train::step_record&) {
    ++passes;
    model.delay = t.rank() == 1 && passes >= 20 && passes < 50 ? milliseconds(30) : milliseconds(6);
  });
  const sy::train::history h = trainer.fit(t, data, *data);
  const auto& switches = trainer.strategy().switches();
  REQUIRE(switches.size() == 2);
  CHECK(switches[0].to == "ps");
  CHECK(switches[1].to == "allreduce");
  CHECK(switches[0].after_epoch >= 1);
  CHECK(h.epochs.back().stage.ends_with("allreduce"));
  // Every process switched after the same batches, and ends with the same bits.
  std::uint64_t where = 0;
  for (const auto& s : switches) where = where * 1000003 + s.after_epoch * 1009 + s.at_batch.value_or(1008);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(t.size()));
  sy::collective::allgather(t, std::vector<std::uint64_t>{where}, all);
  for (std::uint64_t w : all) CHECK(w == all[0]);
  check_identical_everywhere(t, {model.parameters().begin(), model.parameters().end()});
}

#include <switchyard/strategy/parameter_server.hpp>

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>

#include "../nn/logistic_regression.hpp"
#include "../train/fixtures.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace sy = switchyard;
namespace consistency = sy::strategy::consistency;

static_assert(sy::strategy::policy<sy::strategy::parameter_server<>, sy::nn::mlp<>, sy::optim::sgd<>,
                                  sy::transport::inproc>);
// A run-time bound deduces the dynamic staleness (not bounded<0>, which would say "synchronous"),
// a fixed one takes no value.
static_assert(std::is_same_v<decltype(consistency::bounded{2}), consistency::bounded<sy::dynamic_threshold>>);
static_assert(!std::is_constructible_v<consistency::bounded<2>, std::size_t>);
static_assert(!std::is_default_constructible_v<consistency::bounded<>>);
static_assert(consistency::bounded<2>{}.value() == 2 && consistency::bounded{3}.value() == 3);
// A bound taken at run time must be passed to the stage, which is then not default constructible;
// asking (as an alternate or switch_to holding it does) compiles and says so.
static_assert(!std::is_default_constructible_v<sy::strategy::parameter_server<consistency::backups<>>>);
static_assert(!std::is_default_constructible_v<sy::strategy::parameter_server<consistency::bounded<>>>);
static_assert(std::is_constructible_v<sy::strategy::parameter_server<consistency::backups<>>, std::size_t,
                                      consistency::backups<>>);
static_assert(std::is_default_constructible_v<sy::strategy::parameter_server<consistency::backups<1>>>);
static_assert(std::is_constructible_v<sy::strategy::parameter_server<>, sy::strategy::colocated_servers>);

namespace {

struct outcome {
  std::vector<float> parameters;
  sy::train::history history;
  sy::strategy::ps_statistics statistics;
  bool served = false;
  std::uint64_t schedule_clock = 0;  // of the optimizer state every rank holds after training
};

// A worker that sleeps a fixed time after each step: long against a step of the quadrant mlp
// (about 0.1 ms) and a server update, even under ThreadSanitizer, so the fast workers run far
// ahead whatever the machine's load.
struct straggler {
  int rank = -1;
  double delay_seconds = 0.0;
};

// Trains `Model` on the quadrant problem under `strategy` over `ranks` in-process ranks.
template <class Model = sy::nn::mlp<>, class Strategy>
std::vector<outcome> train(int ranks, Strategy strategy, std::size_t batch, std::size_t epochs,
                           straggler slow = {}, double lr = 0.05) {
  const auto data = fixtures::quadrants(480, 7);
  const auto test = fixtures::quadrants(200, 8);
  return sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
    Model model = [] {
      if constexpr (std::is_same_v<Model, logistic_regression>) {
        return logistic_regression{64, 4};
      } else {
        return sy::nn::mlp<>{11, {8, 8, 1}, 4};
      }
    }();
    sy::optim::sgd optimizer{model.parameters().size(), lr};
    sy::train::trainer_options options;
    options.epochs = epochs;
    options.batch_size = batch;
    options.seed = 3;
    sy::train::trainer trainer{model, optimizer, strategy, options};
    if (slow.rank == t.rank()) {
      trainer.on_step([&](const sy::train::step_record&) {
        std::this_thread::sleep_for(std::chrono::duration<double>(slow.delay_seconds));
      });
    }
    outcome result;
    result.history = trainer.fit(t, data, *test);
    result.parameters.assign(model.parameters().begin(), model.parameters().end());
    if constexpr (requires { trainer.strategy().statistics(); }) result.statistics = trainer.strategy().statistics();
    result.served = !sy::strategy::traits::worker_index(trainer.strategy(), t).has_value();
    result.schedule_clock = optimizer.export_state().clock;
    return result;
  });
}


}  // namespace

TEST_CASE("parameter_server.sync: equals all-reduce on the same data order (1x2 and 2x3)" * doctest::timeout(300)) {
  for (const auto& layout : {std::pair{1, 2}, std::pair{2, 3}}) {
    const int servers = layout.first;
    const int workers = layout.second;
    CAPTURE(servers);
    CAPTURE(workers);
    const auto reference = train(workers, sy::strategy::all_reduce<>{}, 8, 2).front().parameters;
    const auto runs = train(servers + workers, sy::strategy::parameter_server<consistency::sync>(servers), 8, 2);
    for (const outcome& r : runs) {
      CHECK(fixtures::max_difference(r.parameters, reference) < 1e-5);
      // Each synchronous update trains one batch of every worker; the schedule counts them all.
      CHECK(r.schedule_clock == 2u * (480 / (8 * static_cast<std::size_t>(workers))) * static_cast<std::size_t>(workers));
    }
  }
}

TEST_CASE("parameter_server.layouts: every rank ends with the servers' model (1x1, 1x3, 2x2, 3x4)" *
          doctest::timeout(300)) {
  for (const auto& layout : {std::pair{1, 1}, std::pair{1, 3}, std::pair{2, 2}, std::pair{3, 4}}) {
    const int servers = layout.first;
    const int workers = layout.second;
    CAPTURE(servers);
    CAPTURE(workers);
    const auto runs = train(servers + workers, sy::strategy::parameter_server<>(servers), 8, 3);
    std::uint64_t updates = 0;
    const std::uint64_t batches = static_cast<std::uint64_t>(workers) * 3 * (480 / (8 * static_cast<std::size_t>(workers)));
    for (const outcome& r : runs) {
      CHECK(r.parameters == runs.front().parameters);
      CHECK(r.schedule_clock == batches);  // one batch per asynchronous update
      CHECK(r.history.last().test_accuracy > 0.9);
      if (r.served) updates += r.statistics.updates;
    }
    // Async: every push of every worker is one update on each server.
    CHECK(updates == static_cast<std::uint64_t>(servers) * batches);
  }
}

TEST_CASE("parameter_server.bounded: with a slow worker no gradient is staler than K" * doctest::timeout(300)) {
  for (std::size_t k : {0u, 2u}) {
    CAPTURE(k);
    const auto runs = train(4, sy::strategy::parameter_server(1, consistency::bounded{k}), 8, 2, {0, 0.02});
    const outcome& server = runs.back();
    REQUIRE(server.served);
    CHECK(server.statistics.max_staleness() <= k);
    if (k > 0) CHECK(server.statistics.max_staleness() == k);  // the slow worker makes the bound bite
    std::uint64_t counted = 0;
    for (std::uint64_t c : server.statistics.staleness) counted += c;
    CHECK(counted == server.statistics.updates);
  }
}

namespace {

// What every backup-worker run must show: every rank ends with the servers' model, every server
// counted only pushes of its current round, and every server closed the same rounds (else the
// trainer's last hand-over, which assembles the optimizer state from the shards, would have
// refused them). With several servers a push can reach a shard late without being counted stale
// (docs/design.md, backup workers): this does not check freshness per shard.
// `colocated`: every rank serves (and `outcome::served`, which says a rank only serves, is false).
void check_backups(const std::vector<outcome>& runs, std::size_t workers, std::size_t backups, bool colocated) {
  const std::size_t quorum = backups >= workers ? 1 : workers - backups;
  std::optional<std::uint64_t> updates;
  for (const outcome& r : runs) {
    CHECK(r.parameters == runs.front().parameters);
    CHECK(r.history.last().test_accuracy > 0.85);
    if (!r.served && !colocated) continue;
    const sy::strategy::ps_statistics& s = r.statistics;
    CHECK(s.max_staleness() == 0);
    std::uint64_t accepted = 0;
    for (std::uint64_t c : s.staleness) accepted += c;
    // Each update averages the quorum's pushes, or fewer at a part's end, when fewer workers are
    // left; and the other pushes were dropped.
    CHECK(accepted <= quorum * s.updates);
    CHECK(accepted >= s.updates);
    CHECK(s.updates > 0);
    if (!updates) updates = s.updates;
    CHECK(s.updates == *updates);
  }
  // The schedule counts W - B batches per update.
  REQUIRE(updates);
  CHECK(runs.front().schedule_clock == quorum * *updates);
}

}  // namespace

TEST_CASE("parameter_server.backups: with a straggler, each update averages the first W - B gradients of its round "
          "and drops the straggler's late ones, on every layout (1x3, 2x3, 3x4; 2, 3, 4 co-located)" *
          doctest::timeout(300)) {
  for (const auto& layout : {std::pair{1, 3}, std::pair{2, 3}, std::pair{3, 4}}) {
    const int servers = layout.first;
    const int workers = layout.second;
    CAPTURE(servers);
    CAPTURE(workers);
    const auto runs = train(servers + workers, sy::strategy::parameter_server(servers, consistency::backups{1}), 8, 2,
                            {0, 0.02});
    check_backups(runs, static_cast<std::size_t>(workers), 1, false);
    std::uint64_t dropped = 0;
    for (const outcome& r : runs) dropped += r.statistics.dropped;
    CHECK(dropped > 0);  // the straggler's gradients come a round late
  }
  for (int ranks = 2; ranks <= 4; ++ranks) {
    CAPTURE(ranks);
    const auto runs = train(ranks, sy::strategy::parameter_server(sy::strategy::colocated, consistency::backups{1}), 8,
                            2, {ranks - 1, 0.02});
    check_backups(runs, static_cast<std::size_t>(ranks), 1, true);
    std::uint64_t dropped = 0;
    for (const outcome& r : runs) dropped += r.statistics.dropped;
    CHECK(dropped > 0);
  }
}

TEST_CASE("parameter_server.backups: without a straggler, and with as many backups as workers (one push a round); "
          "under bf16 compression" * doctest::timeout(300)) {
  check_backups(train(3, sy::strategy::parameter_server(sy::strategy::colocated, consistency::backups{1},
                                                        sy::compression::format::bf16),
                      8, 2, {2, 0.02}),
                3, 1, true);
  for (int ranks = 1; ranks <= 4; ++ranks) {
    CAPTURE(ranks);
    check_backups(train(ranks, sy::strategy::parameter_server(sy::strategy::colocated, consistency::backups<1>{}), 8, 2),
                  static_cast<std::size_t>(ranks), 1, true);
    check_backups(train(ranks + 1, sy::strategy::parameter_server(1, consistency::backups{9}), 8, 2),
                  static_cast<std::size_t>(ranks), 9, false);
  }
}

TEST_CASE("parameter_server.backups: refused with pipelined workers, whose every push is one exchange old") {
  CHECK_THROWS_WITH_AS(train(2, sy::strategy::parameter_server(1, consistency::backups{1}, sy::compression::format::none,
                                                               sy::strategy::pipelining::one_ahead),
                             8, 1),
                       doctest::Contains("backup workers drop every gradient computed on parameters older"),
                       sy::usage_error);
}

namespace {

// A user's consistency policy: a reply waits while its worker is more than one step ahead of the
// slowest (what bounded<1> does), written from the documented interface alone.
struct one_step_ahead {
  [[nodiscard]] std::size_t max_lead() const { return 1; }
};

// A user's synchronous policy: one gradient of every worker per update, like consistency::sync.
struct lockstep {
  static constexpr bool synchronous = true;
  [[nodiscard]] std::size_t max_lead() const { return 0; }
};

}  // namespace

static_assert(sy::strategy::consistency::policy<one_step_ahead>);
static_assert(!sy::strategy::consistency::policy<int>);
static_assert(!sy::strategy::consistency::is_synchronous<one_step_ahead>);
static_assert(sy::strategy::consistency::is_synchronous<lockstep>);

TEST_CASE("parameter_server.consistency: a user's policy bounds the staleness it says, and a user's synchronous "
          "policy matches consistency::sync" * doctest::timeout(300)) {
  const auto runs = train(4, sy::strategy::parameter_server<one_step_ahead>(1), 8, 2, {0, 0.02});
  REQUIRE(runs.back().served);
  CHECK(runs.back().statistics.max_staleness() == 1u);  // the slow worker makes the bound bite
  const auto user = train(4, sy::strategy::parameter_server<lockstep>(1), 8, 2);
  const auto shipped = train(4, sy::strategy::parameter_server<consistency::sync>(1), 8, 2);
  for (std::size_t r = 0; r < user.size(); ++r) CHECK(user[r].parameters == shipped[r].parameters);
}

TEST_CASE("parameter_server.double: a model of doubles is served in doubles" * doctest::timeout(300)) {
  const auto data = fixtures::quadrants(480, 7);
  const auto runs = sy::transport::run_inproc(3, [&](sy::transport::inproc& t) {
    sy::nn::mlp<double> model{11, {8, 8, 1}, 4};
    sy::optim::sgd<sy::optim::constant, double> optimizer{model.parameters().size(), sy::optim::constant{0.05}};
    sy::train::trainer_options options;
    options.epochs = 3;
    options.batch_size = 8;
    sy::train::trainer trainer{model, optimizer, sy::strategy::parameter_server<>(1), options};
    const sy::train::history h = trainer.fit(t, data, *data);
    CHECK(h.last().test_accuracy > 0.9);
    return std::vector<double>(model.parameters().begin(), model.parameters().end());
  });
  for (const auto& r : runs) CHECK(r == runs[0]);
}

TEST_CASE_TEMPLATE("parameter_server.compression: 16-bit pushes and pulls train as floats do, with half the bytes, "
                   "and every rank ends with the servers' model" * doctest::timeout(300),
                   Codec, sy::compression::fp16, sy::compression::bf16) {
  constexpr sy::compression::format format =
      std::is_same_v<Codec, sy::compression::fp16> ? sy::compression::format::fp16 : sy::compression::format::bf16;
  for (const auto& layout : {std::pair{1, 2}, std::pair{2, 3}}) {
    const int servers = layout.first;
    const int workers = layout.second;
    CAPTURE(servers);
    CAPTURE(workers);
    const auto floats = train(servers + workers, sy::strategy::parameter_server<consistency::sync>(servers), 8, 2);
    const auto words =
        train(servers + workers, sy::strategy::parameter_server<consistency::sync>(servers, {}, format), 8, 2);
    for (const outcome& r : words) {
      CHECK(r.parameters == words.front().parameters);
      CHECK(r.history.last().test_accuracy > 0.9);
    }
    // Deterministic (synchronous), so the runs differ by the codec's roundings alone: the pulled
    // copies and the pushes, with the pushes' error fed back.
    const double difference = fixtures::max_difference(words.front().parameters, floats.front().parameters);
    CAPTURE(difference);
    CHECK(difference < 8 * Codec::unit_roundoff);
    CHECK(words.front().statistics.bytes_pushed * 2 == floats.front().statistics.bytes_pushed);
    CHECK(words.front().statistics.bytes_pulled * 2 == floats.front().statistics.bytes_pulled);
  }
  const auto async = train(4, sy::strategy::parameter_server<>(1, {}, format), 8, 3);
  for (const outcome& r : async) {
    CHECK(r.parameters == async.front().parameters);
    CHECK(r.history.last().test_accuracy > 0.9);
  }
}

TEST_CASE("parameter_server.compression: refused for a model of doubles, naming the format and the width") {
  const auto data = fixtures::quadrants(48, 7);
  CHECK_THROWS_WITH_AS(sy::transport::run_inproc(3,
                                                 [&](sy::transport::inproc& t) {
                                                   sy::nn::mlp<double> model{11, {8, 1}, 4};
                                                   sy::optim::sgd<sy::optim::constant, double> optimizer{
                                                       model.parameters().size(), sy::optim::constant{0.05}};
                                                   sy::train::trainer trainer{
                                                       model, optimizer,
                                                       sy::strategy::parameter_server<>(
                                                           1, {}, sy::compression::format::bf16),
                                                       sy::train::trainer_options{}};
                                                   trainer.fit(t, data, *data);
                                                 }),
                       doctest::Contains("bf16 compression encodes float parameters; this model's are 64-bit"),
                       sy::usage_error);
}

TEST_CASE("parameter_server.async: converges on a convex problem and on an mlp, staleness recorded" *
          doctest::timeout(300)) {
  const auto convex = train<logistic_regression>(4, sy::strategy::parameter_server<>(1), 8, 4, {0, 0.02}, 0.01);
  CHECK(convex.front().history.last().test_accuracy > 0.95);
  CHECK(convex.front().history.last().train_loss < convex.front().history.epochs.front().train_loss);
  const auto mlp = train(4, sy::strategy::parameter_server<>(1), 8, 4, {0, 0.02});
  CHECK(mlp.front().history.last().test_accuracy > 0.9);
  // The fast workers run ahead of the slow one: async lets them.
  CHECK(mlp.back().statistics.max_staleness() > 2);
  CHECK(mlp.front().statistics.bytes_pushed > 0);
  CHECK(mlp.front().statistics.worker_wait_seconds > 0);
  CHECK(mlp.back().statistics.server_busy_seconds <= mlp.back().statistics.server_seconds);
}

TEST_CASE("parameter_server.errors: impossible layouts are refused on every rank before training") {
  auto refuse = [](int ranks, std::size_t servers) {
    const auto data = fixtures::quadrants(64, 1);
    return sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) -> std::string {
      sy::nn::mlp model{1, {8, 8, 1}, 4};
      sy::optim::sgd optimizer{model.parameters().size(), 0.05};
      sy::train::trainer_options options;
      options.batch_size = 4;
      sy::train::trainer trainer{model, optimizer, sy::strategy::parameter_server<>(servers), options};
      try {
        trainer.fit(t, data, *data);
      } catch (const sy::usage_error& e) {
        return e.what();
      }
      return "no error";
    });
  };
  for (const std::string& what : refuse(3, 3)) CHECK(what.find("3 servers among 3 ranks") != std::string::npos);
  for (const std::string& what : refuse(2, 0)) CHECK(what.find("0 servers among 2 ranks") != std::string::npos);
}

TEST_CASE("parameter_server.errors: a model smaller than the server count is refused") {
  sy::transport::run_inproc(3, [](sy::transport::inproc& t) {
    struct tiny {
      std::vector<float> p = std::vector<float>(1), g = std::vector<float>(1);
      std::span<float> parameters() { return p; }
      std::span<float> gradients() { return g; }
    } model;
    sy::optim::sgd optimizer{1, 0.1};
    sy::strategy::parameter_server<> ps(2);
    CHECK_THROWS_WITH_AS(ps.setup(t, model, optimizer), doctest::Contains("2 servers for a model of only 1"),
                         sy::usage_error);
  });
}

namespace {

// Trains 4 in-process ranks under `ps`; worker `failing` throws at its first step of epoch 2 (batches
// are handed out first come, first served, so only a worker's first batch is certain). Every rank
// must end, promptly, with that exception.
void check_failure_ends_every_rank(const sy::strategy::parameter_server<>& ps, int failing) {
  CAPTURE(failing);
  const auto data = fixtures::quadrants(480, 7);
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(sy::transport::run_inproc(4,
                                                 [&](sy::transport::inproc& t) {
                                                   sy::nn::mlp model{1, {8, 8, 1}, 4};
                                                   sy::optim::sgd optimizer{model.parameters().size(), 0.05};
                                                   sy::train::trainer_options options;
                                                   options.batch_size = 8;
                                                   options.epochs = 2;
                                                   sy::train::trainer trainer{model, optimizer, ps, options};
                                                   trainer.on_step([&](const sy::train::step_record& s) {
                                                     if (s.rank == failing && s.epoch == 2 && s.step == 0) {
                                                       throw std::runtime_error("a worker failed at epoch 2 step 0");
                                                     }
                                                   });
                                                   trainer.fit(t, data, *data);
                                                 }),
                       "a worker failed at epoch 2 step 0", std::runtime_error);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
}

}  // namespace

TEST_CASE("parameter_server.failure: a worker that throws mid-epoch ends every rank" * doctest::timeout(60)) {
  check_failure_ends_every_rank(sy::strategy::parameter_server<>(1), 1);
}

// Co-located servers: every rank works and serves one shard on a thread beside its worker.

TEST_CASE("parameter_server.colocated: each rank serves its byte-balanced shard (1, 2, 3, 4 ranks)") {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    CAPTURE(ranks);
    const auto shards = sy::transport::run_inproc(ranks, [](sy::transport::inproc& t) {
      struct ten {  // 10 parameters: 3 and 4 ranks get shards of two sizes
        std::vector<float> p = std::vector<float>(10), g = std::vector<float>(10);
        std::span<float> parameters() { return p; }
        std::span<float> gradients() { return g; }
      } model;
      sy::optim::sgd optimizer{model.parameters().size(), 0.05};
      sy::strategy::parameter_server<> ps(sy::strategy::colocated);
      CHECK(ps.colocated());
      CHECK(ps.servers() == 0);
      ps.setup(t, model, optimizer);
      CHECK(ps.servers() == static_cast<std::size_t>(t.size()));
      CHECK(ps.worker_count(t) == static_cast<std::size_t>(t.size()));
      CHECK(ps.worker_index(t) == static_cast<std::size_t>(t.rank()));
      return std::pair{optimizer.export_state().size, model.parameters().size()};
    });
    const std::size_t arena = shards.front().second;
    std::size_t total = 0;
    for (std::size_t r = 0; r < shards.size(); ++r) {
      CHECK(shards[r].first == sy::block_of(arena, shards.size(), r).size);
      CHECK(shards[r].first >= arena / shards.size());
      CHECK(shards[r].first <= arena / shards.size() + 1);
      total += shards[r].first;
    }
    CHECK(total == arena);
  }
}

TEST_CASE("parameter_server.colocated: synchronous equals all-reduce on the same ranks (1, 2, 3, 4)" *
          doctest::timeout(300)) {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    CAPTURE(ranks);
    const auto reference = train(ranks, sy::strategy::all_reduce<>{}, 8, 2).front().parameters;
    const auto runs = train(ranks, sy::strategy::parameter_server<consistency::sync>(sy::strategy::colocated), 8, 2);
    for (const outcome& r : runs) {
      CHECK_FALSE(r.served);  // every rank is a worker
      CHECK(fixtures::max_difference(r.parameters, reference) < 1e-5);
      CHECK(r.schedule_clock == 2u * (480 / (8 * static_cast<std::size_t>(ranks))) * static_cast<std::size_t>(ranks));
    }
  }
}

TEST_CASE("parameter_server.colocated: asynchronous and bounded, every rank ends with the servers' model "
          "(1, 2, 3, 4 ranks)" * doctest::timeout(300)) {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    CAPTURE(ranks);
    const auto runs = train(ranks, sy::strategy::parameter_server<>(sy::strategy::colocated), 8, 3);
    const std::uint64_t batches = 3 * (480 / 8);
    std::uint64_t updates = 0;
    for (const outcome& r : runs) {
      CHECK(r.parameters == runs.front().parameters);
      CHECK(r.schedule_clock == batches);
      CHECK(r.history.last().test_accuracy > 0.9);
      CHECK(r.statistics.server_busy_seconds <= r.statistics.server_seconds);
      CHECK(r.statistics.bytes_pushed > 0);
      updates += r.statistics.updates;
    }
    // Every push of every worker is one update on each of the `ranks` servers.
    CHECK(updates == static_cast<std::uint64_t>(ranks) * batches);
  }
  for (std::size_t k : {0u, 2u}) {
    CAPTURE(k);
    const auto runs = train(3, sy::strategy::parameter_server(sy::strategy::colocated, consistency::bounded{k}), 8, 2,
                            {0, 0.02});
    for (const outcome& r : runs) {
      CHECK(r.parameters == runs.front().parameters);
      CHECK(r.statistics.max_staleness() <= k);
    }
    if (k > 0) CHECK(runs.front().statistics.max_staleness() == k);  // the slow worker makes the bound bite
  }
}

TEST_CASE_TEMPLATE("parameter_server.colocated: 16-bit pushes and pulls, and doubles" * doctest::timeout(300), Codec,
                   sy::compression::fp16, sy::compression::bf16) {
  constexpr sy::compression::format format =
      std::is_same_v<Codec, sy::compression::fp16> ? sy::compression::format::fp16 : sy::compression::format::bf16;
  const auto floats = train(3, sy::strategy::parameter_server<consistency::sync>(sy::strategy::colocated), 8, 2);
  const auto words =
      train(3, sy::strategy::parameter_server<consistency::sync>(sy::strategy::colocated, {}, format), 8, 2);
  for (const outcome& r : words) {
    CHECK(r.parameters == words.front().parameters);
    CHECK(r.history.last().test_accuracy > 0.9);
  }
  CHECK(fixtures::max_difference(words.front().parameters, floats.front().parameters) < 8 * Codec::unit_roundoff);
  CHECK(words.front().statistics.bytes_pushed * 2 == floats.front().statistics.bytes_pushed);

  const auto data = fixtures::quadrants(480, 7);
  const auto doubles = sy::transport::run_inproc(3, [&](sy::transport::inproc& t) {
    sy::nn::mlp<double> model{11, {8, 8, 1}, 4};
    sy::optim::sgd<sy::optim::constant, double> optimizer{model.parameters().size(), sy::optim::constant{0.05}};
    sy::train::trainer_options options;
    options.epochs = 3;
    options.batch_size = 8;
    sy::train::trainer trainer{model, optimizer, sy::strategy::parameter_server<>(sy::strategy::colocated), options};
    CHECK(trainer.fit(t, data, *data).last().test_accuracy > 0.9);
    return std::vector<double>(model.parameters().begin(), model.parameters().end());
  });
  for (const auto& r : doubles) CHECK(r == doubles[0]);
}

TEST_CASE("parameter_server.colocated: a worker that throws mid-epoch stops its serving thread and ends every "
          "rank" * doctest::timeout(120)) {
  // Rank 0 holds server 0, which hands out the batches; rank 2 only its shard.
  for (int failing : {0, 2}) {
    check_failure_ends_every_rank(sy::strategy::parameter_server<>(sy::strategy::colocated), failing);
  }
}

namespace {

// SGD whose update throws on one rank after some updates: the optimizer a co-located server calls
// on its serving thread.
struct failing_sgd : sy::optim::sgd<> {
  failing_sgd(std::size_t size, bool fails) : sy::optim::sgd<>(size, sy::optim::constant{0.05}), failing(fails) {}
  void step(std::span<float> parameters, std::span<const float> gradients) {
    if (failing && ++updates > 40) throw std::runtime_error("the server's update failed");
    sy::optim::sgd<>::step(parameters, gradients);
  }
  bool failing;
  std::size_t updates = 0;
};

// Trains the small mlp for 3 epochs on `t` under co-located servers, synchronous or not, with
// the optimizer `make(size)` returns.
template <class Transport, class Make>
void fit_colocated(Transport& t, Make make, bool synchronous) {
  const auto data = fixtures::quadrants(480, 7);
  sy::nn::mlp model{1, {8, 8, 1}, 4};
  auto optimizer = make(model.parameters().size());
  sy::train::trainer_options options;
  options.batch_size = 8;
  options.epochs = 3;
  auto fit = [&](auto ps) {
    sy::train::trainer trainer{model, optimizer, ps, options};
    trainer.fit(t, data, *data);
  };
  if (synchronous) {
    fit(sy::strategy::parameter_server<consistency::sync>(sy::strategy::colocated));
  } else {
    fit(sy::strategy::parameter_server<>(sy::strategy::colocated));
  }
}

}  // namespace

TEST_CASE("parameter_server.colocated: a server that throws ends every rank with its exception, promptly" *
          doctest::timeout(120)) {
  // Server 0 hands out the batches (its worker also waits for a hand-out), server 2 does not; the
  // synchronous servers hold every worker at each step.
  for (int failing : {0, 2}) {
    for (bool synchronous : {false, true}) {
      CAPTURE(failing);
      CAPTURE(synchronous);
      const auto started = std::chrono::steady_clock::now();
      CHECK_THROWS_WITH_AS(sy::transport::run_inproc(4,
                                                     [&](sy::transport::inproc& t) {
                                                       fit_colocated(
                                                           t,
                                                           [&](std::size_t size) {
                                                             return failing_sgd{size, t.rank() == failing};
                                                           },
                                                           synchronous);
                                                     }),
                           "the server's update failed", std::runtime_error);
      CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
    }
  }
}

TEST_CASE("parameter_server.colocated: a rank that transport::faulty kills ends every rank promptly, whichever of its "
          "threads meets the failure" * doctest::timeout(120)) {
  for (bool synchronous : {false, true}) {
    CAPTURE(synchronous);
    const auto started = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(sy::transport::run_inproc(4,
                                                   [&](sy::transport::inproc& inner) {
                                                     sy::transport::faulty t(inner,
                                                                             {.fail_rank = 2, .fail_after = 300});
                                                     fit_colocated(
                                                         t, [](std::size_t size) { return sy::optim::sgd{size, 0.05}; },
                                                         synchronous);
                                                   }),
                         doctest::Contains("rank 2: injected failure after 300 messages"), sy::transport_error);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  }
}

// Pipelined workers: each step's exchange overlaps the next batch's compute.

namespace {

constexpr auto one_ahead = sy::strategy::pipelining::one_ahead;

// Delayed synchronous SGD, the reference for a pipelined synchronous server: every rank keeps the
// servers' parameters, which take the ranks' mean gradient at once, and the model trains on them
// one step late, except at each epoch's first step, where it holds the servers' (the exchange
// still on the wire ended with the last epoch).
struct delayed_by_one {
  std::vector<float> server;
  std::vector<float> before;
  [[nodiscard]] std::string_view name() const { return "delayed"; }
  template <class Model, class Optimizer>
  void setup(sy::transport::inproc& t, Model& model, Optimizer&) {
    sy::collective::broadcast(t, sy::as_span(model.parameters()), 0);
    server.assign(model.parameters().begin(), model.parameters().end());
  }
  template <class Model, class Optimizer>
  void step(sy::transport::inproc& t, Model& model, Optimizer& optimizer) {
    sy::collective::allreduce(t, sy::as_span(model.gradients()), sy::ops::average{});
    before = server;
    optimizer.step(std::span<float>(server), std::span<const float>(sy::as_span(model.gradients())));
    std::copy(before.begin(), before.end(), model.parameters().begin());
  }
  template <class Model, class Optimizer>
  void end_epoch(sy::transport::inproc&, Model& model, Optimizer&) {
    std::copy(server.begin(), server.end(), model.parameters().begin());
  }
};

}  // namespace

TEST_CASE("parameter_server.pipelined: a synchronous server is delayed SGD, to the bit with one worker (a server "
          "rank and co-located), within rounding on 2 to 4 co-located ranks" * doctest::timeout(300)) {
  const auto reference = train(1, delayed_by_one{}, 8, 2).front().parameters;
  const auto unpipelined = train(2, sy::strategy::parameter_server<consistency::sync>(1), 8, 2).front().parameters;
  CHECK(fixtures::max_difference(unpipelined, reference) > 1e-4);  // the delay shows
  const auto dedicated = train(2, sy::strategy::parameter_server<consistency::sync>(
                                      1, {}, sy::compression::format::none, one_ahead), 8, 2);
  const auto colocated = train(1, sy::strategy::parameter_server<consistency::sync>(
                                      sy::strategy::colocated, {}, sy::compression::format::none, one_ahead), 8, 2);
  for (const outcome& r : dedicated) CHECK(r.parameters == reference);
  CHECK(colocated.front().parameters == reference);
  // More workers: the servers sum in worker order, the reference's all-reduce in its own.
  for (int ranks = 2; ranks <= 4; ++ranks) {
    CAPTURE(ranks);
    const auto delayed = train(ranks, delayed_by_one{}, 8, 2).front().parameters;
    for (const outcome& r : train(ranks, sy::strategy::parameter_server<consistency::sync>(
                                             sy::strategy::colocated, {}, sy::compression::format::none, one_ahead),
                                  8, 2)) {
      CHECK(fixtures::max_difference(r.parameters, delayed) < 1e-5);
    }
  }
}

TEST_CASE("parameter_server.pipelined: every batch trained once and every rank ends with the servers' model, "
          "asynchronous, bounded and synchronous (server ranks 1x3, 2x2; co-located 1 to 4)" *
          doctest::timeout(300)) {
  const auto none = sy::compression::format::none;
  const auto check_async = [](const std::vector<outcome>& runs, std::size_t workers, std::size_t servers) {
    const std::uint64_t batches = 3 * (480 / 8);
    std::uint64_t updates = 0;
    for (const outcome& r : runs) {
      CHECK(r.parameters == runs.front().parameters);
      CHECK(r.schedule_clock == batches);  // every batch handed out once, and trained
      CHECK(r.history.last().test_accuracy > 0.9);
      if (r.served || workers == runs.size()) updates += r.statistics.updates;
    }
    CHECK(updates == servers * batches);
  };
  for (const auto& layout : {std::pair{1, 3}, std::pair{2, 2}}) {
    const int servers = layout.first;
    const int workers = layout.second;
    CAPTURE(servers);
    CAPTURE(workers);
    check_async(train(servers + workers, sy::strategy::parameter_server<>(static_cast<std::size_t>(servers), {}, none,
                                                                          one_ahead), 8, 3),
                static_cast<std::size_t>(workers), static_cast<std::size_t>(servers));
  }
  for (int ranks = 1; ranks <= 4; ++ranks) {
    CAPTURE(ranks);
    const auto n = static_cast<std::size_t>(ranks);
    check_async(train(ranks, sy::strategy::parameter_server<>(sy::strategy::colocated, {}, none, one_ahead), 8, 3),
                n, n);
    // Synchronous: the workers keep their strided batches, one update per step of all of them.
    for (const outcome& r : train(ranks, sy::strategy::parameter_server<consistency::sync>(
                                             sy::strategy::colocated, {}, none, one_ahead), 8, 3)) {
      CHECK(r.schedule_clock == 3u * (480 / (8 * n)) * n);
      CHECK(r.history.last().test_accuracy > 0.9);
    }
  }
  // Bounded: the bound still bites with a slow worker, on the pushes the servers count.
  const auto bounded = train(3, sy::strategy::parameter_server(sy::strategy::colocated, consistency::bounded{2}, none,
                                                                one_ahead), 8, 2, {0, 0.02});
  for (const outcome& r : bounded) {
    CHECK(r.parameters == bounded.front().parameters);
    CHECK(r.statistics.max_staleness() <= 2);
  }
  CHECK(bounded.front().statistics.max_staleness() == 2);
}

namespace {

// The quadrant examples, counting how often the trainer reads each one (on every rank thread).
class counted_reads {
 public:
  explicit counted_reads(std::shared_ptr<const sy::data::dataset> data)
      : data_(std::move(data)), reads_(data_->size()) {}
  [[nodiscard]] std::size_t size() const { return data_->size(); }
  [[nodiscard]] std::size_t rows() const { return data_->rows(); }
  [[nodiscard]] std::size_t cols() const { return data_->cols(); }
  [[nodiscard]] std::span<const std::uint8_t> image(std::size_t i) const {
    reads_[i].fetch_add(1, std::memory_order_relaxed);
    return data_->image(i);
  }
  [[nodiscard]] std::uint8_t label(std::size_t i) const { return data_->label(i); }
  [[nodiscard]] std::vector<int> reads() const {
    std::vector<int> each;
    for (const auto& r : reads_) each.push_back(r.load());
    return each;
  }

 private:
  std::shared_ptr<const sy::data::dataset> data_;
  mutable std::vector<std::atomic<int>> reads_;
};

// Trains `epochs` epochs of `examples` quadrant examples in batches of 8 over `ranks` in-process
// ranks under `ps`; returns how often each example was read for training.
template <class Strategy>
std::vector<int> reads_per_example(int ranks, const Strategy& ps, std::size_t examples, std::size_t epochs) {
  const auto data = std::make_shared<counted_reads>(fixtures::quadrants(examples, 7));
  const auto test = fixtures::quadrants(40, 8);
  sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::train::trainer_options options;
    options.epochs = epochs;
    options.batch_size = 8;
    sy::train::trainer trainer{model, optimizer, ps, options};
    trainer.fit(t, data, *test);
  });
  return data->reads();
}

}  // namespace

TEST_CASE("parameter_server.pipelined: every example is trained once per epoch, also when an epoch has fewer than "
          "two batches per worker" * doctest::timeout(300)) {
  const auto none = sy::compression::format::none;
  // 480 examples: 60 batches; 40: 5 batches, fewer than the 8 that 4 workers start with.
  for (const std::size_t examples : {480u, 40u}) {
    CAPTURE(examples);
    for (int ranks = 1; ranks <= 4; ++ranks) {
      CAPTURE(ranks);
      if (examples < 8u * static_cast<std::size_t>(ranks)) continue;
      const std::vector<int> twice(examples, 2);
      CHECK(reads_per_example(ranks, sy::strategy::parameter_server<>(sy::strategy::colocated, {}, none, one_ahead),
                              examples, 2) == twice);
      if (ranks >= 2) {
        CHECK(reads_per_example(ranks, sy::strategy::parameter_server<>(1, {}, none, one_ahead), examples, 2) ==
              twice);
      }
    }
  }
}

TEST_CASE("parameter_server.pipelined: a co-located server that throws while its workers' pulls are on the wire "
          "ends every rank with its exception, promptly" * doctest::timeout(120)) {
  const auto data = fixtures::quadrants(480, 7);
  for (int failing : {0, 2}) {
    CAPTURE(failing);
    const auto started = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(sy::transport::run_inproc(4,
                                                   [&](sy::transport::inproc& t) {
                                                     sy::nn::mlp model{1, {8, 8, 1}, 4};
                                                     failing_sgd optimizer{model.parameters().size(),
                                                                           t.rank() == failing};
                                                     sy::train::trainer_options options;
                                                     options.batch_size = 8;
                                                     options.epochs = 3;
                                                     sy::train::trainer trainer{
                                                         model, optimizer,
                                                         sy::strategy::parameter_server<>(
                                                             sy::strategy::colocated, {},
                                                             sy::compression::format::none, one_ahead),
                                                         options};
                                                     trainer.fit(t, data, *data);
                                                   }),
                         "the server's update failed", std::runtime_error);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  }
}

TEST_CASE("parameter_server.pipelined: bf16 pushes and pulls, and a worker that fails" * doctest::timeout(300)) {
  const auto runs = train(3, sy::strategy::parameter_server<>(sy::strategy::colocated, {},
                                                              sy::compression::format::bf16, one_ahead), 8, 3);
  for (const outcome& r : runs) {
    CHECK(r.parameters == runs.front().parameters);
    CHECK(r.schedule_clock == 3u * (480 / 8));
    CHECK(r.history.last().test_accuracy > 0.9);
  }
  // The failing worker's exchange is on the wire when it throws.
  for (int failing : {0, 2}) {
    check_failure_ends_every_rank(
        sy::strategy::parameter_server<>(sy::strategy::colocated, {}, sy::compression::format::none, one_ahead),
        failing);
  }
  check_failure_ends_every_rank(sy::strategy::parameter_server<>(1, {}, sy::compression::format::none, one_ahead), 1);
}

namespace {

// An in-process handle that holds each blocking receive from its own rank for a while before it
// starts, and says when one began: a co-located server 0's receive of its own worker's compute
// report, the one blocking receive of a step, which it calls after taking the worker's push. The
// worker can fail meanwhile.
struct holds_own_report : sy::transport::inproc {
  holds_own_report(const sy::transport::inproc& t, std::shared_ptr<std::atomic<bool>> holding)
      : sy::transport::inproc(t), holding_(std::move(holding)) {}
  template <class T>
  void recv(std::span<T> data, int source, int tag) {
    if (source == rank()) {
      holding_->store(true, std::memory_order_release);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    sy::transport::inproc::recv(data, source, tag);
  }
  [[nodiscard]] holds_own_report split(int color, int key) {
    return holds_own_report(sy::transport::inproc::split(color, key), holding_, fail_push_to_);
  }
  // Its posts of pushes to rank `to` fail, once the rank's own server holds a receive open.
  holds_own_report(const sy::transport::inproc& t, std::shared_ptr<std::atomic<bool>> holding, int to)
      : holds_own_report(t, std::move(holding)) {
    fail_push_to_ = to;
  }
  template <class T>
  auto isend(std::span<const T> data, int destination, int tag) {
    if (destination == fail_push_to_ && tag == push_tag) {
      while (!holding_->load(std::memory_order_acquire)) std::this_thread::yield();
      throw std::runtime_error("the worker failed");
    }
    return sy::transport::inproc::isend(data, destination, tag);
  }

 private:
  static constexpr int push_tag = 31000;  // the parameter server's
  std::shared_ptr<std::atomic<bool>> holding_;
  int fail_push_to_ = -1;
};

}  // namespace

TEST_CASE("parameter_server.pipelined: a sampling server 0 whose own worker fails after its push was taken, and "
          "before its compute report was, ends promptly" * doctest::timeout(60)) {
  sy::transport::inproc_options options;
  options.timeout = std::chrono::seconds(10);  // what a wait for the cancelled report would end in
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(sy::transport::run_inproc(
                           1,
                           [](sy::transport::inproc& t) {
                             const auto holding = std::make_shared<std::atomic<bool>>(false);
                             holds_own_report held(t, holding);
                             sy::nn::mlp model{11, {8, 8, 1}, 4};
                             sy::optim::sgd optimizer{model.parameters().size(), 0.05};
                             sy::strategy::parameter_server<> ps(sy::strategy::colocated, {},
                                                                 sy::compression::format::none, one_ahead);
                             ps.setup(held, model, optimizer);
                             ps.stop_when({[](const sy::trigger::progress&) { return false; }, 1});
                             ps.begin_epoch(held, 10);
                             // Posts the report, the pulls and the push, and returns while they are on the wire.
                             [[maybe_unused]] const auto outcome = ps.step(held, model, optimizer);
                             while (!holding->load(std::memory_order_acquire)) std::this_thread::yield();
                             // The next batch's compute fails: unwinding cancels the report and stops the thread.
                             throw std::runtime_error("the worker failed");
                           },
                           options),
                       "the worker failed", std::runtime_error);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}

TEST_CASE("parameter_server.colocated: a sampling server 0 whose own update throws ends its worker promptly, "
          "though the worker's compute report to it is never taken" * doctest::timeout(60)) {
  // The worker waits for what its server sends (the hand-out, the pulls: the server's alert fails
  // them) before what the server would take (the report, the push): a send to the dead loop never
  // completes in process.
  for (const auto pipelining : {sy::strategy::pipelining::off, one_ahead}) {
    CAPTURE(pipelining == one_ahead);
    sy::transport::inproc_options options;
    options.timeout = std::chrono::seconds(10);  // what a wait for the report would end in
    const auto started = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(sy::transport::run_inproc(
                             1,
                             [pipelining](sy::transport::inproc& t) {
                               sy::nn::mlp model{11, {8, 8, 1}, 4};
                               failing_sgd optimizer{model.parameters().size(), true};
                               sy::strategy::parameter_server<> ps(sy::strategy::colocated, {},
                                                                   sy::compression::format::none, pipelining);
                               ps.setup(t, model, optimizer);
                               ps.stop_when({[](const sy::trigger::progress&) { return false; }, 1});
                               ps.begin_epoch(t, 100);
                               // The server's 41st update throws.
                               for (int step = 0; step < 60; ++step) {
                                 [[maybe_unused]] const auto outcome = ps.step(t, model, optimizer);
                               }
                             },
                             options),
                         "the server's update failed", std::runtime_error);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  }
}

TEST_CASE("parameter_server.backups: a co-located server whose own worker fails after its push was taken, and "
          "before its round was, ends promptly" * doctest::timeout(60)) {
  // Rank 0's worker posts its rounds and its pushes to servers 0 and 1; the post to server 1
  // fails once rank 0's serving thread has taken the push and holds its receive of the round open.
  sy::transport::inproc_options options;
  options.timeout = std::chrono::seconds(10);  // what a wait for the cancelled round would end in
  const auto started = std::chrono::steady_clock::now();
  const auto run = [](auto& t) {
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::strategy::parameter_server ps(sy::strategy::colocated, consistency::backups{1});
    ps.setup(t, model, optimizer);
    ps.begin_epoch(t, 10);
    [[maybe_unused]] const auto outcome = ps.step(t, model, optimizer);
  };
  CHECK_THROWS_WITH_AS(sy::transport::run_inproc(
                           2,
                           [&](sy::transport::inproc& t) {
                             if (t.rank() != 0) return run(t);
                             holds_own_report held(t, std::make_shared<std::atomic<bool>>(false), 1);
                             run(held);
                           },
                           options),
                       "the worker failed", std::runtime_error);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}

TEST_CASE("parameter_server.colocated: a model smaller than the rank count is refused") {
  sy::transport::run_inproc(3, [](sy::transport::inproc& t) {
    struct tiny {
      std::vector<float> p = std::vector<float>(2), g = std::vector<float>(2);
      std::span<float> parameters() { return p; }
      std::span<float> gradients() { return g; }
    } model;
    sy::optim::sgd optimizer{2, 0.1};
    sy::strategy::parameter_server<> ps(sy::strategy::colocated);
    CHECK_THROWS_WITH_AS(ps.setup(t, model, optimizer),
                         doctest::Contains("3 co-located servers for a model of only 2 parameters"), sy::usage_error);
  });
}

namespace {

// An in-process handle that says, as transport::mpi does below threading::multiple, that two
// threads may not call it at once.
struct one_thread_at_a_time : sy::transport::inproc {
  explicit one_thread_at_a_time(const sy::transport::inproc& t) : sy::transport::inproc(t) {}
  [[nodiscard]] static bool serves_concurrent_threads() { return false; }
  [[nodiscard]] one_thread_at_a_time split(int color, int key) {
    return one_thread_at_a_time(sy::transport::inproc::split(color, key));
  }
};

}  // namespace

TEST_CASE("parameter_server.colocated: refused on a transport that does not allow concurrent threads") {
  sy::transport::run_inproc(2, [](sy::transport::inproc& t) {
    one_thread_at_a_time single(t);
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::strategy::parameter_server<> ps(sy::strategy::colocated);
    CHECK_THROWS_WITH_AS(ps.setup(single, model, optimizer),
                         doctest::Contains("initialize the environment with boost::mpi::threading::multiple"),
                         sy::usage_error);
    sy::strategy::parameter_server<> dedicated(1);  // dedicated servers call it from one thread
    CHECK_NOTHROW(dedicated.setup(single, model, optimizer));
  });
}

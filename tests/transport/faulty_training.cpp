// Training through the fault-injection decorator (part of the transport.faulty suite, built when
// the nn and data parts are): a rank that fails mid-training ends the run on every rank, naming it.
#include <switchyard/transport/faulty.hpp>

#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>

#include "../train/fixtures.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace sy = switchyard;
using sy::transport::faulty;
using sy::transport::inproc;

static_assert(sy::strategy::policy<sy::strategy::parameter_server<>, sy::nn::mlp<>, sy::optim::sgd<>, faulty<inproc>>);

namespace {

struct ended {
  std::string rethrown;           // what run_inproc rethrew
  std::vector<std::string> seen;  // what left fit on each rank
  std::vector<std::size_t> messages;
  std::vector<std::size_t> steps;  // training steps each rank finished before the end
};

// Trains the quadrant mlp over faulty<inproc> at 4 ranks, rank `fail_rank` failing after
// `fail_after` messages. A hang would end in timeout_error, which the checks below reject.
template <class Strategy>
ended train_until_failure(Strategy strategy, int fail_rank, std::size_t fail_after) {
  const auto data = fixtures::quadrants(480, 7);
  sy::transport::inproc_options options;
  options.timeout = std::chrono::seconds(20);
  ended result;
  result.seen.resize(4);
  result.messages.resize(4);
  result.steps.resize(4);
  try {
    sy::transport::run_inproc(
        4,
        [&](inproc& t) {
          faulty f(t, {.fail_rank = fail_rank, .fail_after = fail_after});
          sy::nn::mlp model{1, {8, 8, 1}, 4};
          sy::optim::sgd optimizer{model.parameters().size(), 0.05};
          sy::train::trainer_options trainer_options;
          trainer_options.batch_size = 8;
          trainer_options.epochs = 3;
          sy::train::trainer trainer{model, optimizer, strategy, trainer_options};
          const auto rank = static_cast<std::size_t>(t.rank());
          trainer.on_step([&result, rank](const sy::train::step_record&) { ++result.steps[rank]; });
          try {
            trainer.fit(f, data, *data);
          } catch (const sy::error& e) {
            result.seen[rank] = e.what();
            result.messages[rank] = f.messages();
            throw;
          }
        },
        options);
  } catch (const sy::error& e) {
    result.rethrown = e.what();
  }
  return result;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void check_ended_on_every_rank(const ended& e, int fail_rank, std::size_t fail_after) {
  CAPTURE(e.rethrown);
  const std::string injected =
      sy::detail::str("rank ", fail_rank, ": injected failure after ", fail_after, " messages");
  CHECK(contains(e.rethrown, injected));
  std::size_t steps = 0;
  for (std::size_t s : e.steps) steps += s;
  CHECK(steps > 0);  // the failure came mid-training, not during setup
  for (int r = 0; r < 4; ++r) {
    const std::string& seen = e.seen[static_cast<std::size_t>(r)];
    CAPTURE(r);
    CAPTURE(seen);
    if (r == fail_rank) {
      CHECK(seen == e.rethrown);
      CHECK(e.messages[static_cast<std::size_t>(r)] == fail_after);
    } else {
      CHECK(contains(seen, sy::detail::str("abandoned because rank ", fail_rank, " failed: ")));
      CHECK(contains(seen, injected));
    }
  }
}

}  // namespace

TEST_CASE("faulty.training.parameter_server: a worker failing mid-epoch ends every rank, naming it" *
          doctest::timeout(120)) {
  const ended e = train_until_failure(sy::strategy::parameter_server<>(1), 2, 40);
  check_ended_on_every_rank(e, 2, 40);
}

TEST_CASE("faulty.training.parameter_server: a failing server ends every worker, naming it" * doctest::timeout(120)) {
  const ended e = train_until_failure(sy::strategy::parameter_server<>(1), 0, 100);
  check_ended_on_every_rank(e, 0, 100);
}

TEST_CASE("faulty.training.all_reduce: a replica failing mid-epoch ends every rank, naming it" *
          doctest::timeout(120)) {
  const ended e = train_until_failure(sy::strategy::all_reduce<>{}, 3, 40);
  check_ended_on_every_rank(e, 3, 40);
}

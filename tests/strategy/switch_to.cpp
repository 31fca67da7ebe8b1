#include <switchyard/strategy/switch_to.hpp>

#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/adam.hpp>
#include <switchyard/optim/any_optimizer.hpp>
#include <switchyard/optim/momentum.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/strategy/replicas.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/after_steps.hpp>
#include <switchyard/trigger/loss_plateau.hpp>
#include <switchyard/trigger/straggler.hpp>

#include "../collective/scenarios.hpp"
#include "../train/fixtures.hpp"
#include "../train/paced_mlp.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace sy = switchyard;
namespace strategy = sy::strategy;
namespace trigger = sy::trigger;

using ps = strategy::parameter_server<>;
using sync_ps = strategy::parameter_server<strategy::consistency::sync>;
using ar = strategy::all_reduce<>;
// Every rank works and serves one shard, on a thread beside its worker.
struct colocated_ps : ps {
  colocated_ps() : ps(strategy::colocated) {}
};
// The same, with each worker's exchange on the wire while it computes its next batch.
struct pipelined_ps : ps {
  pipelined_ps() : ps(strategy::colocated, {}, sy::compression::format::none, strategy::pipelining::one_ahead) {}
};

static_assert(strategy::policy<strategy::switch_to<ps, ar, trigger::after_epochs<2>>, sy::nn::mlp<>,
                                  sy::optim::sgd<>, sy::transport::inproc>);

namespace {

// Records, on every rank, what the model looked like just before and just after the switch.
template <class Switch>
struct observed : Switch {
  using Switch::Switch;
  double loss_before = -1;
  double loss_after = -1;
  std::uint64_t hash_after = 0;
  std::size_t switched_at = 0;

  template <class Transport, class Model, class Optimizer>
  void after_epoch(Transport& t, Model& m, Optimizer& o, const sy::train::epoch_record& record) {
    const bool before = this->switched();
    const double loss = m.evaluate(probe_batch()).mean_loss();
    Switch::after_epoch(t, m, o, record);
    if (!before && this->switched()) {
      loss_before = loss;
      loss_after = m.evaluate(probe_batch()).mean_loss();
      hash_after = scenarios::bit_hash(std::vector<float>(m.parameters().begin(), m.parameters().end()));
      switched_at = record.epoch;
    }
  }

  static sy::data::batch_view probe_batch() {
    static const auto data = fixtures::quadrants(64, 99);
    return data->slice(0, 64);
  }
};

struct run {
  std::vector<std::string> stages;
  std::vector<std::size_t> steps;
  std::vector<double> losses;
  double loss_before = 0, loss_after = 0;
  std::uint64_t hash_after = 0;
  std::size_t switched_at = 0;
  std::vector<float> parameters;
};

// Trains the small mlp on the quadrant problem over 4 in-process ranks (480 examples in batches of
// 8: 60 batches an epoch) under `prototype`; `watch(trainer)` runs before training, and
// `result(trainer, history, model)` gives each rank's result.
template <class Switch, class Watch, class Result>
auto train_four(Switch prototype, std::size_t epochs, Watch watch, Result result) {
  const auto data = fixtures::quadrants(480, 7);
  return sy::transport::run_inproc(4, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::train::trainer_options options;
    options.epochs = epochs;
    options.batch_size = 8;
    sy::train::trainer trainer{model, optimizer, prototype, options};
    auto watched = watch(trainer);
    const sy::train::history h = trainer.fit(t, data, *data);
    return result(trainer, h, model, watched);
  });
}

template <class Switch>
std::vector<run> train(Switch prototype, std::size_t epochs) {
  return train_four(prototype, epochs, [](auto&) { return 0; }, [](auto& trainer, const auto& h, auto& model, int) {
    run r;
    for (const auto& e : h.epochs) {
      r.stages.push_back(e.stage);
      r.steps.push_back(e.steps);
      r.losses.push_back(e.train_loss);
    }
    if constexpr (requires { trainer.strategy().loss_before; }) {
      r.loss_before = trainer.strategy().loss_before;
      r.loss_after = trainer.strategy().loss_after;
      r.hash_after = trainer.strategy().hash_after;
      r.switched_at = trainer.strategy().switched_at;
    }
    r.parameters.assign(model.parameters().begin(), model.parameters().end());
    return r;
  });
}

template <class Switch>
void check_switch(const std::vector<run>& runs, const std::string& first, const std::string& second) {
  for (const run& r : runs) {
    CHECK(r.switched_at == 2);  // every rank switched after the same epoch
    CHECK(r.hash_after == runs[0].hash_after);  // and holds the same parameters right after
    CHECK(r.loss_after == r.loss_before);       // the hand-over moves state, not the model
    CHECK(r.stages == std::vector<std::string>{first, first, second, second, second});
    // No jump: the first epoch of the second stage trains from where the first left off.
    CHECK(r.losses[2] < 1.2 * r.losses[1]);
    CHECK(r.parameters == runs[0].parameters);
  }
}

// Records, on every rank, the parameters right after a switch inside an epoch.
template <class Switch>
struct observed_within : Switch {
  using Switch::Switch;
  std::uint64_t hash_after = 0;

  template <class Transport, class Model, class Optimizer>
  void end_epoch(Transport& t, Model& m, Optimizer& o) {
    const bool before = this->switched();
    Switch::end_epoch(t, m, o);
    if (!before && this->switched()) {
      hash_after = scenarios::bit_hash(std::vector<float>(m.parameters().begin(), m.parameters().end()));
    }
  }
};

struct within_run {
  std::vector<std::string> epoch_stages;
  std::vector<std::size_t> epoch_steps;
  std::optional<std::uint64_t> switched_after_batches;
  std::optional<std::size_t> switched_after_epoch;
  std::uint64_t hash_after = 0;
  std::vector<std::pair<std::string, double>> step_losses;  // this rank's steps, in order
  std::vector<float> parameters;
};

template <class Switch>
std::vector<within_run> train_within(std::size_t epochs) {
  using losses = std::vector<std::pair<std::string, double>>;
  return train_four(
      Switch{}, epochs,
      [](auto& trainer) {
        auto steps = std::make_shared<losses>();
        trainer.on_step([steps](const sy::train::step_record& s) { steps->emplace_back(s.stage, s.loss); });
        return steps;
      },
      [](auto& trainer, const auto& h, auto& model, const std::shared_ptr<losses>& steps) {
        within_run r;
        for (const auto& e : h.epochs) {
          r.epoch_stages.push_back(e.stage);
          r.epoch_steps.push_back(e.steps);
        }
        r.switched_after_batches = trainer.strategy().switched_after_batches();
        r.switched_after_epoch = trainer.strategy().switched_after_epoch();
        r.hash_after = trainer.strategy().hash_after;
        r.step_losses = *steps;
        r.parameters.assign(model.parameters().begin(), model.parameters().end());
        return r;
      });
}

double mean_loss(auto first, auto last) {
  return std::accumulate(first, last, 0.0, [](double sum, const auto& s) { return sum + s.second; }) /
         static_cast<double>(std::distance(first, last));
}

// Every rank switched after the same batch inside epoch 2, holds the same parameters right
// after, and the training loss carries on across the switch.
void check_within(const std::vector<within_run>& runs, std::uint64_t batches, const std::string& first,
                  const std::string& second, std::size_t epoch_two_steps) {
  for (const within_run& r : runs) {
    CHECK(r.switched_after_batches == batches);
    CHECK(r.switched_after_epoch == 1u);
    CHECK(r.hash_after == runs[0].hash_after);
    CHECK(r.epoch_stages == std::vector<std::string>{first, first + ">" + second, second});
    CHECK(r.epoch_steps[1] == epoch_two_steps);
    CHECK(r.parameters == runs[0].parameters);
  }
  // Rank 0 works in both stages: its last steps before and first steps after the switch.
  const auto& steps = runs[0].step_losses;
  const auto boundary = std::find_if(steps.begin(), steps.end(), [&](const auto& s) { return s.first == second; });
  REQUIRE(boundary - steps.begin() >= 4);
  REQUIRE(steps.end() - boundary >= 4);
  const double before = mean_loss(boundary - 4, boundary);
  const double after = mean_loss(boundary, boundary + 4);
  CAPTURE(before);
  CAPTURE(after);
  CHECK(after < 1.25 * before + 0.02);
}

}  // namespace

TEST_CASE("switch_to.ps_then_allreduce: 1 server + 3 workers, then 4 all-reduce workers" * doctest::timeout(120)) {
  using sw = observed<strategy::switch_to<ps, ar, trigger::after_epochs<2>>>;
  check_switch<sw>(train(sw{}, 5), "ps", "allreduce");
}

TEST_CASE("switch_to.allreduce_then_ps: 4 all-reduce workers, then 1 server + 3 workers" * doctest::timeout(120)) {
  using sw = observed<strategy::switch_to<ar, ps, trigger::after_epochs<2>>>;
  check_switch<sw>(train(sw{}, 5), "allreduce", "ps");
}

TEST_CASE("switch_to.chain: three stages, ps then all-reduce then ps" * doctest::timeout(120)) {
  using inner = strategy::switch_to<ar, ps, trigger::after_epochs<4>>;
  const auto runs = train(strategy::switch_to<ps, inner, trigger::after_epochs<2>>{}, 6);
  for (const run& r : runs) {
    CHECK(r.stages == std::vector<std::string>{"ps", "ps", "allreduce", "allreduce", "ps", "ps"});
    CHECK(r.parameters == runs[0].parameters);
    CHECK(r.losses.back() < r.losses.front());
  }
}

TEST_CASE("switch_to.chain.switched_after_epoch: both switches of a chain count epochs from the start of the run" *
          doctest::timeout(120)) {
  using inner = strategy::switch_to<ar, ps, trigger::after_epochs<4>>;
  const auto switched = train_four(
      strategy::switch_to<ps, inner, trigger::after_epochs<2>>{}, 6, [](auto&) { return 0; },
      [](auto& trainer, const auto&, auto&, int) {
        return std::pair{trainer.strategy().switched_after_epoch(), trainer.strategy().second().switched_after_epoch()};
      });
  for (const auto& [outer_after, inner_after] : switched) {
    CHECK(outer_after == std::optional<std::size_t>(2));
    CHECK(inner_after == std::optional<std::size_t>(4));  // the epoch its stages changed, not 2 epochs after its start
  }
}

TEST_CASE("switch_to.plateau: a loss trigger switches once the loss flattens" * doctest::timeout(120)) {
  const auto runs = train(strategy::switch_to{ps{1}, ar{}, trigger::loss_plateau{0.5, 1}}, 4);
  for (const run& r : runs) {
    CHECK(r.stages.front() == "ps");
    CHECK(r.stages.back() == "allreduce");
  }
}

TEST_CASE("switch_to.options: momentum kept, reset or scaled, and the learning rate rescaled") {
  using policy = strategy::switch_options::momentum_policy;
  for (const auto& choice : {std::pair{policy::keep, 1.0}, std::pair{policy::reset, 0.0},
                             std::pair{policy::scale, 0.25}}) {
    const policy momentum = choice.first;
    const double expected = choice.second;
    CAPTURE(static_cast<int>(momentum));
    sy::transport::run_inproc(2, [&](sy::transport::inproc& t) {
      struct arenas {
        std::vector<float> p = std::vector<float>(3, 1.0f), g = std::vector<float>(3, 1.0f);
        std::span<float> parameters() { return p; }
        std::span<float> gradients() { return g; }
      } model;
      sy::optim::momentum optimizer{3, 0.1, 0.9};
      strategy::switch_options options{momentum, 0.25, 0.5};
      strategy::switch_to sw{ar{}, ar{}, trigger::after_epochs{1}, options};
      sw.setup(t, model, optimizer);
      sw.step(t, model, optimizer);
      const std::vector<float> velocity = optimizer.export_state().slots[0];
      REQUIRE(velocity[0] != 0.0f);
      sy::train::epoch_record record;
      record.epoch = 1;
      sw.after_epoch(t, model, optimizer, record);
      CHECK(sw.switched());
      CHECK(sw.switched_after_epoch() == 1u);
      for (std::size_t i = 0; i < 3; ++i) {
        CHECK(optimizer.export_state().slots[0][i] == doctest::Approx(velocity[i] * expected));
      }
      CHECK(optimizer.learning_rate() == doctest::Approx(0.05));
    });
  }
}

TEST_CASE("switch_to.options.warmup: the learning rate ramps up again after the switch") {
  sy::transport::run_inproc(2, [](sy::transport::inproc& t) {
    struct arenas {
      std::vector<float> p = std::vector<float>(3, 1.0f), g = std::vector<float>(3, 1.0f);
      std::span<float> parameters() { return p; }
      std::span<float> gradients() { return g; }
    } model;
    sy::optim::sgd optimizer{3, 0.2};
    strategy::switch_options options;
    options.warmup_steps = 4;
    strategy::switch_to sw{ar{}, ar{}, trigger::after_epochs{1}, options};
    sw.setup(t, model, optimizer);
    sw.step(t, model, optimizer);
    sy::train::epoch_record record;
    record.epoch = 1;
    sw.after_epoch(t, model, optimizer, record);
    CHECK(optimizer.learning_rate() == doctest::Approx(0.05));
    for (int i = 0; i < 4; ++i) sw.step(t, model, optimizer);
    CHECK(optimizer.learning_rate() == doctest::Approx(0.2));
  });
}

TEST_CASE("switch_to.within_epoch.ps_then_allreduce: server 0 stops handing out batches at the step trigger" *
          doctest::timeout(120)) {
  // 90 batches: the server stops handing out after the 30th of epoch 2; the 30 left make 7
  // all-reduce steps of 4 (2 left over, as in any all-reduce epoch).
  using sw = observed_within<strategy::switch_to<ps, ar, trigger::after_steps<90>>>;
  check_within(train_within<sw>(3), 90, "ps", "allreduce", 30 + 28);
}

TEST_CASE("switch_to.within_epoch.allreduce_then_ps: every worker stops at the same step" * doctest::timeout(120)) {
  // 90 batches: all-reduce steps train 4, so the switch lands after 92 (8 steps into epoch 2);
  // the parameter server hands out the 28 batches left.
  using sw = observed_within<strategy::switch_to<ar, ps, trigger::after_steps<90>>>;
  check_within(train_within<sw>(3), 92, "allreduce", "ps", 32 + 28);
}

TEST_CASE("switch_to.colocated: co-located servers then all-reduce, and the other order, between and inside "
          "epochs" * doctest::timeout(120)) {
  using ps_first = observed<strategy::switch_to<colocated_ps, ar, trigger::after_epochs<2>>>;
  check_switch<ps_first>(train(ps_first{}, 5), "ps", "allreduce");
  using ar_first = observed<strategy::switch_to<ar, colocated_ps, trigger::after_epochs<2>>>;
  check_switch<ar_first>(train(ar_first{}, 5), "allreduce", "ps");
  // Server 0, which hands out the batches and stops at the trigger, is rank 0's serving thread.
  using ps_within = observed_within<strategy::switch_to<colocated_ps, ar, trigger::after_steps<90>>>;
  check_within(train_within<ps_within>(3), 90, "ps", "allreduce", 30 + 28);
  using ar_within = observed_within<strategy::switch_to<ar, colocated_ps, trigger::after_steps<90>>>;
  check_within(train_within<ar_within>(3), 92, "allreduce", "ps", 32 + 28);
}

TEST_CASE("switch_to.pipelined: pipelined co-located servers then all-reduce, and the other order, inside epochs" *
          doctest::timeout(120)) {
  // The stop at the trigger comes after the exchange still on the wire, which the servers count.
  using ps_within = observed_within<strategy::switch_to<pipelined_ps, ar, trigger::after_steps<90>>>;
  check_within(train_within<ps_within>(3), 90, "ps", "allreduce", 30 + 28);
  using ar_within = observed_within<strategy::switch_to<ar, pipelined_ps, trigger::after_steps<90>>>;
  check_within(train_within<ar_within>(3), 92, "allreduce", "ps", 32 + 28);
  // A trigger 2 batches into epoch 2 is first asked once the 4 workers hold their 8 starting
  // batches: the switch comes after 60 + 8, and all-reduce trains the other 52.
  using early = observed_within<strategy::switch_to<pipelined_ps, ar, trigger::after_steps<62>>>;
  check_within(train_within<early>(3), 68, "ps", "allreduce", 8 + 52);
}

// Fires between steps only, never on an epoch record.
struct at_batch {
  std::uint64_t batches = 120;
  [[nodiscard]] bool fire(const sy::train::epoch_record&) const { return false; }
  [[nodiscard]] bool fire_at(const trigger::progress& p) const { return p.batches >= batches; }
};

TEST_CASE("switch_to.within_epoch.last_step: a trigger that fires at an epoch's last batch switches after it" *
          doctest::timeout(120)) {
  // 120 batches end epoch 2 exactly: the first stage trained epoch 2 whole. The trigger never
  // fires on a record, so the switch after the epoch comes from the step that fired.
  for (const within_run& r : train_within<observed_within<strategy::switch_to<ar, ps, at_batch>>>(3)) {
    CHECK(r.switched_after_batches == 120u);
    CHECK(r.switched_after_epoch == 2u);
    CHECK(r.epoch_stages == std::vector<std::string>{"allreduce", "allreduce", "ps"});
    CHECK(r.epoch_steps[1] == 60u);
  }
}

TEST_CASE("switch_to.within_epoch.nested_first: a switch inside the first stage hands the rest of its epoch on" *
          doctest::timeout(120)) {
  // The inner switch stops all-reduce after 92 batches, 32 into epoch 2; its parameter server
  // trains the other 28 of that epoch, then the outer switch moves on to all-reduce after epoch 3.
  using inner = strategy::switch_to<ar, ps, trigger::after_steps<90>>;
  const auto runs = train(strategy::switch_to<inner, ar, trigger::after_epochs<3>>{}, 4);
  for (const run& r : runs) {
    CHECK(r.stages == std::vector<std::string>{"allreduce", "allreduce>ps", "ps", "allreduce"});
    CHECK(r.steps == std::vector<std::size_t>{60, 32 + 28, 60, 60});
    CHECK(r.parameters == runs[0].parameters);
  }
}

TEST_CASE("switch_to.within_epoch.nested_first.step_trigger: the outer trigger counts every part of the epoch" *
          doctest::timeout(120)) {
  using inner = strategy::switch_to<ar, sync_ps, trigger::after_steps<90>>;
  SUBCASE("the outer trigger fires in the part after the inner switch") {
    // Epoch 2: all-reduce to batch 32 (92 in all), then the synchronous server's 3 workers; the
    // outer switch fires at 101, 3 steps in, and all-reduce trains 16 of the 19 batches left.
    using sw = observed_within<strategy::switch_to<inner, ar, trigger::after_steps<100>>>;
    for (const within_run& r : train_within<sw>(3)) {
      CHECK(r.switched_after_batches == 101u);
      CHECK(r.switched_after_epoch == 1u);
      CHECK(r.epoch_stages == std::vector<std::string>{"allreduce", "allreduce>ps>allreduce", "allreduce"});
      CHECK(r.epoch_steps == std::vector<std::size_t>{60, 32 + 9 + 16, 60});
    }
  }
  SUBCASE("both triggers fire at the same step") {
    // At batch 92 both stop: the outer counts the step's 4 workers, not the 3 of the stage the
    // inner switch has just set up, and all-reduce trains batches 32 to 59.
    using sw = observed_within<strategy::switch_to<inner, ar, trigger::after_steps<92>>>;
    for (const within_run& r : train_within<sw>(3)) {
      CHECK(r.switched_after_batches == 92u);
      CHECK(r.epoch_stages == std::vector<std::string>{"allreduce", "allreduce>allreduce", "allreduce"});
      CHECK(r.epoch_steps == std::vector<std::size_t>{60, 32 + 28, 60});
    }
  }
}

// A stage whose name() returns a std::string, too long for the small-string buffer.
struct long_named_allreduce : ar {
  [[nodiscard]] std::string name() const { return "allreduce, under a name longer than a small-string buffer"; }
};

TEST_CASE("switch_to.name: a stage whose name() returns a temporary std::string" * doctest::timeout(120)) {
  const std::string long_name = long_named_allreduce{}.name();
  const auto runs = train(strategy::switch_to<long_named_allreduce, ps, trigger::after_epochs<1>>{}, 2);
  for (const run& r : runs) CHECK(r.stages == std::vector<std::string>{long_name, "ps"});
}

namespace {

// Switches all-reduce over 4 ranks to an asynchronous server with `rescale_for_batch` under
// `learning_rate_rule`, and checks the rate's factor and the second moment's (4, times 0.5).
void check_rescale_for_batch(strategy::switch_options::batch_rule learning_rate_rule, double rate_factor) {
  sy::transport::run_inproc(4, [&](sy::transport::inproc& t) {
    struct arenas {
      std::vector<float> p = std::vector<float>(3, 1.0f), g = std::vector<float>{0.5f, -1.0f, 2.0f};
      std::span<float> parameters() { return p; }
      std::span<float> gradients() { return g; }
    } model;
    sy::optim::adam optimizer{3, 0.1};
    strategy::switch_options options;
    options.rescale_for_batch = true;
    options.learning_rate_rule = learning_rate_rule;
    options.second_moment_scale = 0.5;  // composes with the batch's factor
    strategy::switch_to sw{ar{}, ps{1}, trigger::after_epochs{1}, options};
    sw.setup(t, model, optimizer);
    sw.step(t, model, optimizer);
    const auto before = optimizer.export_state();
    sy::train::epoch_record record;
    record.epoch = 1;
    sw.after_epoch(t, model, optimizer, record);
    REQUIRE(sw.switched());
    CHECK(sw.batches_per_update(t) == 1u);
    if (t.rank() == 0) {  // a worker keeps the whole state; the server holds its shard
      const auto after = optimizer.export_state();
      for (std::size_t i = 0; i < 3; ++i) {
        CHECK(after.slots[0][i] == before.slots[0][i]);
        CHECK(after.slots[1][i] == doctest::Approx(before.slots[1][i] * 4.0 * 0.5));
      }
      INFO("the rate's factor ", rate_factor);
      CHECK(optimizer.learning_rate() == doctest::Approx(0.1 * rate_factor));
    }
  });
}

}  // namespace

TEST_CASE("switch_to.options.rescale_for_batch: all-reduce over 4 ranks to an async server scales the rate by 1/4, "
          "or by 1/2 under the square-root rule, and the second moment by 4") {
  using rule = strategy::switch_options::batch_rule;
  for (const auto& [learning_rate_rule, rate_factor] : {std::pair{rule::linear, 0.25}, std::pair{rule::square_root, 0.5}}) {
    check_rescale_for_batch(learning_rate_rule, rate_factor);
  }
}

TEST_CASE("switch_to.options.rescale_for_batch: the default rule is the linear one") {
  CHECK(strategy::switch_options{}.learning_rate_rule == strategy::switch_options::batch_rule::linear);
}

namespace {

// A user's first stage with only the two required members: every rank trains its replica alone
// with its own batches and its own Adam, so parameters and optimizer state differ across ranks
// when it ends. It records the fingerprint of its rank's training state at its first step.
struct independent_replicas {
  std::optional<std::uint64_t> first_fingerprint;
  [[nodiscard]] std::string_view name() const noexcept { return "independent"; }
  template <class Transport, class Model, class Optimizer>
  void step(Transport&, Model& m, Optimizer& o) {
    if (!first_fingerprint) first_fingerprint = strategy::training_state_fingerprint(m, o);
    o.step(m.parameters(), m.gradients());
  }
};

// A stage that claims to keep replicas identical but sets up nothing, after a first stage whose
// hand-over leaves the replicas apart: what checked mode must catch.
struct claims_replicas : independent_replicas {
  [[nodiscard]] std::string_view name() const noexcept { return "claims"; }
  [[nodiscard]] static constexpr bool replicated() noexcept { return true; }
  template <class Transport, class Model, class Optimizer>
  void setup(Transport&, Model&, Optimizer&) {}
};
// A replicated stage with the default set-up: entered by a switch, it broadcasts nothing.
struct trusts_hand_over : independent_replicas {
  [[nodiscard]] std::string_view name() const noexcept { return "trusts"; }
  [[nodiscard]] static constexpr bool replicated() noexcept { return true; }
};
struct keeps_replicas_apart : independent_replicas {
  template <class Transport, class Model, class Optimizer>
  void hand_over(Transport&, Model&, Optimizer&) {}
};

struct replica_state {
  std::uint64_t fingerprint = 0;
  std::vector<float> parameters;
  std::uint64_t stage_start = 0;  // a second two-member stage: the fingerprint at its first step
};

template <class First, class Second>
std::vector<replica_state> first_then(First first, Second second, int ranks, bool checked) {
  const auto data = fixtures::quadrants(480, 7);
  sy::transport::inproc_options world;
  world.check_collectives = checked;
  return sy::transport::run_inproc(
      ranks,
      [&](sy::transport::inproc& t) {
        sy::nn::mlp model{11, {8, 8, 1}, 4};
        sy::optim::adam optimizer{model.parameters().size(), 0.01};
        sy::train::trainer_options options;
        options.epochs = 3;
        options.batch_size = 8;
        sy::train::trainer trainer{model, optimizer, strategy::switch_to{first, second, trigger::after_epochs<1>{}},
                                   options};
        trainer.fit(t, data, *data);
        replica_state result{strategy::training_state_fingerprint(model, optimizer),
                             {model.parameters().begin(), model.parameters().end()}};
        if constexpr (std::is_base_of_v<independent_replicas, Second>) {
          result.stage_start = trainer.strategy().second().first_fingerprint.value_or(0);
        }
        return result;
      },
      world);
}

template <class Second>
std::vector<replica_state> independent_then(Second second, int ranks, bool checked) {
  return first_then(independent_replicas{}, second, ranks, checked);
}

}  // namespace

TEST_CASE("switch_to.replicas: all-reduce after a stage without hand_over starts from identical parameters and "
          "optimizer state" * doctest::timeout(120)) {
  for (const int ranks : {2, 3, 4}) {
    CAPTURE(ranks);
    // Checked mode also verifies the fingerprints right after the switch.
    for (const bool checked : {false, true}) {
      const std::vector<replica_state> runs = independent_then(ar{}, ranks, checked);
      for (const replica_state& r : runs) {
        CHECK(r.fingerprint == runs[0].fingerprint);
        CHECK(r.parameters == runs[0].parameters);
      }
    }
  }
}

TEST_CASE("switch_to.replicas: in checked mode a replicated stage that starts from differing replicas is refused at "
          "the switch, naming the ranks" * doctest::timeout(120)) {
  CHECK_THROWS_WITH_AS(first_then(keeps_replicas_apart{}, claims_replicas{}, 3, true),
                       doctest::Contains("replicas differ after the switch to 'claims': rank(s) 1, 2 hold other "
                                         "parameters or optimizer state than rank 0"),
                       sy::usage_error);
  CHECK_NOTHROW(first_then(keeps_replicas_apart{}, claims_replicas{}, 3, false));  // unchecked: nothing looks
}

TEST_CASE("switch_to.enter: the stage a switch enters is not broadcast to again: it starts from what the hand-over "
          "left" * doctest::timeout(120)) {
  for (const int ranks : {2, 3}) {
    CAPTURE(ranks);
    // The default hand-over replicates the state: the stage entered starts from identical replicas.
    std::vector<replica_state> runs = first_then(independent_replicas{}, trusts_hand_over{}, ranks, false);
    for (const replica_state& r : runs) CHECK(r.stage_start == runs[0].stage_start);
    // A hand-over that leaves the replicas apart (against the protocol): nothing after it makes
    // them equal, which checked mode reports at the switch.
    runs = first_then(keeps_replicas_apart{}, trusts_hand_over{}, ranks, false);
    for (std::size_t r = 1; r < runs.size(); ++r) CHECK(runs[r].stage_start != runs[0].stage_start);
    CHECK_THROWS_WITH_AS(first_then(keeps_replicas_apart{}, trusts_hand_over{}, ranks, true),
                         doctest::Contains("replicas differ after the switch to 'trusts'"), sy::usage_error);
  }
}

TEST_CASE("switch_to.two_members: a strategy of name() and step() alone trains under the trainer and in either "
          "order of a switch, every stage starting from identical replicas" * doctest::timeout(120)) {
  for (const int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    // Alone in the trainer: the default setup makes every replica start from rank 0's.
    const auto data = fixtures::quadrants(480, 7);
    const std::vector<std::uint64_t> starts = sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
      sy::nn::mlp model{11 + static_cast<std::uint64_t>(t.rank()), {8, 8, 1}, 4};  // a different start per rank
      sy::optim::adam optimizer{model.parameters().size(), 0.01};
      sy::train::trainer_options options;
      options.epochs = 2;
      options.batch_size = 8;
      sy::train::trainer trainer{model, optimizer, independent_replicas{}, options};
      const sy::train::history h = trainer.fit(t, data, *data);
      CHECK(h.epochs.size() == 2u);
      CHECK(h.last().steps == 60 / static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks));
      return trainer.strategy().first_fingerprint.value();
    });
    for (const std::uint64_t s : starts) CHECK(s == starts[0]);
    // Two-member stage first: the default hand-over gives all-reduce identical replicas (checked
    // mode also verifies them right after the switch).
    const std::vector<replica_state> then_ar = first_then(independent_replicas{}, ar{}, ranks, true);
    for (const replica_state& r : then_ar) CHECK(r.fingerprint == then_ar[0].fingerprint);
    // Two-member stage second, after all-reduce and after a parameter server: identical at its
    // first step.
    const std::vector<replica_state> after_ar = first_then(ar{}, independent_replicas{}, ranks, false);
    for (const replica_state& r : after_ar) CHECK(r.stage_start == after_ar[0].stage_start);
    if (ranks > 1) {
      const std::vector<replica_state> after_ps = first_then(ps{1}, independent_replicas{}, ranks, false);
      for (const replica_state& r : after_ps) CHECK(r.stage_start == after_ps[0].stage_start);
    }
  }
}

TEST_CASE("switch_to.stop_when: a copy of the switch made inside an epoch decides on its own state") {
  // The predicate the first stage holds must not point back into the switch it came from.
  struct recording_stage : independent_replicas {
    strategy::stop_rule stop;
    void stop_when(strategy::stop_rule f) { stop = std::move(f); }
    [[nodiscard]] std::optional<std::size_t> stopped_after() const { return std::nullopt; }
  };
  sy::transport::run_inproc(1, [](sy::transport::inproc& t) {
    std::optional<strategy::switch_to<recording_stage, ar, trigger::after_steps<>>> original;
    original.emplace(recording_stage{}, ar{}, trigger::after_steps{10});
    original->begin_epoch(t, 60);
    const auto copy = *original;
    original.reset();  // a predicate that reached back into it would now read freed memory
    REQUIRE(copy.first().stop.fire);
    CHECK_FALSE(copy.first().stop.fire({9}));
    CHECK(copy.first().stop.fire({10}));
  });
}

namespace {

// The stages of each epoch on every rank, 4 ranks, rank 2 a straggler or not.
template <class Switch>
std::vector<std::vector<std::string>> paced_stages(Switch prototype, bool straggler, std::size_t epochs) {
  const auto data = fixtures::quadrants(480, 7);
  return sy::transport::run_inproc(4, [&](sy::transport::inproc& t) {
    using std::chrono::milliseconds;
    // 10 ms a pass on every rank, 50 ms on the straggler: long against the scheduler's noise on a
    // loaded machine, and against the pass and the exchange under ThreadSanitizer.
    fixtures::paced_mlp model{straggler && t.rank() == 2 ? milliseconds(50) : milliseconds(10),
                              fixtures::pacing::at_least};
    sy::optim::sgd optimizer{model.parameters().size(), 0.05};
    sy::train::trainer_options options;
    options.epochs = epochs;
    options.batch_size = 8;
    sy::train::trainer trainer{model, optimizer, prototype, options};
    std::vector<std::string> stages;
    for (const auto& e : trainer.fit(t, data, *data).epochs) stages.push_back(e.stage);
    return stages;
  });
}

}  // namespace

TEST_CASE("switch_to.straggler_detected: all-reduce hands over to the parameter server when one worker lags" *
          doctest::timeout(120)) {
  using detect = strategy::switch_to<ar, ps, trigger::straggler_detected>;
  const detect prototype{ar{}, ps{1}, trigger::straggler_detected{.ratio = 2.5}};
  // Rank 2 computes 5x slower: the ratio passes 2.5 at every epoch, so the switch comes after the
  // second (window 2, dwell 2), on every rank.
  for (const auto& stages : paced_stages(prototype, true, 4)) {
    CHECK(stages == std::vector<std::string>{"allreduce", "allreduce", "ps", "ps"});
  }
  // Workers alike: no switch.
  for (const auto& stages : paced_stages(prototype, false, 4)) {
    CHECK(stages == std::vector<std::string>(4, "allreduce"));
  }
}

TEST_CASE("switch_to.stragglers_gone: the parameter server hands over to all-reduce once the workers run alike" *
          doctest::timeout(120)) {
  using calm = strategy::switch_to<ps, ar, trigger::stragglers_gone>;
  const calm prototype{ps{1}, ar{}, trigger::stragglers_gone{.ratio = 1.5}};
  for (const auto& stages : paced_stages(prototype, false, 4)) {
    CHECK(stages == std::vector<std::string>{"ps", "ps", "allreduce", "allreduce"});
  }
  // A straggler that stays keeps the asynchronous stage.
  for (const auto& stages : paced_stages(prototype, true, 4)) {
    CHECK(stages == std::vector<std::string>(4, "ps"));
  }
}

namespace {

// A sync parameter server (1 server, 2 workers) then all-reduce after epoch 1, the rate halved and
// ramped up again over 5 steps: every rank's parameters after 3 epochs, with `make(size)`'s optimizer.
template <class Make>
std::vector<std::vector<float>> switched_with(Make make) {
  const auto data = fixtures::quadrants(480, 7);
  return sy::transport::run_inproc(3, [&](sy::transport::inproc& t) {
    sy::nn::mlp model{11, {8, 8, 1}, 4};
    auto optimizer = make(model.parameters().size());
    strategy::switch_options switching;
    switching.warmup_steps = 5;
    switching.learning_rate_scale = 0.5;
    sy::train::trainer_options options;
    options.epochs = 3;
    options.batch_size = 8;
    sy::train::trainer trainer{
        model, optimizer, strategy::switch_to{sync_ps{1}, ar{}, trigger::after_epochs<1>{}, switching}, options};
    trainer.fit(t, data, *data);
    return std::vector<float>(model.parameters().begin(), model.parameters().end());
  });
}

}  // namespace

TEST_CASE("switch_to.any_optimizer: adam held by optim::any_optimizer trains as adam itself, to the bit, across "
          "the hand-over, the rescaling and the warm-up" * doctest::timeout(120)) {
  const auto direct = switched_with([](std::size_t n) { return sy::optim::adam{n, 0.01}; });
  const auto erased = switched_with([](std::size_t n) { return sy::optim::any_optimizer<>{sy::optim::adam{n, 0.01}}; });
  CHECK(erased == direct);
  for (const std::vector<float>& replica : direct) CHECK(replica == direct[0]);  // the server rank trains after
}

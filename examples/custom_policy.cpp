// Extends switchyard from outside the library: a strategy of its own (local SGD, the replicas
// averaged every K steps) and a trigger of its own (a test-accuracy threshold), trained by the
// stock trainer and plugged into the stock Strategy Switch, on Fashion-MNIST with in-process ranks.
//
//   build/examples/custom_policy --ranks 4 --epochs 6 --period 8 --switch-accuracy 0.84
//   build/examples/custom_policy --strategy local --period 16 --expect-accuracy 0.8
#include "startup_checks.hpp"

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/data/dataset.hpp>
#include <switchyard/data/fashion_mnist.hpp>
#include <switchyard/nn/blas_threads.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/adam.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/core/history.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sy = switchyard;

namespace {

/// @brief Local SGD: each worker applies its optimizer to its own gradient every step, and every
/// `period` steps the ranks average their parameters with one all-reduce, a K-th of the messages
/// of `strategy::all_reduce`.
///
/// Besides the two required members, `name` and `step`, it writes only `end_epoch`: the trainer
/// evaluates each rank's replica on its own block of the test set, so the replicas must agree at
/// every epoch's end, and `end_epoch` averages whatever steps are left over. The rest is the
/// protocol's default (strategy/traits.hpp): every rank is a worker, setup and the hand-over to
/// another stage give every rank rank 0's parameters and optimizer state. Every worker takes the
/// same number of steps per epoch, so all ranks count alike and enter the same all-reduces with
/// no message of their own.
class local_sgd {
 public:
  explicit local_sgd(std::size_t period = 8) : period_(period) {
    if (period == 0) throw sy::usage_error("local_sgd: the averaging period must be at least 1 step");
  }

  [[nodiscard]] std::string_view name() const noexcept { return "localsgd"; }
  [[nodiscard]] std::size_t period() const noexcept { return period_; }
  /// How many times the parameters were averaged.
  [[nodiscard]] std::size_t averages() const noexcept { return averages_; }

  template <class Transport, class Model, class Optimizer>
  sy::strategy::step_outcome step(Transport& t, Model& model, Optimizer& optimizer) {
    optimizer.step(sy::as_span(model.parameters()), sy::as_span(model.gradients()));
    if (++since_average_ < period_) return {};
    return {average(t, model), std::nullopt};
  }

  template <class Transport, class Model, class Optimizer>
  void end_epoch(Transport& t, Model& model, Optimizer&) {
    if (since_average_ > 0) average(t, model);
  }

 private:
  // Returns the bytes this rank sent.
  template <class Transport, class Model>
  std::size_t average(Transport& t, Model& model) {
    since_average_ = 0;
    ++averages_;
    if (t.size() == 1) return 0;
    const auto parameters = sy::as_span(model.parameters());
    sy::collective::allreduce(t, parameters, sy::ops::average{});
    return parameters.size_bytes();
  }

  std::size_t period_;
  std::size_t since_average_ = 0;
  std::size_t averages_ = 0;
};

static_assert(sy::strategy::policy<local_sgd, sy::nn::mlp<>, sy::optim::adam<>, sy::transport::inproc>);

/// @brief Fires after the first epoch whose test accuracy reaches `threshold`. Every rank sees the
/// same record, so every rank fires after the same epoch.
struct accuracy_reached {
  double threshold = 0.8;
  [[nodiscard]] bool fire(const sy::train::epoch_record& record) const noexcept {
    return record.test_accuracy >= threshold;
  }
};

static_assert(sy::trigger::trigger<accuracy_reached>);

struct config {
  std::string strategy = "switch";
  int ranks = 4;
  std::size_t epochs = 4;
  std::size_t period = 8;
  double switch_accuracy = 0.82;
  std::size_t batch = 64;
  double lr = 1e-3;
  std::uint64_t seed = 42;
  std::size_t train_limit = 0;
  std::string data_dir;
  double expect_accuracy = 0.0;
  bool expect_switch = false;
  bool quiet = false;
};

// What rank 0 reports, and every rank's parameters to check that the replicas agree.
struct rank_result {
  sy::train::history history;
  std::size_t averages = 0;
  std::optional<std::size_t> switched_after;
  std::vector<float> parameters;
};

template <class Strategy>
rank_result train(sy::transport::inproc& t, Strategy strategy, const config& c,
                  std::shared_ptr<const sy::data::dataset> train_set, const sy::data::dataset& test_set) {
  sy::nn::mlp model{c.seed};
  sy::optim::adam optimizer{model.parameters().size(), c.lr};
  sy::train::trainer_options options;
  options.epochs = c.epochs;
  options.batch_size = c.batch;
  options.seed = c.seed;
  options.progress = t.rank() == 0 && !c.quiet ? &std::cout : nullptr;
  sy::train::trainer trainer{model, optimizer, std::move(strategy), options};
  rank_result result;
  result.history = trainer.fit(t, std::move(train_set), test_set);
  if constexpr (requires { trainer.strategy().switched_after_epoch(); }) {
    result.averages = trainer.strategy().first().averages();
    result.switched_after = trainer.strategy().switched_after_epoch();
  } else {
    result.averages = trainer.strategy().averages();
  }
  result.parameters.assign(model.parameters().begin(), model.parameters().end());
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  config c;
  CLI::App app{"Train on Fashion-MNIST with a strategy and a trigger defined outside switchyard: local SGD, "
               "then all-reduce once the test accuracy reaches a threshold"};
  app.add_option("--strategy", c.strategy, "local: local SGD throughout; switch: local SGD, then all-reduce")
      ->check(CLI::IsMember({"local", "switch"}))
      ->capture_default_str();
  app.add_option("--ranks", c.ranks, "In-process ranks")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--epochs", c.epochs, "Epochs")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--period", c.period, "Local SGD averages the parameters every K steps")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--switch-accuracy", c.switch_accuracy,
                 "With --strategy switch: the test accuracy (0 to 1) after which all-reduce takes over")
      ->check(example::finite_range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--batch", c.batch, "Batch size per worker")->check(CLI::Range(1, 60000))->capture_default_str();
  app.add_option("--lr", c.lr, "Adam's learning rate")->check(example::finite_positive())->capture_default_str();
  app.add_option("--seed", c.seed, "Seed of the initial model and the data order")
      ->check(example::whole_number())
      ->capture_default_str();
  app.add_option("--train-limit", c.train_limit, "Train on the first N training examples only (0: all of them)")
      ->check(example::whole_number())
      ->capture_default_str();
  app.add_option("--data", c.data_dir, "Directory of the Fashion-MNIST .gz files (default: Debian's)");
  app.add_option("--expect-accuracy", c.expect_accuracy,
                 "Exit with a failure unless the final test accuracy (0 to 1) reaches this")
      ->check(example::finite_range(0.0, 1.0));
  app.add_flag("--expect-switch", c.expect_switch, "Exit with a failure unless the switch to all-reduce happened");
  app.add_flag("--quiet", c.quiet, "No per-epoch progress lines");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto data = c.data_dir.empty() ? sy::data::fashion_mnist::load() : sy::data::fashion_mnist::load(c.data_dir);
    const auto train_set =
        c.train_limit == 0 ? data.train : std::make_shared<const sy::data::dataset>(data.train->first(c.train_limit));
    fmt::print("mlp on {} Fashion-MNIST examples, {} in-process ranks, {}\n", train_set->size(), c.ranks,
               c.strategy == "local" ? fmt::format("local SGD averaging every {} steps", c.period)
                                     : fmt::format("local SGD averaging every {} steps, then all-reduce from {:.1f}% "
                                                   "test accuracy",
                                                   c.period, 100.0 * c.switch_accuracy));
    const sy::nn::blas_threads_scope blas{1};  // one OpenBLAS thread per rank thread
    example::warn_of_blas_kernels("custom_policy");
    const std::vector<rank_result> ranks = sy::transport::run_inproc(c.ranks, [&](sy::transport::inproc& t) {
      if (c.strategy == "local") return train(t, local_sgd{c.period}, c, train_set, *data.test);
      using local_then_all_reduce = sy::strategy::switch_to<local_sgd, sy::strategy::all_reduce<>, accuracy_reached>;
      return train(t, local_then_all_reduce{local_sgd{c.period}, {}, accuracy_reached{c.switch_accuracy}}, c,
                   train_set, *data.test);
    });

    const rank_result& first = ranks.front();
    const double accuracy = first.history.last().test_accuracy;
    const bool replicas_agree = std::all_of(ranks.begin(), ranks.end(),
                                            [&](const rank_result& r) { return r.parameters == first.parameters; });
    fmt::print("local SGD averaged the parameters {} times\n", first.averages);
    if (c.strategy == "switch") {
      if (first.switched_after) {
        fmt::print("switched to all-reduce after epoch {}\n", *first.switched_after);
      } else {
        fmt::print("no switch: the test accuracy stayed below {:.1f}%\n", 100.0 * c.switch_accuracy);
      }
    }
    fmt::print("replicas {} after the run\n", replicas_agree ? "identical" : "DIFFER");
    fmt::print("final test accuracy {:.2f}% after {:.1f} s\n", 100.0 * accuracy, first.history.last().wall_seconds);

    bool ok = replicas_agree;
    if (accuracy < c.expect_accuracy) {
      std::fprintf(stderr, "custom_policy: test accuracy %.4f is below the expected %.4f\n", accuracy,
                   c.expect_accuracy);
      ok = false;
    }
    if (c.expect_switch && !first.switched_after) {
      std::fprintf(stderr, "custom_policy: the switch to all-reduce was expected but did not happen\n");
      ok = false;
    }
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "custom_policy: %s\n", e.what());
    return EXIT_FAILURE;
  }
}

// The training half of the Fashion-MNIST examples: one run on one rank under the strategy the
// settings name, with an optional straggler. Only the runs_*.cpp files include it: each compiles
// `run_rank` for one transport, so the two examples share those instantiations, the build
// compiles them in parallel, and the examples' own files stay quick to compile.
#pragma once

#include "fashion_mnist_runs.hpp"

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/nn/cnn.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/adam.hpp>
#include <switchyard/optim/any_optimizer.hpp>
#include <switchyard/optim/cosine.hpp>
#include <switchyard/optim/momentum.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/optim/warmup.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/alternate.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/train/checkpoint.hpp>
#include <switchyard/train/epoch_log.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/trigger/straggler.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace example {

// The parameter server's measurements, found in a switch's stages too.
template <class Strategy>
const sy::strategy::ps_statistics* ps_statistics_of(const Strategy& strategy) {
  if constexpr (requires { strategy.statistics(); }) {
    return &strategy.statistics();
  } else if constexpr (requires { strategy.first(); strategy.second(); }) {
    const sy::strategy::ps_statistics* found = ps_statistics_of(strategy.first());
    return found != nullptr ? found : ps_statistics_of(strategy.second());
  } else {
    return nullptr;
  }
}

// How many buckets the all-reduce stage reduced in its last step, found in a switch's stages too
// (0: the whole arena at once, or no all-reduce stage).
template <class Strategy>
std::size_t buckets_of(const Strategy& strategy) {
  if constexpr (requires { strategy.last_buckets(); }) {
    return strategy.last_buckets().size();
  } else if constexpr (requires { strategy.first(); strategy.second(); }) {
    return std::max(buckets_of(strategy.first()), buckets_of(strategy.second()));
  } else {
    return 0;
  }
}

// Whether the parameter-server stage, found in a switch's stages too, summed each node's gradients
// before one push (aggregation::node, or automatic over a transport with nodes).
template <class Strategy>
bool ps_by_node(const Strategy& strategy) {
  if constexpr (requires { strategy.aggregates_by_node(); }) {
    return strategy.aggregates_by_node();
  } else if constexpr (requires { strategy.first(); strategy.second(); }) {
    return ps_by_node(strategy.first()) || ps_by_node(strategy.second());
  } else {
    return false;
  }
}

// "after epoch 4 to ps: straggler ratio 3.02 > 1.5 for 2 epochs", or "in epoch 3 after batch 120
// to ps: ..." for a switch inside an epoch, for each switch of an alternate.
template <class Strategy>
std::vector<std::string> describe_switches(const Strategy& strategy) {
  std::vector<std::string> lines;
  if constexpr (requires { strategy.switches(); }) {
    for (const sy::strategy::alternation& s : strategy.switches()) {
      const std::string when = s.at_batch ? fmt::format("in epoch {} after batch {}", s.after_epoch + 1, *s.at_batch)
                                          : fmt::format("after epoch {}", s.after_epoch);
      lines.push_back(fmt::format("{} to {}: {}", when, s.to, s.reason));
    }
  } else if constexpr (requires { strategy.switched_after_batches(); }) {
    // A switch_to: its one switch, then those of a switch nested as its second stage.
    if (const std::optional<std::uint64_t> batches = strategy.switched_after_batches()) {
      lines.push_back(fmt::format("to {} after {} batches under {}", strategy.second().name(), *batches,
                                  strategy.first().name()));
      for (std::string& nested : describe_switches(strategy.second())) lines.push_back(std::move(nested));
    }
  }
  return lines;
}

template <class Transport, class Strategy>
run_result summarize(Transport& t, const Strategy& strategy, sy::train::history history) {
  run_result result{std::move(history)};
  result.switches = describe_switches(strategy);
  result.buckets = buckets_of(strategy);
  result.nodes = sy::transport::topology_of(t).nodes;
  result.ps_by_node = ps_by_node(strategy);
  // The same strategy type on every rank: all or none take part in these collectives.
  if (const sy::strategy::ps_statistics* found = ps_statistics_of(strategy)) {
    const sy::strategy::ps_statistics& s = *found;
    double weighted = 0;
    double taken = 0;  // pushes applied
    for (std::size_t k = 0; k < s.staleness.size(); ++k) {
      weighted += static_cast<double>(k * s.staleness[k]);
      taken += static_cast<double>(s.staleness[k]);
    }
    std::array<double, 7> sums{weighted, static_cast<double>(s.updates), s.server_busy_seconds, s.server_seconds,
                               s.worker_wait_seconds, taken, static_cast<double>(s.dropped)};
    sy::collective::allreduce(t, sums, sy::ops::sum{});
    std::array<double, 1> worst{static_cast<double>(s.max_staleness())};
    sy::collective::allreduce(t, worst, sy::ops::max{});
    result.max_staleness = worst[0];
    result.mean_staleness = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
    result.server_busy_fraction = sums[3] > 0 ? sums[2] / sums[3] : 0.0;
    result.worker_wait_seconds = sums[4];
    result.dropped_share = sums[6] > 0 ? sums[6] / (sums[5] + sums[6]) : 0.0;
  }
  return result;
}

// The optimizer --optimizer names, over `size` parameters.
inline sy::optim::any_optimizer<> make_optimizer(const std::string& name, std::size_t size,
                                                 const sy::optim::warmup<sy::optim::cosine>& schedule) {
  if (name == "adam") return sy::optim::adam{size, schedule};
  if (name == "momentum") return sy::optim::momentum{size, schedule, 0.9};
  return sy::optim::sgd{size, schedule};
}

// A simulated rank's clock, for the progress lines; empty on real ranks.
using simulated_clock = std::function<double()>;

template <class Transport, class Model, class Strategy>
run_result train_model(Transport& t, Model& model, Strategy strategy, const config& c,
                       const sy::data::fashion_mnist& data, const simulated_clock& now) {
  // The schedules count batches trained, whatever the strategy: the cosine spans the run's.
  const std::size_t steps = c.epochs * (data.train->size() / c.batch);
  const std::size_t warm = std::min(c.warmup_steps, steps / 2);
  const sy::optim::warmup schedule{warm, sy::optim::cosine{c.lr, std::max<std::size_t>(1, steps - warm)}};
  const std::size_t size = model.parameters().size();
  const straggler slow = parse_straggler(c.straggler);  // a worker of every stage (check_world)

  sy::train::trainer_options options;
  options.epochs = c.epochs;
  options.batch_size = c.batch;
  options.seed = c.seed;
  options.flush_subnormals = c.flush_subnormals;
  options.progress = t.rank() == 0 && !c.quiet ? &std::cout : nullptr;
  options.checkpoint_every = c.checkpoint_dir.empty() ? 0 : c.checkpoint_every;
  std::optional<sy::train::epoch_log> log;
  if (t.rank() == 0 && !c.log.empty()) log.emplace(c.log);

  // One trainer for every --optimizer: the choice is made at run time, behind any_optimizer.
  sy::optim::any_optimizer<> optimizer = make_optimizer(c.optimizer, size, schedule);
  sy::train::trainer trainer{model, optimizer, strategy, options};
  if (!c.checkpoint_dir.empty()) {
    const sy::train::model_fingerprint fingerprint = sy::train::fingerprint(model, c.model);
    sy::train::write_checkpoints(trainer, c.checkpoint_dir, fingerprint);
    if (c.resume) {
      const std::filesystem::path file = sy::train::checkpoint_file(c.checkpoint_dir);
      const std::uint64_t epoch = sy::train::resume(trainer, file, fingerprint);
      if (t.rank() == 0) fmt::print("resuming from {} after epoch {}\n", file.string(), epoch);
    }
  }
  // Each line names the switches made since the last one (a switch between epochs comes after
  // the record of the epoch before it, so it is on the next line; its sentence names its epoch).
  // A resumed run logs only its own.
  std::size_t logged = describe_switches(trainer.strategy()).size();
  if (log) {
    trainer.on_epoch([&](const sy::train::epoch_record& e) {
      const std::vector<std::string> switches = describe_switches(trainer.strategy());
      log->write(e, std::span<const std::string>(switches).subspan(logged));
      logged = switches.size();
    });
  }
  if (now && options.progress != nullptr) {
    trainer.on_epoch([&now, started = std::chrono::steady_clock::now()](const sy::train::epoch_record& e) {
      fmt::print("epoch {} ends at {:.3f} s of simulated time, {:.1f} s of real time\n", e.epoch, now(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    });
  }
  if (slow.rank == t.rank()) model.factor = slow.factor;
  sy::train::history history = trainer.fit(t, data.train, *data.test);
  return summarize(t, trainer.strategy(), std::move(history));
}

// Calls `use` with the parameter server that --servers and --consistency describe.
template <class Use>
auto with_parameter_server(const config& c, Use use) {
  namespace consistency = sy::strategy::consistency;
  const sy::compression::format words = sy::compression::parse_format(c.ps_compress);
  const auto pipeline = c.ps_pipeline ? sy::strategy::pipelining::one_ahead : sy::strategy::pipelining::off;
  const auto aggregate = c.ps_aggregate == "node"   ? sy::strategy::aggregation::node
                         : c.ps_aggregate == "rank" ? sy::strategy::aggregation::rank
                                                    : sy::strategy::aggregation::automatic;
  // Dedicated server ranks or co-located ones: the same type, made two ways.
  const auto make = [&]<class Consistency>(Consistency consistency) {
    using ps = sy::strategy::parameter_server<Consistency>;
    if (colocated_servers(c)) return ps(sy::strategy::colocated, consistency, words, pipeline, aggregate);
    return ps(std::stoul(c.servers), consistency, words, pipeline, aggregate);
  };
  if (c.consistency == "async") return use(make(consistency::async{}));
  if (c.consistency == "sync") return use(make(consistency::sync{}));
  const std::size_t count = std::stoul(c.consistency.substr(std::string_view("bounded:").size()));
  if (c.consistency.starts_with("backups:")) return use(make(consistency::backups{count}));
  return use(make(consistency::bounded{count}));
}

// Calls `use` with the all-reduce algorithm that --allreduce-algorithm names.
template <class Use>
auto with_allreduce_algorithm(const config& c, Use use) {
  if (c.allreduce_algorithm == "ring") return use(sy::algorithm::ring{});
  if (c.allreduce_algorithm == "recursive-doubling") return use(sy::algorithm::recursive_doubling{});
  if (c.allreduce_algorithm == "halving-doubling") return use(sy::algorithm::halving_doubling{});
  if (c.allreduce_algorithm == "hierarchical") return use(sy::algorithm::hierarchical{});
  return use(sy::algorithm::automatic{});
}

template <class Transport, class Model>
run_result with_strategy(Transport& t, Model& model, const config& c, const sy::data::fashion_mnist& data,
                         const simulated_clock& now) {
  const sy::strategy::exchange exchange = c.exchange == "overlapped" ? sy::strategy::exchange::overlapped
                                          : c.exchange == "buckets"  ? sy::strategy::exchange::buckets
                                                                     : sy::strategy::exchange::whole;
  const sy::strategy::all_reduce<> all_reduce{{.compression = sy::compression::parse_format(c.compress),
                                               .exchange = exchange,
                                               .bucket_bytes = c.bucket_kb * 1024}};
  if (c.strategy == "allreduce") {
    return with_allreduce_algorithm(c, [&]<class Algorithm>(Algorithm) {
      return train_model(t, model, sy::strategy::all_reduce<Algorithm>{all_reduce.options()}, c, data, now);
    });
  }
  if (c.strategy == "ps") return with_parameter_server(c, [&](auto ps) { return train_model(t, model, ps, c, data, now); });
  sy::strategy::switch_options options;
  options.warmup_steps = c.switch_warmup;
  options.second_moment_scale = c.switch_variance;
  options.learning_rate_scale = c.switch_lr_scale;
  options.rescale_for_batch = c.switch_rescale != "none";
  if (c.switch_rescale == "sqrt") options.learning_rate_rule = sy::strategy::switch_options::batch_rule::square_root;
  if (c.strategy == "adaptive") {
    const sy::trigger::straggler_detected detect{
        .ratio = c.straggler_ratio,
        .window = c.straggler_window,
        .dwell = c.straggler_dwell,
        .every = c.straggler_every,
        .min_wait = c.straggler_min_wait};
    const sy::trigger::stragglers_gone calm{
        .ratio = c.calm_ratio, .window = c.straggler_window, .dwell = c.straggler_dwell, .every = c.straggler_every};
    return with_parameter_server(c, [&](auto ps) {
      return train_model(t, model, sy::strategy::alternate{all_reduce, ps, detect, calm, options}, c, data, now);
    });
  }
  const chosen_trigger trigger = parse_trigger(c.trigger);
  return with_parameter_server(c, [&](auto ps) {
    if (c.first == "ps") {
      return train_model(t, model, sy::strategy::switch_to{ps, all_reduce, trigger, options}, c, data, now);
    }
    return train_model(t, model, sy::strategy::switch_to{all_reduce, ps, trigger, options}, c, data, now);
  });
}

// The model --model names, behind one type: run_rank compiles the trainer and every strategy once
// for both models (they are most of the examples' build), for a few indirect calls per batch (one
// per layer that reports its gradients).
// It is also the straggler of --straggler: its forward and backward pass takes `factor` times as
// long. It sleeps (factor - 1) times the pass, inside the pass, so the trainer counts it as
// compute, as it would a slower CPU, and the straggler triggers see it. Each layer's part of the
// pass is paced before the layer reports its gradients (nn::gradient_hooks), so an overlapped
// exchange sees them as late as a slower CPU would.
class chosen_model {
 public:
  chosen_model(const std::string& name, std::uint64_t seed) {
    if (name == "cnn") {
      model_ = std::make_unique<held<sy::nn::cnn<>>>(seed);
    } else {
      model_ = std::make_unique<held<sy::nn::mlp<>>>(seed);
    }
  }

  std::span<float> parameters() noexcept { return model_->parameters(); }
  std::span<float> gradients() noexcept { return model_->gradients(); }
  sy::nn::evaluation evaluate(const sy::data::batch_view& batch) { return model_->evaluate(batch); }
  std::string layout() const { return model_->layout(); }

  double forward_backward(const sy::data::batch_view& batch) {
    return forward_backward(batch, [](std::size_t, std::size_t) {});
  }
  template <class Ready>
  double forward_backward(const sy::data::batch_view& batch, Ready&& ready) {
    auto since = std::chrono::steady_clock::now();
    const auto pace = [&] {
      if (factor > 1.0) std::this_thread::sleep_for((factor - 1.0) * (std::chrono::steady_clock::now() - since));
      since = std::chrono::steady_clock::now();
    };
    auto paced_ready = [&](std::size_t first, std::size_t count) {
      pace();
      ready(first, count);
    };
    const double loss = model_->forward_backward(batch, std::ref(paced_ready));
    pace();
    if (after_pass) after_pass();
    return loss;
  }

  double factor = 1.0;
  // Called after each pass: a simulated rank charges the calibrated cost of a step there.
  std::function<void()> after_pass;

 private:
  using ready_function = std::function<void(std::size_t, std::size_t)>;
  struct model_base {
    virtual ~model_base() = default;
    virtual std::span<float> parameters() noexcept = 0;
    virtual std::span<float> gradients() noexcept = 0;
    virtual double forward_backward(const sy::data::batch_view& batch, const ready_function& ready) = 0;
    virtual sy::nn::evaluation evaluate(const sy::data::batch_view& batch) = 0;
    virtual std::string layout() const = 0;
  };
  template <class Model>
  struct held final : model_base {
    explicit held(std::uint64_t seed) : model(seed) {}
    std::span<float> parameters() noexcept override { return model.parameters(); }
    std::span<float> gradients() noexcept override { return model.gradients(); }
    double forward_backward(const sy::data::batch_view& batch, const ready_function& ready) override {
      return model.forward_backward(batch, ready);
    }
    sy::nn::evaluation evaluate(const sy::data::batch_view& batch) override { return model.evaluate(batch); }
    std::string layout() const override { return model.layout(); }
    Model model;
  };
  std::unique_ptr<model_base> model_;
};
static_assert(sy::nn::gradient_hooks<chosen_model>, "the chosen model keeps its gradient hooks");

template <class Transport>
run_result run_rank(Transport& t, const config& c, const sy::data::fashion_mnist& data) {
  simulated_clock now;
  chosen_model model{c.model, c.seed};
  if constexpr (requires { t.now(); t.compute(1.0); }) {
    now = [&t] { return t.now(); };
    if (c.sim_step_seconds > 0) model.after_pass = [&t, cost = c.sim_step_seconds] { t.compute(cost); };
  }
  auto train = [&](auto& transport) { return with_strategy(transport, model, c, data, now); };
  if (const std::optional<sy::transport::fault_plan> plan = parse_fault(c.fault)) {
    sy::transport::faulty<Transport> f{t, *plan};
    return train(f);
  }
  return train(t);
}

}  // namespace example

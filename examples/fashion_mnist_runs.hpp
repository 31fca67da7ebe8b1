// What the Fashion-MNIST examples share: the run's settings and their command-line options, one
// training run on one rank under the strategy those settings name (all-reduce, a parameter
// server, or a switch between the two), with an optional straggler, and the ranks that run it (in
// process, the processes of an MPI job, or the hosts of a simulated cluster). The run itself is in
// fashion_mnist_train.hpp.
#pragma once

#include "json_output.hpp"
#include "node_layout.hpp"
#include "simulation.hpp"
#include "startup_checks.hpp"

#include <switchyard/collective/barrier.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/history.hpp>
#include <switchyard/data/fashion_mnist.hpp>
#include <switchyard/nn/blas_threads.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>
#if SWITCHYARD_HAS_MPI
#include <switchyard/transport/hybrid.hpp>
#include <switchyard/transport/mpi.hpp>
#endif
#include <switchyard/trigger/after_epochs.hpp>
#include <switchyard/trigger/after_seconds.hpp>
#include <switchyard/trigger/after_steps.hpp>
#include <switchyard/trigger/loss_plateau.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace example {

namespace sy = switchyard;


struct config {
  std::string model = "mlp";
  std::string strategy = "switch";
  std::string servers = "1";  // a count of dedicated server ranks, or "colocated"
  std::string consistency = "async";
  std::string straggler;
  std::string fault;
  std::string first = "ps";
  std::string second = "allreduce";
  std::string trigger = "epochs:3";
  std::uint64_t switch_warmup = 0;
  double switch_variance = 1.0;
  double switch_lr_scale = 1.0;
  std::string switch_rescale = "batch";
  std::string optimizer = "adam";
  std::string compress = "none";     // the all-reduce stage's gradients on the wire: none, fp16 or bf16
  std::string ps_compress = "none";  // the parameter server's pushes and pulls on the wire
  bool ps_pipeline = false;          // parameter-server workers overlap their exchange with the next batch
  std::string ps_aggregate = "automatic";  // whose gradients a push carries: automatic, node or rank
  std::string exchange = "whole";    // the all-reduce stage's gradients: whole, buckets or overlapped
  // --strategy allreduce: automatic, ring, recursive-doubling, halving-doubling, hierarchical
  std::string allreduce_algorithm = "automatic";
  std::size_t bucket_kb = 0;         // a bucket closes at this many KiB (0: one per layer)
  int ranks = 4;
  int threads_per_node = -1;  // under mpirun: worker threads per process (transport::hybrid); -1: one rank per process
  bool oversubscribe_threads = false;  // allow more threads per node than the process has cores
  std::vector<int> node_sizes;  // in process: the virtual nodes of --nodes or --node-sizes (empty: one node)
  std::size_t epochs = 15;
  std::size_t batch = 64;
  double lr = 1e-3;
  std::size_t warmup_steps = 200;
  std::uint64_t seed = 42;
  int blas_threads = 1;
  bool flush_subnormals = true;
  std::string data_dir;
  std::size_t train_limit = 0;  // train on the first N examples only (0: all)
  std::size_t train_repeat = 1;  // the training examples this many times over, before train_limit
  std::string log;
  std::string summary;
  bool quiet = false;
  std::string checkpoint_dir;
  std::size_t checkpoint_every = 1;
  bool resume = false;
  // --strategy adaptive: the straggler triggers' rule.
  double straggler_ratio = 1.5;
  double calm_ratio = 1.2;
  std::size_t straggler_window = 2;
  std::size_t straggler_dwell = 2;
  std::size_t straggler_every = 0;  // steps per sample; 0: one observation per epoch
  double straggler_min_wait = 0.0;  // the least share of a step the others wait for the straggler
  simulation_settings simulation;   // --simulate HOSTS and its options
  double sim_step_seconds = 0;      // --sim-compute calibrated: what each step costs (0: not calibrated)
};

/// Whether --servers colocated asked for one server on every rank, beside its worker.
inline bool colocated_servers(const config& c) { return c.servers == "colocated"; }

// --straggler RANK:FACTOR: that worker sleeps (FACTOR - 1) times its own compute time each step.
struct straggler {
  int rank = -1;
  double factor = 1.0;
};

inline straggler parse_straggler(const std::string& text) {
  if (text.empty()) return {};
  const auto colon = text.find(':');
  const std::optional<std::uint64_t> rank = count_number(text.substr(0, colon));
  // Not a number counts as 0, which is refused.
  const double factor = colon == std::string::npos ? 0.0 : finite_number(text.substr(colon + 1)).value_or(0.0);
  if (!rank || *rank > 255 || factor < 1.0) {
    throw sy::usage_error(fmt::format(
        "expected RANK:FACTOR, a rank from 0 and a finite factor >= 1 (for example 3:2.0), got '{}'", text));
  }
  return {static_cast<int>(*rank), factor};
}

// --fault fail:RANK:K | slow:RANK:MICROSECONDS | delay:MICROSECONDS: the run's transport goes
// through transport::faulty with that plan (rank RANK fails after K messages; RANK sleeps that
// long before each message; every rank does).
inline std::optional<sy::transport::fault_plan> parse_fault(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  const auto number = [&](std::size_t k) { return count_number(parts[k]); };
  sy::transport::fault_plan plan;
  if (parts.size() == 3 && parts[0] == "fail" && number(1) && *number(1) <= 255 && number(2)) {
    plan.fail_rank = static_cast<int>(*number(1));
    plan.fail_after = *number(2);
    return plan;
  }
  if (parts.size() == 3 && parts[0] == "slow" && number(1) && *number(1) <= 255 && number(2)) {
    plan.slow_rank = static_cast<int>(*number(1));
    plan.slow_delay = std::chrono::microseconds(*number(2));
    return plan;
  }
  if (parts.size() == 2 && parts[0] == "delay" && number(1)) {
    plan.delay = std::chrono::microseconds(*number(1));
    return plan;
  }
  throw sy::usage_error(fmt::format(
      "expected fail:RANK:MESSAGES, slow:RANK:MICROSECONDS or delay:MICROSECONDS, each a whole number, got '{}'",
      text));
}

// What a run leaves for the summary: the epochs, and the parameter servers' measurements summed
// over ranks (zero under all-reduce).
struct run_result {
  sy::train::history history;
  double max_staleness = 0;
  double mean_staleness = 0;
  double server_busy_fraction = 0;
  double worker_wait_seconds = 0;
  double dropped_share = 0;  // --consistency backups:B: the share of pushes the servers dropped
  std::vector<std::string> switches = {};  // --strategy adaptive: each switch, with its reason
  std::size_t buckets = 0;  // the all-reduce stage's last step: buckets reduced (0: the whole arena at once)
  bool ps_by_node = false;  // the parameter-server stage summed each node's gradients before one push
  std::optional<double> simulated_seconds = {};  // --simulate: the simulated cluster's time for the run
  double real_seconds = 0;                       // --simulate: the time this machine took to simulate it
  int nodes = 1;  // the nodes the transport reports (node_topology::nodes): processes under --threads-per-node
};

// How a run moved its gradients, as both examples' summaries record it: the options that choose
// the wire format and the exchange, and the buckets the all-reduce stage's last step reduced.
inline json exchange_settings_json(const config& c, const run_result& r) {
  return {{"compress", c.compress},         {"ps_compress", c.ps_compress}, {"ps_pipeline", c.ps_pipeline},
          {"ps_aggregate", c.ps_aggregate},     {"allreduce_algorithm", c.allreduce_algorithm},
          {"switch_rescale", c.switch_rescale}, {"exchange", c.exchange},   {"bucket_kb", c.bucket_kb},
          {"buckets", r.buckets},           {"straggler", c.straggler}};
}

// --trigger epochs:N | steps:N | seconds:S | plateau:EPSILON[:WINDOW]. The command line picks the
// trigger at run time, so the example wraps the four in a trigger type of its own: the Trigger
// concept asks for fire(record), fire_at(progress) lets steps:N switch inside an epoch, and a
// serialize() keeps the chosen trigger's state in checkpoints.
struct chosen_trigger {
  std::variant<sy::trigger::after_epochs<>, sy::trigger::after_steps<>, sy::trigger::after_seconds,
               sy::trigger::loss_plateau>
      chosen;
  bool fire(const sy::train::epoch_record& record) {
    return std::visit([&](auto& t) { return static_cast<bool>(t.fire(record)); }, chosen);
  }
  bool fire_at(const sy::trigger::progress& p) {
    return std::visit(
        [&](auto& t) {
          if constexpr (sy::trigger::within_epoch<std::remove_reference_t<decltype(t)>>) {
            return static_cast<bool>(t.fire_at(p));
          } else {
            return false;
          }
        },
        chosen);
  }
};

// The same --trigger on resume picks the same alternative; its state comes from the checkpoint.
template <class Archive>
void serialize(Archive& archive, chosen_trigger& t, const unsigned int /*version*/) {
  std::visit([&](auto& chosen) { archive & chosen; }, t.chosen);
}

inline chosen_trigger parse_trigger(const std::string& text) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string value = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (kind == "epochs" || kind == "steps") {
    if (const std::optional<std::uint64_t> count = count_number(value)) {
      if (kind == "epochs") return {sy::trigger::after_epochs{*count}};
      return {sy::trigger::after_steps{*count}};
    }
  }
  if (const std::optional<double> seconds = finite_number(value); kind == "seconds" && seconds && *seconds >= 0.0) {
    return {sy::trigger::after_seconds{*seconds}};
  }
  if (kind == "plateau") {
    const auto second_colon = value.find(':');
    const std::optional<double> epsilon = finite_number(value.substr(0, second_colon));
    sy::trigger::loss_plateau plateau{epsilon.value_or(-1.0)};
    const std::optional<std::uint64_t> window = second_colon == std::string::npos
                                                    ? std::optional<std::uint64_t>(plateau.window)
                                                    : count_number(value.substr(second_colon + 1));
    if (plateau.epsilon >= 0.0 && window && *window >= 1) {
      plateau.window = *window;
      return {plateau};
    }
  }
  throw sy::usage_error(fmt::format(
      "expected epochs:N, steps:N, seconds:S or plateau:EPSILON[:WINDOW] (N a whole number, S and EPSILON finite "
      "and >= 0, WINDOW >= 1), got '{}'",
      text));
}

/// One run of `c` on this rank over `t`, or over `transport::faulty` when --fault gives a plan,
/// with the model --model names. Defined in fashion_mnist_train.hpp and compiled once per
/// transport by the runs_*.cpp files: the instantiations are the bulk of the examples' build.
template <class Transport>
run_result run_rank(Transport& t, const config& c, const sy::data::fashion_mnist& data);

#if SWITCHYARD_HAS_SIMGRID
/// The ranks of the simulated cluster `o` after checking it; a platform file is loaded (in an
/// empty simulation) to count its hosts. Defined in runs_simulated.cpp.
int simulated_ranks(const sy::transport::simulated_options& o);
/// One run of `c` on every rank of the simulated cluster `o`: rank 0's result, with the
/// simulated and the real seconds it took.
run_result run_simulated_ranks(const sy::transport::simulated_options& o, const config& c,
                               const sy::data::fashion_mnist& data);
/// The thread CPU seconds of one forward and backward pass of --model over a --batch of the
/// training data, averaged over a few passes after one to warm up (--sim-compute calibrated).
double calibrate_step(const config& c, const sy::data::fashion_mnist& data);
#endif

/// The options of the run's size and setting: model, ranks, epochs, data and threads.
inline void add_run_options(CLI::App& app, config& c) {
  app.add_option("--model", c.model, "Model")->check(CLI::IsMember({"mlp", "cnn"}))->capture_default_str();
  app.add_option("--ranks", c.ranks, "In-process ranks (ignored under mpirun, which sets the world)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--epochs", c.epochs, "Epochs")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--batch", c.batch, "Batch size per worker")->check(CLI::Range(1, 60000))->capture_default_str();
  app.add_option("--seed", c.seed, "Seed of the initial model and the data order")
      ->check(whole_number())
      ->capture_default_str();
  app.add_option("--blas-threads", c.blas_threads, "OpenBLAS threads per rank")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_flag("--no-flush-subnormals{false}", c.flush_subnormals,
               "Keep subnormal floats instead of flushing them to zero (slow on Intel cores: docs/training.md)");
  app.add_option("--data", c.data_dir, "Directory of the Fashion-MNIST .gz files (default: Debian's)");
  app.add_option("--train-limit", c.train_limit,
                 "Train on the first N training examples only (0: all of them); each worker needs a full batch")
      ->check(whole_number())
      ->capture_default_str();
  app.add_option("--train-repeat", c.train_repeat,
                 "The training examples K times over, in order, before --train-limit: full batches for the many "
                 "workers of a simulated cluster (a larger data set of the same shape, no new information)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_flag("--quiet", c.quiet, "No per-epoch progress lines");
  app.add_option("--straggler", c.straggler,
                 "RANK:FACTOR: that worker sleeps (FACTOR - 1) x its compute time after each step")
      ->check(parsed_by(parse_straggler, "RANK:FACTOR"));
  app.add_option("--fault", c.fault,
                 "Inject a fault through transport::faulty: fail:RANK:MESSAGES (that rank fails after so many "
                 "messages), slow:RANK:MICROSECONDS (it sleeps that long before each message) or delay:MICROSECONDS "
                 "(every rank does)")
      ->check(parsed_by(parse_fault, "KIND:..."));
}

/// The parameter server's options: its ranks, consistency and wire format.
inline void add_server_options(CLI::App& app, config& c) {
  app.add_option("--servers", c.servers,
                 "Parameter servers: N (the last N ranks serve) or colocated (every rank works and serves one "
                 "shard, on a thread beside its worker)")
      ->check([](const std::string& v) {
        const std::optional<std::uint64_t> count = count_number(v);
        if (v == "colocated" || (count && *count >= 1 && *count <= 255 && v[0] != '0')) return std::string();
        return "expected a number of server ranks from 1 to 255 or colocated, got '" + v + "'";
      })
      ->capture_default_str();
  app.add_option("--consistency", c.consistency,
                 "Parameter-server consistency: async, sync, bounded:K (no worker more than K steps ahead "
                 "of the slowest) or backups:B (synchronous rounds that drop the B slowest workers' pushes)")
      ->check([](const std::string& v) {
        if (v == "async" || v == "sync") return std::string();
        for (const std::string_view model : {"bounded:", "backups:"}) {
          if (v.starts_with(model) && count_number(v.substr(model.size()))) return std::string();
        }
        return "expected async, sync, bounded:K or backups:B with K or B a whole number, got '" + v + "'";
      })
      ->capture_default_str();
  app.add_option("--ps-compress", c.ps_compress,
                 "The parameter server's pushes (with error feedback) and pulls on the wire: none, fp16 or bf16")
      ->check(CLI::IsMember({"none", "fp16", "bf16"}))
      ->capture_default_str();
  app.add_flag("--ps-pipeline", c.ps_pipeline,
               "Parameter-server workers compute the next batch's gradient while their push and pull are on the "
               "wire (one more step of staleness)");
  app.add_option("--ps-aggregate", c.ps_aggregate,
                 "Whose gradients a parameter-server push carries: node (a node's workers sum theirs before one "
                 "push per node; co-located, one shard per node), rank (every worker pushes its own), or automatic "
                 "(node when the transport's ranks span several nodes with more than one rank on some node)")
      ->check(CLI::IsMember({"automatic", "node", "rank"}))
      ->capture_default_str();
}

/// The all-reduce stage's options: its wire format and how it splits the gradients.
inline void add_all_reduce_options(CLI::App& app, config& c) {
  app.add_option("--compress", c.compress,
                 "The all-reduce stage's gradients on the wire: none (floats), fp16 or bf16 (half the bytes)")
      ->check(CLI::IsMember({"none", "fp16", "bf16"}))
      ->capture_default_str();
  app.add_option("--exchange", c.exchange,
                 "The all-reduce stage's gradients: whole (one all-reduce after the backward pass), buckets (per "
                 "layer, after the pass) or overlapped (each bucket reduced while the pass computes the layers "
                 "before it)")
      ->check(CLI::IsMember({"whole", "buckets", "overlapped"}))
      ->capture_default_str();
  app.add_option("--bucket-kb", c.bucket_kb,
                 "With --exchange buckets or overlapped: a bucket closes once it holds this many KiB (0: one per layer)")
      ->check(whole_number())
      ->capture_default_str();
}

/// The optimizer's options and what a switch does to it.
inline void add_optimizer_options(CLI::App& app, config& c) {
  app.add_option("--optimizer", c.optimizer, "Optimizer")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}))
      ->capture_default_str();
  app.add_option("--lr", c.lr, "Peak learning rate")->check(finite_positive())->capture_default_str();
  app.add_option("--warmup", c.warmup_steps, "Linear warm-up over this many batches before the cosine decay")
      ->check(whole_number())
      ->capture_default_str();
  app.add_option("--trigger", c.trigger,
                 "Switches: when to switch: epochs:N, steps:N (inside an epoch), seconds:S or plateau:EPSILON[:WINDOW]")
      ->check(parsed_by(parse_trigger, "KIND:VALUE"))
      ->capture_default_str();
  app.add_option("--switch-variance", c.switch_variance, "Switches: factor on Adam's second moment at the switch")
      ->check(finite_positive())
      ->capture_default_str();
  app.add_option("--switch-lr-scale", c.switch_lr_scale, "Switches: factor on the learning rate after the switch")
      ->check(finite_positive())
      ->capture_default_str();
  app.add_option("--switch-rescale", c.switch_rescale,
                 "Switches: batch: learning rate x B2/B1 and Adam's second moment x B1/B2 for the change of the batch "
                 "an update averages (B1 before, B2 after); sqrt: the same with the learning rate x sqrt(B2/B1); "
                 "none: neither")
      ->check(CLI::IsMember({"batch", "sqrt", "none"}))
      ->capture_default_str();
  app.add_option("--switch-warmup", c.switch_warmup,
                 "Switches: optimizer steps over which the learning rate ramps up again after the switch")
      ->check(whole_number())
      ->capture_default_str();
}

/// --strategy adaptive: the straggler triggers' rule.
inline void add_adaptive_options(CLI::App& app, config& c) {
  app.add_option("--straggler-ratio", c.straggler_ratio,
                 "Adaptive: leave all-reduce when the slowest worker's compute time per step exceeds this many times "
                 "the median's")
      ->check(finite_range(1.0, 1e9))
      ->capture_default_str();
  app.add_option("--calm-ratio", c.calm_ratio,
                 "Adaptive: come back to all-reduce when that ratio is below this (at most --straggler-ratio)")
      ->check(finite_range(1.0, 1e9))
      ->capture_default_str();
  app.add_option("--straggler-window", c.straggler_window,
                 "Adaptive: observations (epochs, or samples with --straggler-every) in a row each ratio must hold")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--straggler-dwell", c.straggler_dwell,
                 "Adaptive: observations a stage makes at least before it is left")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--straggler-every", c.straggler_every,
                 "Adaptive: sample the workers' step times every this many steps of each and switch inside the "
                 "epoch (0: decide once per epoch, for shared cores; on dedicated hosts 5, with --straggler-dwell 3 "
                 "--straggler-min-wait 0.25 --servers colocated --consistency backups:1: docs/training.md)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--straggler-min-wait", c.straggler_min_wait,
                 "Adaptive: leave all-reduce only when the others also wait for the straggler at least this share "
                 "of each step (0: do not ask)")
      ->check(finite_range(0.0, 0.99))
      ->capture_default_str();
}

/// Checkpoints, and the run that resumes from one.
inline void add_checkpoint_options(CLI::App& app, config& c) {
  app.add_option("--checkpoint", c.checkpoint_dir,
                 "Directory for checkpoints (DIR/checkpoint.bin, replaced atomically); off by default");
  app.add_option("--checkpoint-every", c.checkpoint_every, "With --checkpoint: every this many epochs, and at the end")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_flag("--resume", c.resume,
               "Continue from DIR/checkpoint.bin of --checkpoint DIR (the other options as in the run it continues)");
}

/// The options both examples take for the runs they train. Each value is checked as it is read;
/// check_settings, check_world and check_data then refuse the combinations that cannot work.
inline void add_training_options(CLI::App& app, config& c) {
  add_run_options(app, c);
  add_server_options(app, c);
  add_all_reduce_options(app, c);
  add_optimizer_options(app, c);
  add_adaptive_options(app, c);
  add_checkpoint_options(app, c);
}

/// Refuses combinations of settings that cannot work, before any data is read (each option's
/// value alone was checked as it was read).
inline void check_settings(const config& c) {
  if (c.resume && c.checkpoint_dir.empty()) throw sy::usage_error("--resume needs --checkpoint DIR");
  if (c.calm_ratio > c.straggler_ratio) {
    throw sy::usage_error(fmt::format("--calm-ratio {} is above --straggler-ratio {}: the way back to all-reduce must "
                                      "need a smaller ratio than the way out, or the stages flap",
                                      c.calm_ratio, c.straggler_ratio));
  }
  if (c.allreduce_algorithm != "automatic" && c.strategy != "allreduce") {
    throw sy::usage_error(fmt::format("--allreduce-algorithm {} picks the all-reduce of --strategy allreduce; --strategy "
                                      "{} takes algorithm::automatic",
                                      c.allreduce_algorithm, c.strategy));
  }
  if (c.strategy == "switch" && c.first == c.second) {
    throw sy::usage_error(fmt::format("--first and --second are both '{}': a switch needs two strategies", c.first));
  }
}

/// The most workers a stage of `c`'s strategy has on `ranks` ranks, and the fewest: all the
/// ranks, but only those that do not serve under a parameter server on dedicated ranks.
struct worker_counts {
  std::size_t most = 0;
  std::size_t fewest = 0;
};

inline worker_counts workers_of(const config& c, int ranks) {
  const auto all = static_cast<std::size_t>(ranks);
  const std::size_t servers =
      c.strategy == "allreduce" || colocated_servers(c) ? 0 : std::min<std::size_t>(std::stoul(c.servers), all);
  return {c.strategy == "ps" ? all - servers : all, all - servers};
}

/// Refuses training data without a full batch for each worker of each stage, before any training.
inline void check_data(const config& c, int ranks, std::size_t train_examples) {
  const std::size_t workers = workers_of(c, ranks).most;
  if (workers * c.batch <= train_examples) return;
  const std::string examples = c.train_limit != 0
                                   ? fmt::format("--train-limit {} leaves {}", c.train_limit, train_examples)
                                   : fmt::format("the data has {}", train_examples);
  throw sy::usage_error(fmt::format(
      "{} training examples, fewer than a full batch for each worker: {} workers (of {} ranks) x --batch {} need {}",
      examples, workers, ranks, c.batch, workers * c.batch));
}

/// Refuses what cannot work on `ranks` ranks, before any data is read: a parameter server without
/// a worker, a straggler or a fault on a rank that does not work or exist, and a --train-limit
/// without a full batch for each worker.
inline void check_world(const config& c, int ranks) {
  const worker_counts workers = workers_of(c, ranks);
  if (workers.fewest == 0) {
    throw sy::usage_error(fmt::format("--servers {} with {} ranks leaves no worker: the parameter server needs at "
                                      "least one rank more than it has servers",
                                      c.servers, ranks));
  }
  const straggler slow = parse_straggler(c.straggler);
  if (slow.rank >= 0 && c.simulation.on) {
    throw sy::usage_error("--straggler sleeps, and a simulated rank's clock counts its CPU time, not sleep: slow a "
                          "simulated host down with --slow HOST:FACTOR instead");
  }
  // The straggler must work in every stage: under a parameter server the last ranks serve.
  if (slow.rank >= 0 && static_cast<std::size_t>(slow.rank) >= workers.fewest) {
    throw sy::usage_error(fmt::format("--straggler names rank {}, but the workers are ranks 0 to {} ({} ranks{})",
                                      slow.rank, workers.fewest - 1, ranks,
                                      workers.fewest < static_cast<std::size_t>(ranks) ? ", the last ones serve" : ""));
  }
  if (const std::optional<sy::transport::fault_plan> plan = parse_fault(c.fault)) {
    for (const std::optional<int> named : {plan->fail_rank, plan->slow_rank}) {
      if (named && *named >= ranks) {
        throw sy::usage_error(fmt::format("--fault names rank {}, but there are {} ranks", *named, ranks));
      }
    }
  }
  if (c.train_limit != 0) check_data(c, ranks, c.train_limit);
}

/// Refuses a --train-limit above what the training data holds, naming both (checked once the data
/// is read, before any training).
inline void check_limit(const config& c, std::size_t train_examples) {
  if (c.train_limit <= train_examples) return;
  throw sy::usage_error(fmt::format("--train-limit {} asks for more than the {} training examples{}", c.train_limit,
                                    train_examples,
                                    c.train_repeat > 1 ? fmt::format(" (--train-repeat {})", c.train_repeat)
                                                       : std::string(" (--train-repeat K repeats them)")));
}

inline sy::data::fashion_mnist load_data(const config& c) {
  sy::data::fashion_mnist data =
      c.data_dir.empty() ? sy::data::fashion_mnist::load() : sy::data::fashion_mnist::load(c.data_dir);
  if (c.train_repeat > 1) data.train = std::make_shared<const sy::data::dataset>(data.train->repeated(c.train_repeat));
  if (c.train_limit != 0) {
    check_limit(c, data.train->size());
    data.train = std::make_shared<const sy::data::dataset>(data.train->first(c.train_limit));
  }
  return data;
}

/// " (the first N training examples)" after --train-limit N, " (the training examples K times
/// over...)" after --train-repeat K, else nothing.
inline std::string examples_text(const config& c, const sy::data::fashion_mnist& data) {
  const std::string first = fmt::format("the first {} training examples", data.train->size());
  if (c.train_repeat > 1) {
    return fmt::format(" (the training examples {} times over{})", c.train_repeat,
                       c.train_limit == 0 ? std::string() : fmt::format(", {}", first));
  }
  return c.train_limit == 0 ? std::string() : fmt::format(" ({})", first);
}

/// The ranks that train: the processes of the MPI job when an MPI launcher (mpirun, srun) started
/// this process (with `threads_per_node`, that many threads of each process: transport::hybrid),
/// the actors of a simulated cluster after `simulate`, else threads of this one. One per process,
/// made after the command line is read: under MPI it initializes MPI, and every rank then calls
/// `run` for the same runs.
class rank_world {
 public:
  /// `concurrent`: threads call MPI at the same time (co-located servers, the hybrid transport);
  /// otherwise one at a time, as an overlapped all-reduce's communication thread does.
  rank_world(int& argc, char**& argv, int inproc_ranks, bool concurrent, int threads_per_node = 0)
      : inproc_ranks_(inproc_ranks), threads_per_node_(threads_per_node) {
#if SWITCHYARD_HAS_MPI
    if (sy::transport::mpi::launched()) {
      environment_.emplace(argc, argv,
                           concurrent || threads_per_node > 0 ? boost::mpi::threading::multiple
                                                              : boost::mpi::threading::serialized);
    }
#else
    static_cast<void>(argc);
    static_cast<void>(argv);
    static_cast<void>(concurrent);
#endif
  }

  /// Whether each process runs several ranks as threads (transport::hybrid).
  [[nodiscard]] bool hybrid() const noexcept { return under_mpi() && threads_per_node_ > 0; }

  [[nodiscard]] bool under_mpi() const noexcept {
#if SWITCHYARD_HAS_MPI
    return environment_.has_value();
#else
    return false;
#endif
  }

  /// Runs every rank on the simulated cluster of `settings` (--simulate), checked here, before
  /// any data is read.
  void simulate(const simulation_settings& settings) {
    if (under_mpi()) throw sy::usage_error("--simulate runs every rank in this process: start it without mpirun");
#if SWITCHYARD_HAS_SIMGRID
    simulation_ = simulation_options(settings);
    simulated_ranks_ = simulated_ranks(*simulation_);
    if (!settings.platform.empty() && simulated_ranks_ != settings.hosts * settings.ranks_per_host) {
      throw sy::usage_error(fmt::format("--simulate {} names {} hosts, but the platform file '{}' has {}", settings.hosts,
                                        settings.hosts, settings.platform, simulated_ranks_ / settings.ranks_per_host));
    }
#else
    static_cast<void>(settings);
    throw sy::usage_error("--simulate needs the simulated transport, which this build lacks (SimGrid was not found: "
                          "install libsimgrid-dev and build again)");
#endif
  }

  [[nodiscard]] bool simulated() const noexcept { return simulated_ranks_ > 0; }

  /// --sim-compute calibrated: the cost of a step for `c`, measured here once unless the option
  /// gives it, and printed so that a later run can repeat it to the bit.
  void calibrate(config& c, const sy::data::fashion_mnist& data) const {
    if (!simulated()) return;
    const std::optional<double> given = parse_sim_compute(c.simulation.compute);
    if (!given) return;
#if SWITCHYARD_HAS_SIMGRID
    c.sim_step_seconds = *given > 0 ? *given : calibrate_step(c, data);
#else
    static_cast<void>(data);
#endif
    if (*given == 0) {
      fmt::print("calibrated: a step costs {} s of CPU (--sim-compute calibrated:{} repeats it)\n", c.sim_step_seconds,
                 c.sim_step_seconds);
    }
  }

  [[nodiscard]] int size() const {
    if (simulated()) return simulated_ranks_;
#if SWITCHYARD_HAS_MPI
    if (under_mpi()) return boost::mpi::communicator{}.size() * (hybrid() ? threads_per_node_ : 1);
#endif
    return inproc_ranks_;
  }

  /// This process's rank: the one that prints and writes files is 0.
  [[nodiscard]] int rank() const {
#if SWITCHYARD_HAS_MPI
    if (under_mpi()) return boost::mpi::communicator{}.rank();
#endif
    return 0;
  }

  /// "4 MPI ranks", "4 in-process ranks", "16 simulated ranks" or "4 ranks: 2 processes x 2 threads".
  [[nodiscard]] std::string describe() const {
    if (hybrid()) return fmt::format("{} ranks: {} processes x {} threads", size(), size() / threads_per_node_, threads_per_node_);
    return fmt::format("{} {} ranks", size(), under_mpi() ? "MPI" : simulated() ? "simulated" : "in-process");
  }

  /// One run of `c` on every rank; this process's result (rank 0's in process). Under MPI the
  /// ranks start together, so that a run's clock does not count the end of the one before.
  run_result run(const config& c, const sy::data::fashion_mnist& data) {
#if SWITCHYARD_HAS_SIMGRID
    if (simulated()) return run_simulated_ranks(*simulation_, c, data);
#endif
#if SWITCHYARD_HAS_MPI
    if (hybrid()) {
      if (!hybrid_) hybrid_.emplace(threads_per_node_);
      boost::mpi::communicator{}.barrier();
      return hybrid_->run([&](sy::transport::hybrid& t) { return run_rank(t, c, data); }).front();
    }
    if (under_mpi()) {
      if (!transport_) transport_.emplace();
      sy::collective::barrier(*transport_);
      return run_rank(*transport_, c, data);
    }
#endif
    sy::transport::inproc_options options;
    options.node_sizes = c.node_sizes;
    return sy::transport::run_inproc(
               inproc_ranks_, [&](sy::transport::inproc& t) { return run_rank(t, c, data); }, options)
        .front();
  }

  /// Ends the program after an error: under MPI the whole job, since the other ranks may wait on
  /// this one forever.
  int fail() {
#if SWITCHYARD_HAS_MPI
    if (under_mpi()) environment_->abort(EXIT_FAILURE);
#endif
    return EXIT_FAILURE;
  }

 private:
  int inproc_ranks_;
  int threads_per_node_;
  int simulated_ranks_ = 0;
#if SWITCHYARD_HAS_SIMGRID
  std::optional<sy::transport::simulated_options> simulation_;
#endif
#if SWITCHYARD_HAS_MPI
  std::optional<sy::transport::mpi::environment> environment_;
  std::optional<sy::transport::mpi> transport_;
  std::optional<sy::transport::hybrid_world> hybrid_;
#endif
};

}  // namespace example

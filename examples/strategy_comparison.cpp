// The experiment behind the Strategy Switch: all-reduce, an asynchronous parameter server, the
// switches between them in both orders and, on request, the adaptive alternation between them,
// one after the other on the same model, data, seed and ranks, optionally with a straggler. The
// ranks are threads of this process, the processes of an MPI job when mpirun starts it (on an
// emulated cluster: examples/cluster/), or the hosts of a simulated cluster (--simulate). Rank 0 writes the epochs of every run as one CSV and a
// JSON summary per strategy; examples/plot_comparison.sh draws the CSV.
//
//   build/examples/strategy_comparison --epochs 15 --straggler 2:3.0 --csv runs.csv --summary runs.json
//   build/examples/strategy_comparison --strategies allreduce,adaptive --straggler 2:3.0 --straggler-ratio 1.5
//   examples/cluster/emulate run -- build/examples/strategy_comparison --slow h1:0.17 --summary runs.json
//   build/examples/strategy_comparison --simulate 16 --sim-compute calibrated --slow h1:0.25 --summary runs.json
#include "allocator.hpp"
#include "fashion_mnist_runs.hpp"
#include "run_summary.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace sy = switchyard;
using namespace example;

namespace {

struct contender {
  std::string label;  // allreduce, ps, ps>allreduce, allreduce>ps, adaptive
  config settings;
};

std::vector<contender> contenders(const config& c, const std::vector<std::string>& labels,
                                  const std::string& ps_first_trigger, const std::string& allreduce_first_trigger) {
  std::vector<contender> chosen;
  for (const std::string& label : labels) {
    config s = c;
    if (label == "allreduce" || label == "ps" || label == "adaptive") {
      s.strategy = label;
    } else {
      s.strategy = "switch";
      s.first = label == "ps>allreduce" ? "ps" : "allreduce";
      s.second = label == "ps>allreduce" ? "allreduce" : "ps";
      const std::string& own = label == "ps>allreduce" ? ps_first_trigger : allreduce_first_trigger;
      if (!own.empty()) s.trigger = own;
    }
    check_settings(s);
    chosen.push_back({label, s});
  }
  return chosen;
}

std::string slow_hosts_text(const std::vector<slow_host>& slow, const std::optional<slow_window>& window) {
  std::string text;
  for (const slow_host& s : slow) text += fmt::format(", {} at {} cores", s.host, s.share);
  if (window) {
    text += fmt::format(", {} at {} cores from second {} to {}", window->host, window->share, window->from_seconds,
                        window->to_seconds);
  }
  return text;
}

// The options of the comparison itself, besides those of the runs (add_training_options).
struct comparison_options {
  std::vector<std::string> labels{"allreduce", "ps", "ps>allreduce", "allreduce>ps"};
  std::string ps_first_trigger;
  std::string allreduce_first_trigger;
  std::string thresholds = "0.85,0.88";
  std::vector<std::string> slow;
  std::string slow_during;
  std::string csv;
  std::string summary;
};

void add_comparison_options(CLI::App& app, comparison_options& o) {
  app.add_option("--strategies", o.labels, "Which runs, in order")
      ->check(CLI::IsMember({"allreduce", "ps", "ps>allreduce", "allreduce>ps", "adaptive"}))
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--trigger-ps-first", o.ps_first_trigger, "The trigger of ps>allreduce (default: --trigger)")
      ->check(parsed_by(parse_trigger, "KIND:VALUE"));
  app.add_option("--trigger-allreduce-first", o.allreduce_first_trigger,
                 "The trigger of allreduce>ps (default: --trigger)")
      ->check(parsed_by(parse_trigger, "KIND:VALUE"));
  app.add_option("--thresholds", o.thresholds,
                 "Test accuracies in (0, 1], comma-separated: the summary gives the wall time at which each was "
                 "first reached")
      ->capture_default_str();
  app.add_option("--slow", o.slow,
                 "HOST:SHARE: an emulated cluster ran HOST at SHARE cores (emulate up --slow applies it; this "
                 "records it in the summary); with --simulate, HOST:FACTOR[@FROM-TO]: simulated host HOST (0, 1, ... "
                 "or h0, h1, ...) computes at FACTOR times this machine's speed, for the whole run or from simulated "
                 "second FROM to TO; may be repeated");
  app.add_option("--slow-during", o.slow_during,
                 "HOST:SHARE:A:B: an emulated cluster ran HOST at SHARE cores from second A to second B of each "
                 "strategy's run (run_experiment.sh --slow-during schedules it; this records it in the summary)");
  app.add_option("--csv", o.csv, "Write every epoch of every run here: strategy, epoch, stage, wall seconds, "
                                 "train loss, test accuracy");
  app.add_option("--summary", o.summary, "Write a JSON list with one record per strategy here");
}

// What the options ask for, read and checked before any data is.
struct comparison_plan {
  std::vector<double> thresholds;
  std::vector<slow_host> slow;
  std::optional<slow_window> window;
  std::vector<contender> runs;
};

comparison_plan plan_comparison(const config& c, const comparison_options& o) {
  // Four runs would write over one checkpoint file.
  if (!c.checkpoint_dir.empty() || c.resume) {
    throw sy::usage_error("--checkpoint and --resume are fashion_mnist's: strategy_comparison trains four runs");
  }
  comparison_plan plan;
  plan.thresholds = parse_thresholds(o.thresholds);
  // Simulated, the slow hosts are the simulation's (c.simulation.slow).
  if (!c.simulation.on) plan.slow = parse_slow_hosts(o.slow);
  if (!o.slow_during.empty()) plan.window = parse_slow_window(o.slow_during, plan.slow);
  plan.runs = contenders(c, o.labels, o.ps_first_trigger, o.allreduce_first_trigger);
  return plan;
}

using results = std::vector<std::pair<std::string, run_result>>;

// Every run of the plan, one after the other. Rank 0 prints a line as each starts and, with
// --csv, writes its epochs; under MPI every rank trains.
results run_comparison(rank_world& world, const config& c, const comparison_plan& plan,
                       const sy::data::fashion_mnist& data, const std::string& csv) {
  const bool writes = world.rank() == 0;
  std::optional<std::ofstream> table;
  if (writes && !csv.empty()) {
    table.emplace(csv, std::ios::trunc);
    if (!*table) throw sy::usage_error(fmt::format("cannot open --csv {} for writing", csv));
    *table << "strategy,epoch,stage,wall_seconds,train_loss,test_accuracy\n";
  }
  results done;
  for (const contender& run : plan.runs) {
    // examples/cluster/run_experiment.sh --slow-during times its window from this line: flushed
    // at once, also into a pipe.
    if (writes) {
      fmt::print("{}: {} on Fashion-MNIST{}, {}, {} epochs{}{}{}\n", run.label, c.model, examples_text(c, data),
                 world.describe(), c.epochs, c.straggler.empty() ? "" : fmt::format(", straggler {}", c.straggler),
                 slow_hosts_text(plan.slow, plan.window),
                 c.simulation.slow.empty() ? "" : fmt::format(", slow simulated hosts {}", fmt::join(c.simulation.slow, " ")));
      std::fflush(stdout);
    }
    run_result result = world.run(run.settings, data);
    if (table) {
      for (const auto& e : result.history.epochs) {
        *table << fmt::format("{},{},{},{:.3f},{:.5f},{:.5f}\n", run.label, e.epoch, e.stage, e.wall_seconds,
                              e.train_loss, e.test_accuracy);
      }
      table->flush();
    }
    if (writes) {
      for (const std::string& s : result.switches) fmt::print("{} switch {}\n", run.label, s);
    }
    done.emplace_back(run.label, std::move(result));
  }
  return done;
}

void print_table(const results& done, const std::vector<double>& thresholds) {
  fmt::print("\n{:<14} {:>14} {:>12} {:>12}", "strategy", "test accuracy", "wall s", "samples/s");
  const bool simulated = !done.empty() && done.front().second.simulated_seconds;
  if (simulated) fmt::print(" {:>12}", "simulated s");
  for (const double threshold : thresholds) fmt::print(" {:>12}", fmt::format("s to {:g}%", 100.0 * threshold));
  fmt::print("\n");
  for (const auto& [label, result] : done) {
    const sy::train::history& h = result.history;
    fmt::print("{:<14} {:>13.2f}% {:>12.1f} {:>12.0f}", label, 100.0 * h.last().test_accuracy, h.last().wall_seconds,
               totals(h).samples_per_second());
    if (simulated) fmt::print(" {:>12.3f}", result.simulated_seconds.value_or(0.0));
    for (const std::optional<double>& t : time_to_accuracy(h, thresholds)) {
      fmt::print(" {:>12}", t ? fmt::format("{:.1f}", *t) : std::string("never"));
    }
    fmt::print("\n");
  }
}

// One run's record in the --summary list.
json summary_record(const rank_world& world, const config& c, const comparison_plan& plan, std::size_t train_examples,
                    const std::string& label, const run_result& result) {
  const sy::train::history& h = result.history;
  const training_totals trained = totals(h);
  json record = {{"strategy", label},
                 {"model", c.model},
                 {"transport", world.under_mpi() ? "mpi" : world.simulated() ? "simulated" : "inproc"},
                 {"ranks", world.size()},
                 {"train_examples", train_examples},
                 {"epochs", h.epochs.size()}};
  record.update(exchange_settings_json(c, result));
  record.update(json{{"slow", slow_hosts_json(plan.slow)},
                     {"slow_during", slow_window_json(plan.window)},
                     {"test_accuracy", rounded(h.last().test_accuracy, 6)},
                     {"wall_seconds", rounded(h.last().wall_seconds, 3)},
                     {"simulated_seconds", result.simulated_seconds ? json(*result.simulated_seconds) : json(nullptr)},
                     {"train_samples_per_second", rounded(trained.samples_per_second(), 1)},
                     {"time_to_accuracy", time_to_accuracy_json(plan.thresholds, time_to_accuracy(h, plan.thresholds))},
                     {"seconds_per_worker", breakdown_json(trained)},
                     {"server_busy_fraction", rounded(result.server_busy_fraction, 4)},
                     {"max_staleness", result.max_staleness},
                     {"mean_staleness", rounded(result.mean_staleness, 3)},
                     {"worker_wait_seconds", rounded(result.worker_wait_seconds, 3)},
                     {"dropped_share", rounded(result.dropped_share, 4)},
                     {"bytes_sent", trained.bytes_sent},
                     {"switches", result.switches},
                     {"simulation", simulation_json(c.simulation, c.sim_step_seconds)},
                     {"allocator", allocator_name()}});
  return record;
}

}  // namespace

int main(int argc, char** argv) {
  config c;
  comparison_options options;
  CLI::App app{"Compare all-reduce, a parameter server, the switches between them and the adaptive alternation "
               "on Fashion-MNIST (in process, under mpirun, or simulated)"};
  add_training_options(app, c);
  add_comparison_options(app, options);
  add_simulation_options(app, c.simulation, false);
  CLI11_PARSE(app, argc, argv);

  rank_world world(argc, argv, c.ranks, colocated_servers(c));
  try {
    read_simulation_flags(app, c.simulation, false);
    if (c.simulation.on) {
      if (!options.slow_during.empty()) {
        throw sy::usage_error("--slow-during records an emulated cluster's window; simulated, give it as --slow "
                              "HOST:FACTOR@FROM-TO");
      }
      c.simulation.slow = options.slow;
      world.simulate(c.simulation);
    }
    comparison_plan plan = plan_comparison(c, options);
    for (const contender& run : plan.runs) check_world(run.settings, world.size());
    const auto data = load_data(c);
    for (const contender& run : plan.runs) check_data(run.settings, world.size(), data.train->size());
    const sy::nn::blas_threads_scope blas{c.blas_threads};  // once per process, before the ranks start
    world.calibrate(c, data);  // one cost of a step for every run
    for (contender& run : plan.runs) run.settings.sim_step_seconds = c.sim_step_seconds;
    if (world.rank() == 0) warn_of_blas_kernels("strategy_comparison");
    const results done = run_comparison(world, c, plan, data, options.csv);
    // Under MPI every rank trains and rank 0 alone writes: the hosts may share the files.
    if (world.rank() != 0) return EXIT_SUCCESS;
    print_table(done, plan.thresholds);
    if (!options.summary.empty()) {
      json records = json::array();
      for (const auto& [label, result] : done) {
        records.push_back(summary_record(world, c, plan, data.train->size(), label, result));
      }
      write_json_file(options.summary, records);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strategy_comparison: %s\n", e.what());
    return world.fail();
  }
  return EXIT_SUCCESS;
}

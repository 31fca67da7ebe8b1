// The experiment behind the Strategy Switch: all-reduce, an asynchronous parameter server, the
// switches between them in both orders and, on request, the adaptive alternation between them,
// one after the other on the same model, data, seed and ranks, optionally with a straggler. The
// ranks are threads of this process, or the processes of an MPI job when mpirun starts it (on an
// emulated cluster: examples/cluster/). Rank 0 writes the epochs of every run as one CSV and a
// JSON summary per strategy; examples/plot_comparison.sh draws the CSV.
//
//   build/examples/strategy_comparison --epochs 15 --straggler 2:3.0 --csv runs.csv --summary runs.json
//   build/examples/strategy_comparison --strategies allreduce,adaptive --straggler 2:3.0 --straggler-ratio 1.5
//   examples/cluster/emulate run -- build/examples/strategy_comparison --slow h1:0.17 --summary runs.json
#include "fashion_mnist_runs.hpp"
#include "run_summary.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/os.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
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

}  // namespace

int main(int argc, char** argv) {
  config c;
  std::vector<std::string> labels{"allreduce", "ps", "ps>allreduce", "allreduce>ps"};
  std::string ps_first_trigger;
  std::string allreduce_first_trigger;
  std::string thresholds_text = "0.85,0.88";
  std::vector<std::string> slow_texts;
  std::string slow_window_text;
  std::string csv;
  std::string summary;
  CLI::App app{"Compare all-reduce, a parameter server, the switches between them and the adaptive alternation "
               "on Fashion-MNIST (in process, or under mpirun)"};
  add_training_options(app, c);
  app.add_option("--strategies", labels, "Which runs, in order")
      ->check(CLI::IsMember({"allreduce", "ps", "ps>allreduce", "allreduce>ps", "adaptive"}))
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--trigger-ps-first", ps_first_trigger, "The trigger of ps>allreduce (default: --trigger)");
  app.add_option("--trigger-allreduce-first", allreduce_first_trigger,
                 "The trigger of allreduce>ps (default: --trigger)");
  app.add_option("--thresholds", thresholds_text,
                 "Test accuracies in (0, 1], comma-separated: the summary gives the wall time at which each was "
                 "first reached")
      ->capture_default_str();
  app.add_option("--slow", slow_texts,
                 "HOST:SHARE: an emulated cluster ran HOST at SHARE cores (emulate up --slow applies it; this "
                 "records it in the summary); may be repeated");
  app.add_option("--slow-during", slow_window_text,
                 "HOST:SHARE:A:B: an emulated cluster ran HOST at SHARE cores from second A to second B of each "
                 "strategy's run (run_experiment.sh --slow-during schedules it; this records it in the summary)");
  app.add_option("--csv", csv, "Write every epoch of every run here: strategy, epoch, stage, wall seconds, "
                               "train loss, test accuracy");
  app.add_option("--summary", summary, "Write a JSON list with one record per strategy here");
  CLI11_PARSE(app, argc, argv);

  rank_world world(argc, argv, c.ranks, colocated_servers(c));
  try {
    // Four runs would write over one checkpoint file.
    if (!c.checkpoint_dir.empty() || c.resume) {
      throw sy::usage_error("--checkpoint and --resume are fashion_mnist's: strategy_comparison trains four runs");
    }
    const std::vector<double> thresholds = parse_thresholds(thresholds_text);
    const std::vector<slow_host> slow = parse_slow_hosts(slow_texts);
    std::optional<slow_window> window;
    if (!slow_window_text.empty()) window = parse_slow_window(slow_window_text, slow);
    const std::vector<contender> runs = contenders(c, labels, ps_first_trigger, allreduce_first_trigger);
    const auto data = load_data(c);
    const sy::nn::blas_threads_scope blas{c.blas_threads};  // once per process, before the ranks start
    // Under MPI every rank trains and rank 0 alone writes: the hosts may share the files.
    const bool writes = world.rank() == 0;
    std::optional<fmt::ostream> table;
    if (writes && !csv.empty()) {
      table.emplace(fmt::output_file(csv));
      table->print("strategy,epoch,stage,wall_seconds,train_loss,test_accuracy\n");
    }
    std::vector<std::pair<std::string, run_result>> results;
    for (const contender& run : runs) {
      // examples/cluster/run_experiment.sh --slow-during times its window from this line: flushed
      // at once, also into a pipe.
      if (writes) {
        fmt::print("{}: {} on Fashion-MNIST{}, {}, {} epochs{}{}\n", run.label, c.model, examples_text(c, data),
                   world.describe(), c.epochs,
                   c.straggler.empty() ? "" : fmt::format(", straggler {}", c.straggler),
                   slow_hosts_text(slow, window));
        std::fflush(stdout);
      }
      run_result result = world.run(run.settings, data);
      const sy::train::history& h = result.history;
      if (table) {
        for (const auto& e : h.epochs) {
          table->print("{},{},{},{:.3f},{:.5f},{:.5f}\n", run.label, e.epoch, e.stage, e.wall_seconds, e.train_loss,
                       e.test_accuracy);
        }
      }
      if (writes) {
        for (const std::string& s : result.switches) fmt::print("{} switch {}\n", run.label, s);
      }
      results.emplace_back(run.label, std::move(result));
    }
    if (!writes) return EXIT_SUCCESS;

    fmt::print("\n{:<14} {:>14} {:>12} {:>12}", "strategy", "test accuracy", "wall s", "samples/s");
    for (const double threshold : thresholds) fmt::print(" {:>12}", fmt::format("s to {:g}%", 100.0 * threshold));
    fmt::print("\n");
    for (const auto& [label, result] : results) {
      const sy::train::history& h = result.history;
      fmt::print("{:<14} {:>13.2f}% {:>12.1f} {:>12.0f}", label, 100.0 * h.last().test_accuracy, h.last().wall_seconds,
                 totals(h).samples_per_second());
      for (const std::optional<double>& t : time_to_accuracy(h, thresholds)) {
        fmt::print(" {:>12}", t ? fmt::format("{:.1f}", *t) : std::string("never"));
      }
      fmt::print("\n");
    }
    if (!summary.empty()) {
      auto out = fmt::output_file(summary);
      out.print("[\n");
      for (std::size_t k = 0; k < results.size(); ++k) {
        const auto& [label, result] = results[k];
        const sy::train::history& h = result.history;
        out.print("  {{\"strategy\": \"{}\", \"model\": \"{}\", \"transport\": \"{}\", \"ranks\": {}, "
                  "\"train_examples\": {}, \"epochs\": {}, \"compress\": \"{}\", \"ps_compress\": \"{}\", \"ps_pipeline\": {}, \"switch_rescale\": \"{}\", \"exchange\": \"{}\", "
                  "\"bucket_kb\": {}, \"buckets\": {}, \"straggler\": \"{}\", "
                  "\"slow\": {}, \"slow_during\": {}, "
                  "\"test_accuracy\": {:.6f}, \"wall_seconds\": {:.3f}, \"train_samples_per_second\": {:.1f}, "
                  "\"time_to_accuracy\": {}, \"seconds_per_worker\": {}, \"server_busy_fraction\": {:.4f}, "
                  "\"max_staleness\": {:.0f}, \"mean_staleness\": {:.3f}, \"worker_wait_seconds\": {:.3f}, \"dropped_share\": {:.4f}, "
                  "\"bytes_sent\": {}, \"switches\": [{}]}}{}\n",
                  label, c.model, world.under_mpi() ? "mpi" : "inproc", world.size(), data.train->size(), h.epochs.size(), c.compress,
                  c.ps_compress, c.ps_pipeline, c.switch_rescale, c.exchange, c.bucket_kb, result.buckets, c.straggler,
                  slow_hosts_json(slow), slow_window_json(window), h.last().test_accuracy, h.last().wall_seconds,
                  totals(h).samples_per_second(), time_to_accuracy_json(thresholds, time_to_accuracy(h, thresholds)),
                  breakdown_json(totals(h)),
                  result.server_busy_fraction, result.max_staleness, result.mean_staleness, result.worker_wait_seconds,
                  result.dropped_share,
                  totals(h).bytes_sent, quoted_list(result.switches),
                  k + 1 < results.size() ? "," : "");
      }
      out.print("]\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strategy_comparison: %s\n", e.what());
    return world.fail();
  }
  return EXIT_SUCCESS;
}

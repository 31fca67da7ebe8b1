// The experiment behind the Strategy Switch: all-reduce, an asynchronous parameter server, and
// the switches between them in both orders, one after the other on the same model, data, seed
// and in-process ranks, optionally with a straggler. Writes the epochs of every run as one CSV
// and a JSON summary per strategy; examples/plot_comparison.sh draws the CSV.
//
//   build/examples/strategy_comparison --epochs 15 --straggler 2:3.0 --csv runs.csv --summary runs.json
#include "fashion_mnist_runs.hpp"

#include <switchyard/transport/inproc.hpp>

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
  std::string label;  // allreduce, ps, ps>allreduce, allreduce>ps
  config settings;
};

std::vector<contender> contenders(const config& c, const std::vector<std::string>& labels,
                                  const std::string& ps_first_trigger, const std::string& allreduce_first_trigger) {
  std::vector<contender> chosen;
  for (const std::string& label : labels) {
    config s = c;
    if (label == "allreduce" || label == "ps") {
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

// The wall time at the end of the first epoch whose test accuracy reaches `target`.
std::optional<double> seconds_to(const sy::train::history& h, double target) {
  for (const auto& e : h.epochs) {
    if (e.test_accuracy >= target) return e.wall_seconds;
  }
  return std::nullopt;
}

std::string json_number(std::optional<double> value) {
  return value ? fmt::format("{:.3f}", *value) : "null";
}

}  // namespace

int main(int argc, char** argv) {
  config c;
  std::vector<std::string> labels{"allreduce", "ps", "ps>allreduce", "allreduce>ps"};
  std::string ps_first_trigger;
  std::string allreduce_first_trigger;
  std::string csv;
  std::string summary;
  CLI::App app{"Compare all-reduce, a parameter server and the switches between them on Fashion-MNIST"};
  add_training_options(app, c);
  app.add_option("--strategies", labels, "Which runs, in order")
      ->check(CLI::IsMember({"allreduce", "ps", "ps>allreduce", "allreduce>ps"}))
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--trigger-ps-first", ps_first_trigger, "The trigger of ps>allreduce (default: --trigger)");
  app.add_option("--trigger-allreduce-first", allreduce_first_trigger,
                 "The trigger of allreduce>ps (default: --trigger)");
  app.add_option("--csv", csv, "Write every epoch of every run here: strategy, epoch, stage, wall seconds, "
                               "train loss, test accuracy");
  app.add_option("--summary", summary, "Write a JSON list with one record per strategy here");
  CLI11_PARSE(app, argc, argv);

  try {
    // Four runs would write over one checkpoint file.
    if (!c.checkpoint_dir.empty() || c.resume) {
      throw sy::usage_error("--checkpoint and --resume are fashion_mnist's: strategy_comparison trains four runs");
    }
    const std::vector<contender> runs = contenders(c, labels, ps_first_trigger, allreduce_first_trigger);
    const auto data = load_data(c);
    const sy::nn::blas_threads_scope blas{c.blas_threads};  // once per process, before the ranks start
    std::optional<fmt::ostream> table;
    if (!csv.empty()) {
      table.emplace(fmt::output_file(csv));
      table->print("strategy,epoch,stage,wall_seconds,train_loss,test_accuracy\n");
    }
    std::vector<std::pair<std::string, sy::train::history>> results;
    for (const contender& run : runs) {
      fmt::print("{}: {} on Fashion-MNIST, {} in-process ranks, {} epochs{}\n", run.label, c.model, c.ranks, c.epochs,
                 c.straggler.empty() ? "" : fmt::format(", straggler {}", c.straggler));
      const sy::train::history h =
          sy::transport::run_inproc(
              c.ranks, [&](sy::transport::inproc& t) { return run_rank_with_faults(t, run.settings, data); })
              .front()
              .history;
      if (table) {
        for (const auto& e : h.epochs) {
          table->print("{},{},{},{:.3f},{:.5f},{:.5f}\n", run.label, e.epoch, e.stage, e.wall_seconds, e.train_loss,
                       e.test_accuracy);
        }
      }
      results.emplace_back(run.label, h);
    }

    fmt::print("\n{:<14} {:>14} {:>12} {:>12} {:>12}\n", "strategy", "test accuracy", "wall s", "s to 85%",
               "s to 88%");
    for (const auto& [label, h] : results) {
      auto shown = [](std::optional<double> v) { return v ? fmt::format("{:.1f}", *v) : std::string("never"); };
      fmt::print("{:<14} {:>13.2f}% {:>12.1f} {:>12} {:>12}\n", label, 100.0 * h.last().test_accuracy,
                 h.last().wall_seconds, shown(seconds_to(h, 0.85)), shown(seconds_to(h, 0.88)));
    }
    if (!summary.empty()) {
      auto out = fmt::output_file(summary);
      out.print("[\n");
      for (std::size_t k = 0; k < results.size(); ++k) {
        const auto& [label, h] = results[k];
        out.print("  {{\"strategy\": \"{}\", \"model\": \"{}\", \"ranks\": {}, \"epochs\": {}, \"straggler\": \"{}\", "
                  "\"test_accuracy\": {:.6f}, \"wall_seconds\": {:.3f}, \"seconds_to_85\": {}, "
                  "\"seconds_to_88\": {}}}{}\n",
                  label, c.model, c.ranks, h.epochs.size(), c.straggler, h.last().test_accuracy, h.last().wall_seconds,
                  json_number(seconds_to(h, 0.85)), json_number(seconds_to(h, 0.88)),
                  k + 1 < results.size() ? "," : "");
      }
      out.print("]\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strategy_comparison: %s\n", e.what());
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

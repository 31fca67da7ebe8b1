// Trains an mlp or a cnn on Fashion-MNIST with a switchyard strategy: in process with --ranks N,
// or over MPI when started by mpirun (the same binary).
//
//   build/examples/fashion_mnist --model mlp --ranks 4 --epochs 15 --summary run.json
//   build/examples/fashion_mnist --strategy ps --servers 1 --consistency bounded:2 --ranks 4 --straggler 2:3.0
//   mpirun -n 4 build/examples/fashion_mnist --model cnn
//   build/examples/fashion_mnist --strategy adaptive --straggler 2:3.0 --straggler-ratio 1.5 --calm-ratio 1.2
#include "fashion_mnist_runs.hpp"
#include "run_summary.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/os.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sy = switchyard;
using namespace example;

namespace {

void write_summary(const config& c, int ranks, std::size_t train_examples, const run_result& r) {
  const sy::train::history& h = r.history;
  const training_totals trained = totals(h);
  std::string strategy = c.strategy;
  if (c.strategy == "ps") strategy = fmt::format("ps:{}", c.consistency);
  if (c.strategy == "switch") strategy = fmt::format("{}>{}", c.first, c.second);
  if (c.strategy == "adaptive") strategy = "allreduce<>ps";
  // A count of server ranks, or the string "colocated".
  const std::string servers = c.strategy == "allreduce" ? "0" : colocated_servers(c) ? "\"colocated\"" : c.servers;
  auto out = fmt::output_file(c.summary);
  out.print(
      "{{\"strategy\": \"{}\", \"model\": \"{}\", \"optimizer\": \"{}\", \"ranks\": {}, \"servers\": {}, "
      "\"compress\": \"{}\", \"ps_compress\": \"{}\", \"ps_pipeline\": {}, \"switch_rescale\": \"{}\", \"exchange\": \"{}\", \"bucket_kb\": {}, \"buckets\": {}, "
      "\"straggler\": \"{}\", \"train_examples\": {}, \"epochs\": {}, \"batch_per_worker\": {}, \"test_accuracy\": {:.6f}, "
      "\"test_loss\": {:.6f}, \"wall_seconds\": {:.3f}, \"train_seconds\": {:.3f}, "
      "\"train_samples_per_second\": {:.1f}, \"max_staleness\": {}, \"mean_staleness\": {:.3f}, "
      "\"server_busy_fraction\": {:.3f}, \"worker_wait_seconds\": {:.3f}, \"dropped_share\": {:.4f}, "
      "\"switches\": [{}]}}\n",
      strategy, c.model, c.optimizer, ranks, servers, c.compress, c.ps_compress, c.ps_pipeline,
      c.switch_rescale, c.exchange, c.bucket_kb, r.buckets, c.straggler, train_examples,
      h.epochs.size(), c.batch,
      h.last().test_accuracy, h.last().test_loss, h.last().wall_seconds, trained.train_seconds,
      trained.samples_per_second(), r.max_staleness, r.mean_staleness,
      r.server_busy_fraction, r.worker_wait_seconds, r.dropped_share, quoted_list(r.switches));
}

}  // namespace

int main(int argc, char** argv) {
  config c;
  CLI::App app{"Train on Fashion-MNIST with a switchyard strategy (in process, or under mpirun)"};
  add_training_options(app, c);
  app.add_option("--strategy", c.strategy, "Training strategy")
      ->check(CLI::IsMember({"allreduce", "ps", "switch", "adaptive"}))
      ->capture_default_str();
  app.add_option("--first", c.first, "With --strategy switch: the first stage")
      ->check(CLI::IsMember({"ps", "allreduce"}))
      ->capture_default_str();
  app.add_option("--second", c.second, "With --strategy switch: the second stage (the other one)")
      ->check(CLI::IsMember({"ps", "allreduce"}))
      ->capture_default_str();
  app.add_option("--log", c.log, "Per-epoch log: CSV if the name ends in .csv, else JSON lines");
  app.add_option("--summary", c.summary, "Write a JSON summary of the run here");
  CLI11_PARSE(app, argc, argv);

  rank_world world(argc, argv, c.ranks, colocated_servers(c));
  try {
    check_settings(c);
    const auto data = load_data(c);
    // Once per process, before the ranks start: the budget is process-wide.
    const sy::nn::blas_threads_scope blas{c.blas_threads};
    if (world.rank() == 0) {
      fmt::print("{} on Fashion-MNIST{}, {}, {}\n", c.model, examples_text(c, data), world.describe(), c.strategy);
    }
    const run_result result = world.run(c, data);
    if (world.rank() == 0) {
      fmt::print("final test accuracy {:.2f}% after {:.1f} s\n", 100.0 * result.history.last().test_accuracy,
                 result.history.last().wall_seconds);
      if (c.strategy != "allreduce") {
        fmt::print("staleness: max {:.0f}, mean {:.2f} steps; server busy {:.0f}% of its time\n", result.max_staleness,
                   result.mean_staleness, 100.0 * result.server_busy_fraction);
        if (result.dropped_share > 0) fmt::print("late pushes dropped: {:.1f}%\n", 100.0 * result.dropped_share);
      }
      for (const std::string& s : result.switches) fmt::print("switch {}\n", s);
      if (!c.summary.empty()) write_summary(c, world.size(), data.train->size(), result);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return world.fail();
  }
  return EXIT_SUCCESS;
}


// Trains an mlp or a cnn on Fashion-MNIST with a switchyard strategy: in process with --ranks N,
// over MPI when started by mpirun (the same binary), or on a simulated cluster with --simulate.
//
//   build/examples/fashion_mnist --model mlp --ranks 4 --epochs 15 --summary run.json
//   build/examples/fashion_mnist --strategy ps --servers 1 --consistency bounded:2 --ranks 4 --straggler 2:3.0
//   mpirun -n 4 build/examples/fashion_mnist --model cnn
//   mpirun -n 2 --map-by node --bind-to none build/examples/fashion_mnist --threads-per-node 8
//   build/examples/fashion_mnist --ranks 4 --nodes 2 --strategy ps --servers colocated --consistency sync
//   build/examples/fashion_mnist --strategy adaptive --straggler 2:3.0 --straggler-ratio 1.5 --calm-ratio 1.2
//   build/examples/fashion_mnist --simulate 64 --link 10Gbps --strategy allreduce --slow 3:0.25@20-60
#include "allocator.hpp"
#include "fashion_mnist_runs.hpp"
#include "run_summary.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sy = switchyard;
using namespace example;

namespace {

// The strategy as the summary names it: allreduce, ps:async, ps>allreduce, allreduce<>ps, ...
std::string strategy_label(const config& c) {
  if (c.strategy == "ps") return fmt::format("ps:{}", c.consistency);
  if (c.strategy == "switch") return fmt::format("{}>{}", c.first, c.second);
  if (c.strategy == "adaptive") return "allreduce<>ps";
  return c.strategy;
}

// The run's nodes by their ranks: the virtual nodes in process, the processes' threads with
// --threads-per-node; null when the run does not group its ranks itself.
json node_sizes_json(const config& c, const rank_world& world) {
  if (world.hybrid()) return std::vector<int>(static_cast<std::size_t>(world.size() / c.threads_per_node), c.threads_per_node);
  if (!c.node_sizes.empty()) return c.node_sizes;
  return nullptr;
}

void write_summary(const config& c, const rank_world& world, std::size_t train_examples, const run_result& r) {
  const int ranks = world.size();
  const sy::train::history& h = r.history;
  const training_totals trained = totals(h);
  // A count of server ranks, or the string "colocated".
  json servers = c.strategy == "allreduce" ? json(0)
                 : colocated_servers(c)     ? json("colocated")
                                            : json(std::stoul(c.servers));
  json summary = {{"strategy", strategy_label(c)},
                  {"model", c.model},
                  {"optimizer", c.optimizer},
                  {"ranks", ranks},
                  {"nodes", r.nodes},
                  {"node_sizes", node_sizes_json(c, world)},
                  {"servers", std::move(servers)}};
  summary["ps_aggregated_by"] = c.strategy == "allreduce" ? json(nullptr) : json(r.ps_by_node ? "node" : "rank");
  summary.update(exchange_settings_json(c, r));
  summary.update(json{{"train_examples", train_examples},
                      {"train_repeat", c.train_repeat},
                      {"epochs", h.epochs.size()},
                      {"batch_per_worker", c.batch},
                      {"test_accuracy", rounded(h.last().test_accuracy, 6)},
                      {"test_loss", rounded(h.last().test_loss, 6)},
                      {"wall_seconds", rounded(h.last().wall_seconds, 3)},
                      {"simulated_seconds", r.simulated_seconds ? json(*r.simulated_seconds) : json(nullptr)},
                      {"train_seconds", rounded(trained.train_seconds, 3)},
                      {"train_samples_per_second", rounded(trained.samples_per_second(), 1)},
                      {"max_staleness", r.max_staleness},
                      {"mean_staleness", rounded(r.mean_staleness, 3)},
                      {"server_busy_fraction", rounded(r.server_busy_fraction, 3)},
                      {"worker_wait_seconds", rounded(r.worker_wait_seconds, 3)},
                      {"dropped_share", rounded(r.dropped_share, 4)},
                      {"switches", r.switches},
                      {"simulation", simulation_json(c.simulation, c.sim_step_seconds)},
                      {"allocator", allocator_name()}});
  write_json_file(c.summary, summary);
}

}  // namespace

int main(int argc, char** argv) {
  config c;
  CLI::App app{"Train on Fashion-MNIST with a switchyard strategy (in process, under mpirun, or simulated)"};
  add_training_options(app, c);
  add_simulation_options(app, c.simulation, true);
  app.add_option("--strategy", c.strategy,
                 "Training strategy (adaptive: its defaults are for in-process runs; --straggler-every gives the "
                 "settings for dedicated hosts)")
      ->check(CLI::IsMember({"allreduce", "ps", "switch", "adaptive"}))
      ->capture_default_str();
  app.add_option("--allreduce-algorithm", c.allreduce_algorithm,
                 "With --strategy allreduce: the all-reduce's algorithm (automatic: hierarchical on several nodes with "
                 "more than one rank on some node, else the transport's native one, else by size and rank count)")
      ->check(CLI::IsMember({"automatic", "ring", "recursive-doubling", "halving-doubling", "hierarchical"}))
      ->capture_default_str();
  app.add_option("--first", c.first, "With --strategy switch: the first stage")
      ->check(CLI::IsMember({"ps", "allreduce"}))
      ->capture_default_str();
  app.add_option("--second", c.second, "With --strategy switch: the second stage (the other one)")
      ->check(CLI::IsMember({"ps", "allreduce"}))
      ->capture_default_str();
  add_threads_per_node_options(app, c.threads_per_node, c.oversubscribe_threads);
  virtual_nodes nodes;
  add_virtual_node_options(app, nodes);
  app.add_option("--log", c.log, "Per-epoch log: CSV if the name ends in .csv, else JSON lines");
  app.add_option("--summary", c.summary, "Write a JSON summary of the run here");
  CLI11_PARSE(app, argc, argv);
  try {
    refuse_misplaced_virtual_nodes(nodes, {launched_by_mpi(), c.threads_per_node, app.count("--simulate") != 0});
    check_threads_per_node(c.threads_per_node, c.oversubscribe_threads, launched_by_mpi(), available_cores());
    c.node_sizes = virtual_node_sizes(nodes, c.ranks);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return EXIT_FAILURE;
  }

  rank_world world(argc, argv, c.ranks, colocated_servers(c), c.threads_per_node);
  try {
    read_simulation_flags(app, c.simulation, true);
    if (c.simulation.on) world.simulate(c.simulation);
    check_settings(c);
    check_world(c, world.size());
    const auto data = load_data(c);
    check_data(c, world.size(), data.train->size());
    // Once per process, before the ranks start: the budget is process-wide.
    const sy::nn::blas_threads_scope blas{c.blas_threads};
    world.calibrate(c, data);
    if (world.rank() == 0) {
      warn_of_blas_kernels("fashion_mnist");
      const std::string grouped = c.node_sizes.empty() ? "" : fmt::format(" on {}", nodes_text(c.node_sizes));
      fmt::print("{} on Fashion-MNIST{}, {}{}, {}\n", c.model, examples_text(c, data), world.describe(), grouped,
                 c.strategy);
    }
    const run_result result = world.run(c, data);
    if (world.rank() == 0) {
      if (result.simulated_seconds) {
        fmt::print("final test accuracy {:.2f}% after {:.3f} s of simulated time ({:.1f} s of real time)\n",
                   100.0 * result.history.last().test_accuracy, *result.simulated_seconds, result.real_seconds);
      } else {
        fmt::print("final test accuracy {:.2f}% after {:.1f} s\n", 100.0 * result.history.last().test_accuracy,
                   result.history.last().wall_seconds);
      }
      if (c.strategy != "allreduce") {
        fmt::print("staleness: max {:.0f}, mean {:.2f} steps; server busy {:.0f}% of its time\n", result.max_staleness,
                   result.mean_staleness, 100.0 * result.server_busy_fraction);
        if (result.dropped_share > 0) fmt::print("late pushes dropped: {:.1f}%\n", 100.0 * result.dropped_share);
      }
      for (const std::string& s : result.switches) fmt::print("switch {}\n", s);
      if (!c.summary.empty()) write_summary(c, world, data.train->size(), result);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return world.fail();
  }
  return EXIT_SUCCESS;
}


// How the examples group their ranks into nodes: virtual nodes in one process (--nodes,
// --node-sizes: inproc_options::node_sizes), or, under mpirun, one process per node whose threads
// are the node's ranks (--threads-per-node: transport::hybrid). allreduce_bench and fashion_mnist
// read and check both here.
#pragma once

#include <switchyard/core/error.hpp>
#if SWITCHYARD_HAS_MPI
#include <switchyard/transport/mpi.hpp>
#endif

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#if defined(__linux__)
#include <sched.h>
#endif

#include <algorithm>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace example {

namespace sy = switchyard;

// ---------------------------------------------------------------------------------------------
// Virtual nodes in process
// ---------------------------------------------------------------------------------------------

/// --nodes N or --node-sizes A,B,... as given on the command line (at most one of the two).
struct virtual_nodes {
  int nodes = 0;           // --nodes: this many nodes of equal size (0: not given)
  std::vector<int> sizes;  // --node-sizes: consecutive ranks in nodes of these sizes

  [[nodiscard]] bool given() const noexcept { return nodes != 0 || !sizes.empty(); }

  /// "--nodes 2" or "--node-sizes 3,1", for messages.
  [[nodiscard]] std::string option_text() const {
    return nodes != 0 ? fmt::format("--nodes {}", nodes) : fmt::format("--node-sizes {}", fmt::join(sizes, ","));
  }
};

inline void add_virtual_node_options(CLI::App& app, virtual_nodes& v) {
  auto* nodes = app.add_option("--nodes", v.nodes,
                               "In process: group the ranks into this many virtual nodes of equal size, which must "
                               "divide --ranks (use --node-sizes for uneven nodes)")
                    ->check(CLI::Range(1, 1024));
  app.add_option("--node-sizes", v.sizes,
                 "In process: group consecutive ranks into virtual nodes of these sizes (2,2: ranks 0-1 and 2-3), "
                 "each at least 1, which must add up to --ranks")
      ->delimiter(',')
      ->excludes(nodes);
}

/// "2 virtual nodes of 2+2 ranks", or "one node" when `sizes` is empty, for what a run prints.
inline std::string nodes_text(const std::vector<int>& sizes) {
  if (sizes.empty()) return "one node";
  return fmt::format("{} virtual nodes of {} ranks", sizes.size(), fmt::join(sizes, "+"));
}

/// The sizes of `v`'s virtual nodes over `ranks` in-process ranks (empty when neither option was
/// given: one node), or a usage_error naming the option and the sizes.
inline std::vector<int> virtual_node_sizes(const virtual_nodes& v, int ranks) {
  if (v.nodes != 0) {
    if (ranks % v.nodes == 0) return std::vector<int>(static_cast<std::size_t>(v.nodes), ranks / v.nodes);
    std::string uneven;  // nodes as even as they can be, as a suggestion
    if (v.nodes < ranks) {
      std::vector<int> sizes(static_cast<std::size_t>(v.nodes), ranks / v.nodes);
      std::fill_n(sizes.begin(), ranks % v.nodes, ranks / v.nodes + 1);
      uneven = fmt::format(" (for example --node-sizes {})", fmt::join(sizes, ","));
    }
    throw sy::usage_error(fmt::format("--nodes {} does not divide --ranks {} into equal nodes: use --node-sizes for "
                                      "nodes of different sizes{}",
                                      v.nodes, ranks, uneven));
  }
  for (std::size_t node = 0; node < v.sizes.size(); ++node) {
    if (v.sizes[node] < 1) {
      throw sy::usage_error(fmt::format("{}: node {} has {} ranks; every node needs at least 1", v.option_text(), node,
                                        v.sizes[node]));
    }
  }
  const long total = std::accumulate(v.sizes.begin(), v.sizes.end(), 0L);
  if (!v.sizes.empty() && total != ranks) {
    throw sy::usage_error(
        fmt::format("{} adds up to {} ranks, but --ranks is {}: the sizes must add up to the ranks", v.option_text(),
                    total, ranks));
  }
  return v.sizes;
}

/// Where the ranks of a run live, as far as virtual nodes care.
struct rank_placement {
  bool launched_by_mpi = false;  // mpirun (or srun) started this process
  int threads_per_node = -1;     // --threads-per-node (-1: not given)
  bool simulated = false;        // --simulate
};

/// Refuses virtual nodes where the ranks are not threads of this one process (or are, but already
/// in nodes of their own): with --threads-per-node, under an MPI launcher and on a simulated cluster.
inline void refuse_misplaced_virtual_nodes(const virtual_nodes& v, const rank_placement& p) {
  if (!v.given()) return;
  const std::string what = v.option_text() + " groups in-process ranks into virtual nodes";
  if (p.threads_per_node >= 0) {
    throw sy::usage_error(fmt::format("{}; with --threads-per-node {} every MPI process is a node of that many "
                                      "threads: give one or the other",
                                      what, p.threads_per_node));
  }
  if (p.launched_by_mpi) {
    throw sy::usage_error(fmt::format("{}, but mpirun started this process: under MPI the nodes are the hosts, or "
                                      "the processes with --threads-per-node",
                                      what));
  }
  if (p.simulated) {
    throw sy::usage_error(fmt::format("{}; a simulated cluster's ranks sit on its hosts (--ranks-per-host)", what));
  }
}

// ---------------------------------------------------------------------------------------------
// Threads per node under mpirun
// ---------------------------------------------------------------------------------------------

/// --threads-per-node C (-1: not given, one rank per process) and --oversubscribe-threads.
inline void add_threads_per_node_options(CLI::App& app, int& threads_per_node, bool& oversubscribe) {
  app.add_option("--threads-per-node", threads_per_node,
                 "Under mpirun: this many ranks as threads of each process, one process per node, threads talking in "
                 "process and nodes over MPI (transport::hybrid; launch with --map-by node --bind-to none)");
  app.add_flag("--oversubscribe-threads", oversubscribe,
               "Allow --threads-per-node above the cores this process may run on");
}

/// The cores this process may run on: its CPU affinity (which mpirun's default binding narrows to
/// one core or one socket), else the machine's hardware threads.
inline int available_cores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

/// Whether an MPI launcher started this process (always false without the MPI part).
inline bool launched_by_mpi() {
#if SWITCHYARD_HAS_MPI
  return sy::transport::mpi::launched();
#else
  return false;
#endif
}

/// Refuses --threads-per-node 0, more threads than this process has cores unless
/// --oversubscribe-threads, and threads per node outside an MPI job, before MPI starts.
inline void check_threads_per_node(int threads_per_node, bool oversubscribe, bool launched_by_mpi, int cores) {
  if (threads_per_node < 0) return;
  if (threads_per_node < 1) {
    throw sy::usage_error(
        fmt::format("--threads-per-node {}: each node needs at least 1 worker thread", threads_per_node));
  }
  if (threads_per_node > cores && !oversubscribe) {
    throw sy::usage_error(fmt::format(
        "--threads-per-node {} is more than the {} cores this process may run on (launch with mpirun --bind-to none "
        "so that a process is not bound to one core, or pass --oversubscribe-threads to share the cores)",
        threads_per_node, cores));
  }
  if (!launched_by_mpi) {
    throw sy::usage_error(fmt::format("--threads-per-node {} runs one process per node under an MPI launcher (mpirun -n "
                                      "NODES --map-by node --bind-to none ...); in one process, use --ranks",
                                      threads_per_node));
  }
}

}  // namespace example

// The all-reduce benchmark: median time per call, algorithm bandwidth and bus bandwidth of every
// all-reduce algorithm over a sweep of message sizes, in process (one thread per rank) or under
// mpirun, where raw MPI_Allreduce is timed in the same run as the baseline. In process, ranks can be
// grouped into virtual nodes for the hierarchical all-reduce; under mpirun with --threads-per-node
// C, each process runs C ranks as threads (transport::hybrid).
// docs/performance.md describes the method and records the results.
#include "json_output.hpp"
#include "node_layout.hpp"
#include "startup_checks.hpp"

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/transport/inproc.hpp>
#if SWITCHYARD_HAS_MPI
#include <switchyard/transport/hybrid.hpp>
#include <switchyard/transport/mpi.hpp>
#endif

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace sy = switchyard;

constexpr std::size_t KiB = std::size_t{1} << 10;
constexpr std::size_t MiB = std::size_t{1} << 20;

// What the command line sets.
struct settings {
  int ranks = 4;
  std::vector<std::size_t> sizes{4, 4 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 64 * MiB};
  std::vector<std::string> algorithms;
  int trials = 11;
  double min_trial_seconds = 0.02;
  std::string type = "float";
  std::string json;
  int spin = sy::transport::inproc_options{}.spin;
  std::vector<int> node_sizes;  // in process: virtual nodes (inproc_options::node_sizes)
  int threads_per_node = -1;    // under mpirun: ranks per process, as threads (transport::hybrid); -1: one
  bool oversubscribe_threads = false;
};

// One measured (transport, algorithm, ranks, bytes) point. Times are per call, each the slowest
// rank's, so a record describes the collective as a whole.
struct record {
  std::string transport;
  std::string algorithm;
  int ranks = 0;
  std::size_t bytes = 0;
  std::int64_t calls_per_trial = 0;
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
};

// An algorithm under test: `run(data, calls)` makes `calls` all-reduce calls on `data`. The loop
// is inside, so the type erasure costs one indirect call per trial, not per all-reduce.
template <class T>
struct contender {
  std::string name;
  std::function<void(std::span<T>, std::int64_t)> run;
};

template <class T, class Transport, class Algorithm>
contender<T> switchyard_contender(Transport& t, std::string name, Algorithm algorithm) {
  return {std::move(name), [&t, algorithm](std::span<T> data, std::int64_t calls) {
            for (std::int64_t i = 0; i < calls; ++i) sy::collective::allreduce(t, data, sy::ops::sum{}, algorithm);
          }};
}

template <class T, class Transport>
contender<T> switchyard_contender(Transport& t, const std::string& name) {
  if (name == "ring") return switchyard_contender<T>(t, name, sy::algorithm::ring{});
  if (name == "recursive_doubling") return switchyard_contender<T>(t, name, sy::algorithm::recursive_doubling{});
  if (name == "halving_doubling") return switchyard_contender<T>(t, name, sy::algorithm::halving_doubling{});
  if (name == "hierarchical") return switchyard_contender<T>(t, name, sy::algorithm::hierarchical{});
  if constexpr (sy::collective::has_native_allreduce<Transport, T, sy::ops::sum>) {
    if (name == "native") return switchyard_contender<T>(t, name, sy::algorithm::native{});
  }
  if (name == "automatic") return switchyard_contender<T>(t, name, sy::algorithm::automatic{});
  throw std::invalid_argument(fmt::format("no all-reduce algorithm named '{}' over this transport", name));
}

using bench_clock = std::chrono::steady_clock;

// This rank's seconds per call for `calls` calls, counted from the moment it leaves a barrier.
// A rank that leaves the barrier early waits for its peers inside the first call, so the slowest
// rank's figure spans the collective from the last barrier exit to the last rank done.
template <class T, class Transport>
double seconds_per_call(Transport& t, const contender<T>& c, std::span<T> data, std::int64_t calls) {
  t.barrier();
  const auto start = bench_clock::now();
  c.run(data, calls);
  const std::chrono::duration<double> elapsed = bench_clock::now() - start;
  return elapsed.count() / static_cast<double>(calls);
}

template <class Transport>
void max_over_ranks(Transport& t, std::vector<double>& values) {
  sy::collective::allreduce(t, values, sy::ops::max{});
}

// One call on distinct per-rank values, checked on every element: a fast but wrong algorithm must
// not produce a figure. It also warms the algorithm's scratch buffers. The buffer is then zeroed:
// sums of zeros stay zero, so repeated calls never reach infinities or subnormals (a float add
// costs the same for any normal value).
template <class T, class Transport>
void check_sum(Transport& t, const contender<T>& c, std::span<T> data) {
  std::fill(data.begin(), data.end(), static_cast<T>(t.rank() + 1));
  c.run(data, 1);
  const T expected = static_cast<T>(t.size() * (t.size() + 1) / 2);
  const auto wrong = std::find_if(data.begin(), data.end(), [expected](T v) { return v != expected; });
  if (wrong != data.end()) {
    throw std::runtime_error(fmt::format("rank {}: {} over {} elements left {} at element {}, expected {}", t.rank(),
                                         c.name, data.size(), *wrong, wrong - data.begin(), expected));
  }
  std::fill(data.begin(), data.end(), T{0});
}

// Calls per trial: doubled from 1 until the slowest rank needs `min_seconds` for them, so short
// calls are timed in batches long enough that the clock and the barrier vanish. All ranks see the
// same maximum, so they agree on the count. These rounds are the warm-up.
template <class T, class Transport>
std::int64_t calibrate(Transport& t, const contender<T>& c, std::span<T> data, double min_seconds) {
  std::vector<double> per_call(1);
  for (std::int64_t calls = 1;; calls *= 2) {
    per_call[0] = seconds_per_call(t, c, data, calls);
    max_over_ranks(t, per_call);
    if (per_call[0] * static_cast<double>(calls) >= min_seconds) return calls;
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// Times every contender at every size on rank `t`; every rank returns the same records.
template <class T, class Transport>
std::vector<record> sweep(Transport& t, std::string_view transport_name, const settings& s,
                          const std::vector<contender<T>>& contenders) {
  const std::size_t largest = std::max<std::size_t>(1, *std::max_element(s.sizes.begin(), s.sizes.end()) / sizeof(T));
  // Allocated and touched (zeroed) once, by the rank that uses it, before any timing.
  std::vector<T> storage(largest);
  const int n = t.size();
  const double bus_factor = 2.0 * (n - 1) / n;
  std::vector<record> records;
  for (const std::size_t requested : s.sizes) {
    const std::span<T> data(storage.data(), std::max<std::size_t>(1, requested / sizeof(T)));
    const std::size_t bytes = data.size_bytes();
    std::vector<std::int64_t> calls(contenders.size());
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      check_sum(t, contenders[i], data);
      calls[i] = calibrate(t, contenders[i], data, s.min_trial_seconds);
    }
    // Trials interleave the contenders, so drift in the load of a shared machine hits all alike.
    std::vector<std::vector<double>> times(contenders.size(), std::vector<double>(static_cast<std::size_t>(s.trials)));
    for (std::size_t trial = 0; trial < static_cast<std::size_t>(s.trials); ++trial) {
      for (std::size_t i = 0; i < contenders.size(); ++i) {
        times[i][trial] = seconds_per_call(t, contenders[i], data, calls[i]);
      }
    }
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      max_over_ranks(t, times[i]);
      const double mid = median(times[i]);
      const double algbw = static_cast<double>(bytes) / mid / 1e9;
      records.push_back({std::string(transport_name), contenders[i].name, n, bytes, calls[i], mid,
                         *std::min_element(times[i].begin(), times[i].end()),
                         *std::max_element(times[i].begin(), times[i].end()), algbw, algbw * bus_factor});
    }
  }
  return records;
}

std::string human_bytes(std::size_t bytes) {
  if (bytes >= MiB && bytes % MiB == 0) return fmt::format("{} MiB", bytes / MiB);
  if (bytes >= KiB && bytes % KiB == 0) return fmt::format("{} KiB", bytes / KiB);
  return fmt::format("{} B", bytes);
}

std::string human_seconds(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.2f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3f} ms", seconds * 1e3);
  return fmt::format("{:.3f} s", seconds);
}

// The raw MPI_Allreduce record at the same size, when the run has one.
const record* baseline_of(const std::vector<record>& records, const record& r) {
  const auto it = std::find_if(records.begin(), records.end(),
                               [&r](const record& b) { return b.algorithm == "mpi_raw" && b.bytes == r.bytes; });
  return it == records.end() ? nullptr : &*it;
}

void print_table(const std::vector<record>& records, const settings& s, std::string_view what) {
  const bool has_baseline = std::any_of(records.begin(), records.end(),
                                        [](const record& r) { return r.algorithm == "mpi_raw"; });
  fmt::print("all-reduce (sum of {}), {}; {} trials per point; time per call = slowest rank, median over trials\n",
             s.type, what, s.trials);
  fmt::print("{:>8}  {:<18} {:>11} {:>12} {:>8} {:>12} {:>12}{}\n", "size", "algorithm", "calls/trial", "median",
             "spread", "algbw GB/s", "busbw GB/s", has_baseline ? "  vs mpi_raw" : "");
  for (const record& r : records) {
    const record* baseline = baseline_of(records, r);
    fmt::print("{:>8}  {:<18} {:>11} {:>12} {:>7.1f}% {:>12.3f} {:>12.3f}{}\n", human_bytes(r.bytes), r.algorithm,
               r.calls_per_trial, human_seconds(r.median_s), 100 * (r.max_s - r.min_s) / r.median_s, r.algbw_gbps,
               r.busbw_gbps,
               baseline != nullptr && baseline != &r ? fmt::format("  {:>10.3f}x", baseline->median_s / r.median_s)
                                                     : std::string());
  }
}

void write_json(const std::string& path, const std::vector<record>& records, const settings& s) {
  example::json list = example::json::array();
  for (const record& r : records) {
    list.push_back({{"transport", r.transport},
                    {"algorithm", r.algorithm},
                    {"ranks", r.ranks},
                    {"bytes", r.bytes},
                    {"type", s.type},
                    {"trials", s.trials},
                    {"calls_per_trial", r.calls_per_trial},
                    {"median_s", r.median_s},
                    {"min_s", r.min_s},
                    {"max_s", r.max_s},
                    {"algbw_gbps", r.algbw_gbps},
                    {"busbw_gbps", r.busbw_gbps}});
  }
  example::write_json_file(path, list);
}

void report(const std::vector<record>& records, const settings& s, std::string_view what) {
  print_table(records, s, what);
  if (!s.json.empty()) write_json(s.json, records, s);
}

template <class T>
void run_inproc(const settings& s, const std::vector<std::string>& algorithms) {
  sy::transport::inproc_options options;
  options.spin = s.spin;
  options.node_sizes = s.node_sizes;
  std::vector<record> records;
  sy::transport::run_inproc(
      s.ranks,
      [&](sy::transport::inproc& t) {
        std::vector<contender<T>> contenders;
        for (const std::string& name : algorithms) contenders.push_back(switchyard_contender<T>(t, name));
        std::vector<record> mine = sweep<T>(t, "inproc", s, contenders);
        if (t.rank() == 0) records = std::move(mine);
      },
      options);
  report(records, s,
         fmt::format("in-process transport, {} ranks (threads), {}, spin {}", s.ranks,
                     example::nodes_text(s.node_sizes), s.spin));
}

#if SWITCHYARD_HAS_MPI
template <class T>
contender<T> raw_mpi_contender() {
  return {"mpi_raw", [](std::span<T> data, std::int64_t calls) {
            if (data.size() > static_cast<std::size_t>(INT_MAX)) {
              throw std::invalid_argument(fmt::format("{} elements exceed MPI's int count", data.size()));
            }
            const int count = static_cast<int>(data.size());
            for (std::int64_t i = 0; i < calls; ++i) {
              MPI_Allreduce(MPI_IN_PLACE, data.data(), count, boost::mpi::get_mpi_datatype<T>(), MPI_SUM, MPI_COMM_WORLD);
            }
          }};
}

template <class T>
void run_mpi(const settings& s, const std::vector<std::string>& algorithms) {
  sy::transport::mpi t;
  std::vector<contender<T>> contenders;
  for (const std::string& name : algorithms) {
    contenders.push_back(name == "mpi_raw" ? raw_mpi_contender<T>() : switchyard_contender<T>(t, name));
  }
  const std::vector<record> records = sweep<T>(t, "mpi", s, contenders);
  const bool passive = t.options().wait == sy::transport::mpi_wait::passive;
  if (t.rank() == 0) {
    report(records, s,
           fmt::format("MPI transport, {} processes on {} nodes, {} waits", t.size(), t.topology().nodes,
                       passive ? "passive" : "spinning"));
  }
}

// One process per node, --threads-per-node ranks as its threads: the ranks of a process talk in
// process, the processes over MPI, and each process is a node of the topology.
template <class T>
void run_hybrid(const settings& s, const std::vector<std::string>& algorithms) {
  sy::transport::hybrid_options options;
  options.spin = s.spin;
  sy::transport::hybrid_world world(s.threads_per_node, options);
  std::vector<record> records;
  world.run([&](sy::transport::hybrid& t) {
    std::vector<contender<T>> contenders;
    for (const std::string& name : algorithms) contenders.push_back(switchyard_contender<T>(t, name));
    std::vector<record> mine = sweep<T>(t, "hybrid", s, contenders);
    if (t.rank() == 0) records = std::move(mine);
  });
  if (world.process() == 0) {
    report(records, s,
           fmt::format("hybrid transport, {} ranks: {} processes x {} threads, {} waits, spin {}", world.size(),
                       world.processes(), s.threads_per_node,
                       options.wait == sy::transport::mpi_wait::passive ? "passive" : "spinning", s.spin));
  }
}
#endif

template <class T>
void run(const settings& s, bool under_mpi) {
  const bool hybrid = under_mpi && s.threads_per_node > 0;
  std::vector<std::string> algorithms = s.algorithms;
  if (algorithms.empty()) {
    algorithms = {"ring", "recursive_doubling"};
    // The hybrid transport has no native all-reduce: automatic takes the hierarchical one there.
    if (!hybrid) algorithms.emplace_back("native");
    algorithms.emplace_back("automatic");
    if (!s.node_sizes.empty() || hybrid) algorithms.emplace_back("hierarchical");
    if (under_mpi && !hybrid) algorithms.emplace_back("mpi_raw");
  }
#if SWITCHYARD_HAS_MPI
  if (hybrid) {
    run_hybrid<T>(s, algorithms);
    return;
  }
  if (under_mpi) {
    run_mpi<T>(s, algorithms);
    return;
  }
#endif
  run_inproc<T>(s, algorithms);
}

// What the command line says beyond `settings`: the virtual nodes as given, and --quick.
struct command_line {
  example::virtual_nodes nodes;
  bool quick = false;
};

void add_options(CLI::App& app, settings& s, command_line& line) {
  app.add_option("--ranks", s.ranks, "In-process ranks (threads); under mpirun the MPI world size is used")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--sizes", s.sizes, "Message sizes in bytes; suffixes KiB, MiB, GiB are accepted")
      ->transform(CLI::AsSizeValue(false))
      ->delimiter(',')
      ->capture_default_str();
  std::vector<std::string> known{"ring", "recursive_doubling", "halving_doubling", "hierarchical", "native",
                                 "automatic"};
#if SWITCHYARD_HAS_MPI
  known.emplace_back("mpi_raw");
#endif
  app.add_option("--algorithms", s.algorithms,
                 "Algorithms to time (default: all; hierarchical only with nodes; native not with --threads-per-node; "
                 "mpi_raw, raw MPI_Allreduce, only under mpirun without --threads-per-node)")
      ->check(CLI::IsMember(known))
      ->delimiter(',');
  app.add_option("--trials", s.trials, "Timed trials per point; the median is reported")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--min-trial-seconds", s.min_trial_seconds,
                 "Calls per trial are doubled until a trial lasts at least this long")
      ->check(example::finite_positive())
      ->capture_default_str();
  app.add_option("--type", s.type, "Element type")->check(CLI::IsMember({"float", "double"}))->capture_default_str();
  app.add_option("--json", s.json, "Write one JSON record per (transport, algorithm, ranks, bytes) to this file");
  app.add_option("--spin", s.spin,
                 "In process and between the threads of a process: yields of a waiting rank before it sleeps "
                 "(inproc_options::spin)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  example::add_virtual_node_options(app, line.nodes);
  example::add_threads_per_node_options(app, s.threads_per_node, s.oversubscribe_threads);
  app.add_flag("--quick", line.quick, "Short sweep (4 B, 64 KiB, 1 MiB; 3 short trials) unless set explicitly");
}

// The settings the command line leaves after --quick and the checks of the ranks' placement, which
// refuse bad input before MPI starts.
void settle(const CLI::App& app, settings& s, const command_line& line) {
  if (line.quick) {
    if (app.count("--sizes") == 0) s.sizes = {4, 64 * KiB, 1 * MiB};
    if (app.count("--trials") == 0) s.trials = 3;
    if (app.count("--min-trial-seconds") == 0) s.min_trial_seconds = 0.002;
  }
  const bool launched = example::launched_by_mpi();
  example::refuse_misplaced_virtual_nodes(line.nodes, {launched, s.threads_per_node, false});
  example::check_threads_per_node(s.threads_per_node, s.oversubscribe_threads, launched, example::available_cores());
  s.node_sizes = example::virtual_node_sizes(line.nodes, s.ranks);
  const auto asked = [&](std::string_view name) {
    return std::find(s.algorithms.begin(), s.algorithms.end(), name) != s.algorithms.end();
  };
  const bool hybrid = s.threads_per_node > 0;
  if (asked("mpi_raw") && (!launched || hybrid)) {
    throw std::invalid_argument(hybrid ? "mpi_raw times MPI_Allreduce over the processes, but with --threads-per-node "
                                         "the ranks are threads: time it in a run without --threads-per-node"
                                       : "mpi_raw is the MPI baseline: run the benchmark under mpirun to time it");
  }
  if (asked("native") && hybrid) {
    throw std::invalid_argument("the hybrid transport (--threads-per-node) has no native all-reduce: leave native out");
  }
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  command_line line;
  CLI::App app{"switchyard all-reduce benchmark: median time per call, algorithm and bus bandwidth "
               "(2(n-1)/n x bytes / time) per message size and algorithm"};
  add_options(app, s, line);
  // Read before MPI starts, which --threads-per-node asks to start with MPI_THREAD_MULTIPLE: under
  // mpirun, every process prints what it refuses.
  CLI11_PARSE(app, argc, argv);
  try {
    settle(app, s, line);
  } catch (const std::exception& e) {
    fmt::print(stderr, "allreduce_bench: {}\n", e.what());
    return EXIT_FAILURE;
  }

#if SWITCHYARD_HAS_MPI
  // MPI is always initialized, so the one binary runs both ways: started by mpirun it measures
  // the MPI transport, started alone (a singleton MPI world) it runs the in-process sweep.
  const bool launched = sy::transport::mpi::launched();
  std::optional<sy::transport::mpi::environment> environment;
  if (s.threads_per_node > 0) {
    environment.emplace(argc, argv, boost::mpi::threading::multiple);
  } else {
    environment.emplace(argc, argv);
  }
  const bool under_mpi = launched || boost::mpi::communicator().size() > 1;
  const bool speaks = boost::mpi::communicator().rank() == 0;
#else
  const bool under_mpi = false;
  const bool speaks = true;
#endif

  try {
    if (under_mpi && app.count("--ranks") != 0 && speaks) {
      fmt::print("note: --ranks is ignored under mpirun; the MPI world size{} is used\n",
                 s.threads_per_node > 0 ? " times --threads-per-node" : "");
    }
    if (s.type == "float") {
      run<float>(s, under_mpi);
    } else {
      run<double>(s, under_mpi);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "allreduce_bench: {}\n", e.what());
#if SWITCHYARD_HAS_MPI
    // The other processes may wait in a collective this one will never join.
    if (under_mpi) environment->abort(EXIT_FAILURE);
#endif
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

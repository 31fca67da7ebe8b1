// A small MPI program for the cluster emulator's tests (tests/cluster/*.sh): where each rank runs,
// how long a message takes over an emulated link, and how fast a rank computes under its CPU share.
//
//   cluster_probe where                      one line per rank: host, network namespace, CPU group,
//                                            ranks that MPI sees on the same node, and the MPI
//                                            handle's topology() (node, local rank, local size,
//                                            nodes)
//   cluster_probe topology TRIALS            how long shared_memory_topology(MPI_COMM_WORLD) takes
//                                            (the handle's start-up cost): each trial and the median
//   cluster_probe ping BYTES TRIALS          rank 0 sends BYTES to rank 1, which answers with one
//                                            byte; the time of each trial and their median
//   cluster_probe compute ITERATIONS [--sleep RANK,...]
//                                            every rank but the sleeping ones runs a dependent loop of
//                                            ITERATIONS steps; the seconds each one took and the
//                                            CPU seconds of its loop, and the CPU seconds of every
//                                            rank (a sleeper's is what its wait cost)
//   cluster_probe overlap BYTES COMPUTE_MS TRIALS
//                                            rank 0 posts a send of BYTES to rank 1 and computes
//                                            for COMPUTE_MS with no MPI call before it waits, as a
//                                            pipelined worker does; how long rank 1 waited for the
//                                            message in each trial, and their median
//   cluster_probe stream BYTES MESSAGES     rank 0 sends MESSAGES messages of BYTES to rank 1, one
//                                            after the other; each rank's wall and CPU seconds
//                                            (user and system, waits included) over the stream and
//                                            its CPU seconds per byte: the per-byte cost of
//                                            sending and of receiving (simulated_options::byte_cost)
//
// Rank 0 prints every result, one `key value` record per line, for the shell tests to parse.
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/transport/mpi.hpp>

#include <mpi.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace sy = switchyard;
using probe_clock = std::chrono::steady_clock;

// This process's CPU group (cgroup v1 "cpu" controller, alone or as "cpu,cpuacct").
std::string cpu_group() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::stringstream controllers(line.substr(first + 1, second - first - 1));
    for (std::string c; std::getline(controllers, c, ',');) {
      if (c == "cpu") return line.substr(second + 1);
    }
  }
  return "?";
}

unsigned long long net_namespace() {
  struct stat st {};
  return stat("/proc/self/ns/net", &st) == 0 ? static_cast<unsigned long long>(st.st_ino) : 0;
}

int where(sy::transport::mpi& t) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t.rank(), MPI_INFO_NULL, &node);
  int node_ranks = 0;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  char line[512] = {};
  const sy::transport::node_topology at = t.topology();
  std::snprintf(line, sizeof line,
                "rank %d host %s netns %llu cgroup %s node_ranks %d pid %d node %d local_rank %d local_size %d nodes %d",
                t.rank(), host, net_namespace(), cpu_group().c_str(), node_ranks, static_cast<int>(getpid()), at.node,
                at.local_rank, at.local_size, at.nodes);
  std::vector<char> lines(t.rank() == 0 ? sizeof line * static_cast<std::size_t>(t.size()) : 0);
  MPI_Gather(line, sizeof line, MPI_CHAR, lines.data(), sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (t.rank() == 0) {
    for (int r = 0; r < t.size(); ++r) std::printf("%s\n", lines.data() + sizeof line * static_cast<std::size_t>(r));
  }
  return 0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

int ping(sy::transport::mpi& t, std::size_t bytes, int trials) {
  if (t.size() < 2) {
    std::fprintf(stderr, "cluster_probe ping: needs 2 ranks\n");
    return 2;
  }
  std::vector<std::uint8_t> message(bytes, static_cast<std::uint8_t>(t.rank()));
  std::vector<std::uint8_t> answer(1);
  const auto one_trip = [&](std::span<std::uint8_t> data) {
    if (t.rank() == 0) {
      t.send(std::span<const std::uint8_t>(data), 1, 1);
      t.recv(std::span<std::uint8_t>(answer), 1, 2);
    } else if (t.rank() == 1) {
      t.recv(data, 0, 1);
      t.send(std::span<const std::uint8_t>(answer), 0, 2);
    }
  };
  // Connections are made and TCP's window opened before any timing.
  one_trip(std::span<std::uint8_t>(message).first(std::min<std::size_t>(bytes, std::size_t{1} << 20)));
  std::vector<double> seconds;
  for (int i = 0; i < trials; ++i) {
    t.barrier();
    const auto start = probe_clock::now();
    one_trip(message);
    seconds.push_back(std::chrono::duration<double>(probe_clock::now() - start).count());
  }
  if (t.rank() == 0) {
    for (const double s : seconds) std::printf("trial_s %.6f\n", s);
    std::printf("bytes %zu\nmedian_s %.6f\n", bytes, median(seconds));
  }
  return 0;
}

// The slowest rank's time of each trial of `step`, after a barrier.
template <class Step>
std::vector<double> slowest_times(sy::transport::mpi& t, int trials, Step step) {
  std::vector<double> seconds;
  for (int i = 0; i < trials; ++i) {
    t.barrier();
    const auto start = probe_clock::now();
    step();
    std::vector<double> took{std::chrono::duration<double>(probe_clock::now() - start).count()};
    sy::collective::allreduce(t, took, sy::ops::max{});
    seconds.push_back(took[0]);
  }
  return seconds;
}

int topology(sy::transport::mpi& t, int trials) {
  const std::vector<double> split = slowest_times(t, trials, [] {
    static_cast<void>(sy::transport::shared_memory_topology(MPI_COMM_WORLD));
  });
  const std::vector<double> handle = slowest_times(t, trials, [] { const sy::transport::mpi made; });
  if (t.rank() == 0) {
    for (const double s : split) std::printf("topology_trial_s %.6f\n", s);
    std::printf("ranks %d\ntopology_median_s %.6f\nhandle_median_s %.6f\n", t.size(), median(split), median(handle));
  }
  return 0;
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

int compute(sy::transport::mpi& t, long long iterations, const std::vector<int>& sleepers) {
  const bool sleeps = std::find(sleepers.begin(), sleepers.end(), t.rank()) != sleepers.end();
  t.barrier();
  double seconds = -1;
  double loop_cpu = 0;
  if (!sleeps) {
    const auto start = probe_clock::now();
    timespec cpu_start{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
    // A dependent chain: the time is the core's, not the memory's.
    volatile double sink = 0;
    double x = 1.0 + t.rank() * 1e-9;
    for (long long i = 0; i < iterations; ++i) x = x * 0.999999999 + 1e-9;
    sink = x;
    (void)sink;
    seconds = std::chrono::duration<double>(probe_clock::now() - start).count();
    timespec cpu_end{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
    loop_cpu = static_cast<double>(cpu_end.tv_sec - cpu_start.tv_sec) + 1e-9 * static_cast<double>(cpu_end.tv_nsec - cpu_start.tv_nsec);
  }
  // A sleeping rank waits here for the others, under the job's wait policy (the emulator's
  // `run` makes it passive); the gather after it finds everyone there.
  t.barrier();
  const double mine[3] = {seconds, loop_cpu, process_cpu_seconds()};
  std::vector<double> all(3 * static_cast<std::size_t>(t.size()));
  MPI_Gather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (t.rank() == 0) {
    for (std::size_t r = 0; r < static_cast<std::size_t>(t.size()); ++r) {
      const double* v = all.data() + 3 * r;
      if (v[0] >= 0) {
        std::printf("rank %zu seconds %.6f loop_cpu_s %.6f cpu_s %.3f\n", r, v[0], v[1], v[2]);
      } else {
        std::printf("rank %zu slept cpu_s %.3f\n", r, v[2]);
      }
    }
  }
  return 0;
}

// Whether a posted send moves while its sender computes: under a rendezvous the receiver's
// answer waits for the sender's next MPI call, so rank 1's wait outlasts rank 0's compute.
int overlap(sy::transport::mpi& t, std::size_t bytes, double compute_ms, int trials) {
  if (t.size() < 2) {
    std::fprintf(stderr, "cluster_probe overlap: needs 2 ranks\n");
    return 2;
  }
  std::vector<std::uint8_t> message(bytes, static_cast<std::uint8_t>(t.rank()));
  const auto compute_for = std::chrono::duration<double, std::milli>(compute_ms);
  std::vector<double> waited;
  // The first trial opens the connection and TCP's window; it is not counted.
  for (int i = 0; i <= trials; ++i) {
    t.barrier();
    const auto start = probe_clock::now();
    if (t.rank() == 0) {
      auto sent = t.isend(std::span<const std::uint8_t>(message), 1, 3);
      while (probe_clock::now() - start < compute_for) {
      }
      sent.wait();
    } else if (t.rank() == 1) {
      t.recv(std::span<std::uint8_t>(message), 0, 3);
      if (i > 0) waited.push_back(std::chrono::duration<double>(probe_clock::now() - start).count());
    }
  }
  if (t.rank() == 1) t.send(std::span<const double>(waited), 0, 4);
  if (t.rank() == 0) {
    waited.resize(static_cast<std::size_t>(trials));
    t.recv(std::span<double>(waited), 1, 4);
    for (const double s : waited) std::printf("waited_s %.6f\n", s);
    std::printf("bytes %zu\ncompute_s %.6f\nmedian_waited_s %.6f\n", bytes, compute_ms / 1e3, median(waited));
  }
  return 0;
}

std::vector<int> rank_list(std::string_view text) {
  std::vector<int> ranks;
  std::stringstream in{std::string(text)};
  for (std::string item; std::getline(in, item, ',');) ranks.push_back(std::stoi(item));
  return ranks;
}

int stream(sy::transport::mpi& t, std::size_t bytes, int messages) {
  if (t.size() != 2) {
    std::fprintf(stderr, "cluster_probe stream: needs 2 ranks, has %d\n", t.size());
    return 2;
  }
  std::vector<std::uint8_t> message(bytes, static_cast<std::uint8_t>(t.rank()));
  const auto run = [&](int count) {
    for (int i = 0; i < count; ++i) {
      if (t.rank() == 0) {
        t.send(std::span<const std::uint8_t>(message), 1, 1);
      } else {
        t.recv(std::span<std::uint8_t>(message), 0, 1);
      }
    }
  };
  run(1);  // connections made and TCP's window opened before any timing
  t.barrier();
  const auto start = probe_clock::now();
  const double cpu_start = process_cpu_seconds();
  run(messages);
  const double mine[2] = {std::chrono::duration<double>(probe_clock::now() - start).count(),
                          process_cpu_seconds() - cpu_start};
  double all[4] = {};
  MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (t.rank() == 0) {
    const double total = static_cast<double>(bytes) * messages;
    std::printf("bytes %.0f\n", total);
    for (int r = 0; r < 2; ++r) {
      std::printf("rank %d %s seconds %.4f cpu_s %.4f cpu_ns_per_byte %.4f\n", r, r == 0 ? "send" : "receive",
                  all[2 * r], all[2 * r + 1], all[2 * r + 1] / total * 1e9);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sy::transport::mpi::environment environment(argc, argv);
  sy::transport::mpi t;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "where") return where(t);
  if (args.size() == 2 && args[0] == "topology" && std::stoi(std::string(args[1])) > 0) {
    return topology(t, std::stoi(std::string(args[1])));
  }
  if (args.size() == 3 && args[0] == "ping") {
    return ping(t, std::stoull(std::string(args[1])), std::stoi(std::string(args[2])));
  }
  if ((args.size() == 2 || (args.size() == 4 && args[2] == "--sleep")) && args[0] == "compute") {
    return compute(t, std::stoll(std::string(args[1])), args.size() == 4 ? rank_list(args[3]) : std::vector<int>{});
  }
  if (args.size() == 4 && args[0] == "overlap" && std::stoi(std::string(args[3])) > 0) {
    return overlap(t, std::stoull(std::string(args[1])), std::stod(std::string(args[2])), std::stoi(std::string(args[3])));
  }
  if (args.size() == 3 && args[0] == "stream" && std::stoi(std::string(args[2])) > 0) {
    return stream(t, std::stoull(std::string(args[1])), std::stoi(std::string(args[2])));
  }
  if (t.rank() == 0) {
    std::fprintf(stderr,
                 "usage: cluster_probe where | topology TRIALS | ping BYTES TRIALS | compute ITERATIONS [--sleep RANK,...] | overlap BYTES "
                 "COMPUTE_MS TRIALS | stream BYTES MESSAGES\n");
  }
  return 2;
}

// The settings of a simulated cluster: its platform (hosts, cores, links, racks, or a SimGrid
// platform file), the network model, how compute time is charged, and the parsing of rates and
// durations written with their units ("1Gbps", "50us").
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/transport.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace switchyard::transport {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief SimGrid's flow-level network models (docs/simulation.md#the-network-model).
enum class network_model {
  /// The platform's figures taken literally: a flow of M bytes over a route of latency a whose
  /// narrowest link has bandwidth B takes a + M/B; concurrent flows share links max-min fairly.
  cm02,
  /// SimGrid's default, calibrated on TCP: latencies scaled by about 13.01, bandwidths by 0.97,
  /// and a window that caps a flow's rate at 4 MiB over twice the route's latency.
  lv08,
};

/// @brief How the time a rank computes between two transport calls advances its simulated clock.
enum class compute_model {
  /// Compute is free: only the network costs time (collective benchmarks, formula checks).
  none,
  /// The thread CPU time between two transport calls, divided by the host's speed factor, runs on
  /// the rank's host as `this_actor::execute`: ranks that share a host share its cores.
  measured,
  /// No CPU time is measured: the program charges its compute with `simulated::compute(seconds)`,
  /// typically a cost per step measured once before the run (a calibration). Simulated times then
  /// follow from the inputs alone, so every run of one seed, asynchronous ones included, takes the
  /// same simulated time and trains to the same bits.
  calibrated,
};

/// @brief One host that runs slower (or faster) than the others: its index and speed factor, for
/// the whole run or, as a transient straggler, for a window of simulated time.
struct host_speed {
  int host = 0;
  double factor = 1.0;
  /// The window, in simulated seconds since the run began: the host runs at `factor` from `from`
  /// to `to` and at its usual speed before and after (work under way at either end takes the new
  /// speed from then on). The default, 0 to infinity, is the whole run.
  double from = 0;
  double to = std::numeric_limits<double>::infinity();

  /// Whether the factor holds for the whole run.
  [[nodiscard]] bool whole_run() const noexcept { return from == 0 && to == std::numeric_limits<double>::infinity(); }
};

/// @brief The simulated cluster: N hosts of C cores, each with a link of the given bandwidth and
/// latency to one switch (a star), or racks of `rack_size` hosts whose switches reach the top one
/// over an uplink `oversubscription` times narrower than the rack's links together; or a SimGrid
/// platform file.
struct simulated_platform {
  /// Hosts of the cluster (ignored with `file`). At least 1.
  int hosts = 4;
  /// Cores of every host: at most that many ranks run on one (ignored with `file`, whose hosts
  /// say their own `core` count).
  int cores = 1;
  /// Bandwidth of each host's link, both directions each at this rate: a number and one of the
  /// units bps, kbps, Mbps, Gbps, Tbps (bits) or Bps, kBps, MBps, GBps, TBps (bytes), decimal.
  std::string bandwidth = "1Gbps";
  /// Latency of each host's link: a number and one of s, ms, us, ns. A route between two hosts
  /// of one switch crosses two links.
  std::string latency = "50us";
  /// The route from a host to itself (ranks that share a host): shared memory, not the network.
  std::string loopback_bandwidth = "80Gbps";
  std::string loopback_latency = "1us";
  /// 0: one switch. K > 0: racks of K hosts (the last one may hold fewer), each rack's switch
  /// linked to the top switch by an uplink of K x bandwidth / `oversubscription`.
  int rack_size = 0;
  double oversubscription = 1.0;
  /// A SimGrid platform XML file to load instead of the figures above; ranks go to its hosts in
  /// the order SimGrid lists them (by name). A host of speed 1 Gf runs at this machine's speed.
  std::string file;
  /// Hosts that run at another speed than this machine's: a factor of 0.5 takes twice the time.
  /// The windows of one host must not overlap. Not with `file`, whose hosts give their own speeds.
  std::vector<host_speed> speeds;
};

/// @brief Settings of a simulated world.
struct simulated_options {
  simulated_platform platform;
  /// Ranks on each host, placed in blocks: ranks 0 .. C-1 on host 0, and so on. At most the
  /// host's cores.
  int ranks_per_host = 1;
  /// The network model and whether flows in one direction slow the acknowledgements of the
  /// other (cross-traffic). Both are SimGrid settings of the whole process: every simulated world
  /// of one process must ask for the same.
  network_model network = network_model::cm02;
  bool cross_traffic = false;
  /// SimGrid's time precision (`surf/precision`): a duration with its unit. Events (a latency's
  /// end, a flow's end, a computation's end) that fall within it of the earliest one happen with
  /// it, in one step of the flow solver, which re-solves the rates of every flow that shares a
  /// link with them once per step. The default, SimGrid's 1 ns, keeps each end apart; "1us" lets
  /// the all-to-all traffic of a co-located parameter server, whose ends crowd nanoseconds apart,
  /// simulate about 3x faster at 256 hosts for shifts of about 2% in its simulated time
  /// (docs/simulation.md#time-precision). At most every link's latency above 0 (the star's, the
  /// racks', the loopback's, or those of a platform file), which SimGrid could no longer resolve.
  std::string time_precision = "1ns";
  compute_model compute = compute_model::measured;
  /// CPU seconds (of this machine, at speed factor 1) that sending or receiving one byte between
  /// two hosts costs, as a network stack's copies and system calls do: a message of M bytes runs
  /// M x byte_cost on the sender's host after it is posted (while it flows) and on the receiver's
  /// host once it arrived, through the host's cores and speed factor, under every compute model.
  /// Messages between ranks of one host cost nothing. 0 (the default): communication costs no
  /// CPU. About 0.8e-9 was measured for Open MPI's TCP path on this project's emulated cluster
  /// (docs/simulation.md#the-cpu-cost-of-communication).
  double byte_cost = 0;
  /// Whether `algorithm::automatic` takes the transport's native all-reduce and reduce-scatter
  /// (a direct exchange that folds in rank order, bitwise the in-process result) over the ring
  /// and recursive doubling, in groups of at most `native_max_ranks` ranks.
  bool native_collectives = true;
  /// The largest group in which `algorithm::automatic` takes the native collectives; in a larger
  /// one it takes the ring or recursive doubling, as MPI libraries leave direct exchanges for
  /// rings and halving at such sizes. The direct exchange keeps up to 32 p flows in SimGrid's
  /// flow solver at once, which re-solves them all at every completion: its simulation cost
  /// grows as p^3 (docs/simulation.md#cost-of-simulating). `algorithm::native` ignores the limit.
  int native_max_ranks = 64;
  /// Every collective first exchanges a fingerprint of the call with the other ranks
  /// (docs/collectives.md#checked-collectives). Default: `SWITCHYARD_CHECK_COLLECTIVES`.
  bool check_collectives = check_collectives_from_environment();
};

/// @brief Bytes per second of a rate such as "1Gbps" or "125MBps"; `usage_error` for a number
/// without a unit, an unknown unit, or a rate that is not positive.
[[nodiscard]] double parse_bandwidth(std::string_view text, std::string_view what = "bandwidth");

/// @brief Seconds of a duration such as "50us" or "1.5ms"; `usage_error` for a number without a
/// unit, an unknown unit, or a negative duration.
[[nodiscard]] double parse_duration(std::string_view text, std::string_view what = "latency");

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

namespace detail {

struct unit {
  std::string_view name;
  double scale;
};

// Splits "12.5Gbps" into its number and unit and looks the unit up in `units`.
template <std::size_t N>
double parse_with_unit(std::string_view text, std::string_view what, const unit (&units)[N], std::string_view listed) {
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) != 0 || text[end] == '.' ||
                               text[end] == '-' || text[end] == '+' || text[end] == 'e' || text[end] == 'E')) {
    // An exponent's 'e' is part of the number only when a digit or a sign follows it.
    if ((text[end] == 'e' || text[end] == 'E') &&
        (end + 1 >= text.size() ||
         !(std::isdigit(static_cast<unsigned char>(text[end + 1])) != 0 || text[end + 1] == '-' || text[end + 1] == '+'))) {
      break;
    }
    ++end;
  }
  double value = 0;
  const std::string number(text.substr(0, end));
  const auto [last, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || error != std::errc() || last != number.data() + number.size() || !std::isfinite(value)) {
    switchyard::detail::raise<usage_error>(
        switchyard::detail::str(what, " '", text, "' is not a number followed by a unit (", listed, ")"));
  }
  const std::string_view suffix = text.substr(end);
  if (suffix.empty()) {
    switchyard::detail::raise<usage_error>(
        switchyard::detail::str(what, " '", text, "' has no unit: write it with one of ", listed));
  }
  for (const unit& u : units) {
    if (u.name == suffix) return value * u.scale;
  }
  switchyard::detail::raise<usage_error>(
      switchyard::detail::str(what, " '", text, "' has an unknown unit '", suffix, "': use one of ", listed));
}

}  // namespace detail

inline double parse_bandwidth(std::string_view text, std::string_view what) {
  static constexpr detail::unit units[] = {{"bps", 1.0 / 8},  {"kbps", 1e3 / 8}, {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8},
                                           {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8}, {"Bps", 1.0},      {"kBps", 1e3},
                                           {"KBps", 1e3},     {"MBps", 1e6},      {"GBps", 1e9},     {"TBps", 1e12}};
  const double rate = detail::parse_with_unit(text, what, units, "bps, kbps, Mbps, Gbps, Tbps, Bps, kBps, MBps, GBps, TBps");
  if (!(rate > 0)) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(what, " '", text, "' must be positive"));
  }
  return rate;
}

inline double parse_duration(std::string_view text, std::string_view what) {
  static constexpr detail::unit units[] = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
  const double seconds = detail::parse_with_unit(text, what, units, "s, ms, us, ns");
  if (seconds < 0) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(what, " '", text, "' must not be negative"));
  }
  return seconds;
}

}  // namespace switchyard::transport

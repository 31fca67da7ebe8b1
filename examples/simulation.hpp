// The examples' simulated cluster (--simulate HOSTS and its options): what the command line says,
// read into transport::simulated_options and checked before any data is read. Free of SimGrid,
// so that every build reads the options; runs_simulated.cpp runs them when SimGrid is found.
#pragma once

#include "json_output.hpp"
#include "startup_checks.hpp"

#include <switchyard/core/error.hpp>
#include <switchyard/transport/simulated/options.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace example {

namespace sy = switchyard;

/// --simulate HOSTS and the options that describe the simulated cluster.
struct simulation_settings {
  int hosts = 0;  ///< 0: not simulated
  std::string link = "1Gbps";
  std::string latency = "50us";
  int ranks_per_host = 1;
  std::vector<std::string> slow;  ///< HOST:FACTOR[@FROM-TO], each
  std::string platform;
  std::string compute = "measured";  ///< measured, calibrated or calibrated:SECONDS
  std::string byte_cost = "0";       ///< CPU per byte sent or received between hosts: 2.5ns/B or 2.5e-9
  std::string network = "cm02";      ///< SimGrid's network model: cm02 or lv08
  std::string precision = "1ns";     ///< SimGrid's time precision, a duration with its unit
  bool on = false;                   ///< --simulate was given
};

/// The options besides --simulate that only a simulated run reads (strategy_comparison's --slow
/// records an emulated cluster's slow host without --simulate, so it is not among them there).
inline const std::vector<std::string>& simulation_only_options(bool slow_too) {
  static const std::vector<std::string> with_slow{"--link",        "--latency",       "--ranks-per-host",
                                                  "--slow",        "--platform",      "--sim-compute",
                                                  "--sim-byte-cost", "--sim-network", "--sim-precision"};
  static const std::vector<std::string> without_slow{"--link",        "--latency",       "--ranks-per-host",
                                                     "--platform",    "--sim-compute",   "--sim-byte-cost",
                                                     "--sim-network", "--sim-precision"};
  return slow_too ? with_slow : without_slow;
}

/// --slow HOST:FACTOR[@FROM-TO]: simulated host HOST (its index, or hN as the emulated cluster
/// names it) computes at FACTOR times this machine's speed, for the whole run or from simulated
/// second FROM to TO.
inline sy::transport::host_speed parse_simulated_slow(const std::string& text) {
  const std::size_t colon = text.find(':');
  const std::size_t at = text.find('@');
  const std::string host = text.substr(0, colon);
  const std::optional<std::uint64_t> index = count_number(host.starts_with('h') ? host.substr(1) : host);
  const std::string factor_text =
      colon == std::string::npos ? "" : text.substr(colon + 1, at == std::string::npos ? std::string::npos : at - colon - 1);
  const std::optional<double> factor = finite_number(factor_text);
  sy::transport::host_speed speed;
  bool good = index && *index <= 1000000 && factor && *factor > 0.0;
  if (good && at != std::string::npos) {
    const std::string window = text.substr(at + 1);
    const std::size_t dash = window.find('-');
    const std::optional<double> from = dash == std::string::npos ? std::nullopt : finite_number(window.substr(0, dash));
    const std::optional<double> to = dash == std::string::npos ? std::nullopt : finite_number(window.substr(dash + 1));
    good = from && to && *from >= 0.0 && *to > *from;
    if (good) {
      speed.from = *from;
      speed.to = *to;
    }
  }
  if (!good) {
    throw sy::usage_error(fmt::format(
        "--slow takes HOST:FACTOR[@FROM-TO], a simulated host (0, 1, ... or h0, h1, ...), its speed factor above 0 and "
        "optionally the simulated seconds 0 <= FROM < TO it runs at that speed, such as 1:0.25 or h1:0.25@10-40, got "
        "'{}'",
        text));
  }
  speed.host = static_cast<int>(*index);
  speed.factor = *factor;
  return speed;
}

/// --sim-compute measured | calibrated | calibrated:SECONDS: the seconds of a calibrated step, or
/// nothing for measured compute; 0 for a calibration still to make.
inline std::optional<double> parse_sim_compute(const std::string& text) {
  if (text == "measured") return std::nullopt;
  if (text == "calibrated") return 0.0;
  if (text.starts_with("calibrated:")) {
    const std::optional<double> seconds = finite_number(text.substr(std::string_view("calibrated:").size()));
    if (seconds && *seconds > 0.0) return seconds;
  }
  throw sy::usage_error(fmt::format(
      "expected measured, calibrated or calibrated:SECONDS (the cost of a step, above 0), got '{}'", text));
}

/// --sim-byte-cost TIME/B or SECONDS: the CPU seconds per byte of a message between hosts, such as
/// 2.5ns/B (a duration with its unit, per byte) or 2.5e-9 (seconds).
inline double parse_byte_cost(const std::string& text) {
  if (text.ends_with("/B")) return sy::transport::parse_duration(text.substr(0, text.size() - 2), "--sim-byte-cost");
  const std::optional<double> seconds = finite_number(text);
  if (!seconds || *seconds < 0.0) {
    throw sy::usage_error(fmt::format(
        "--sim-byte-cost takes the CPU time per byte, not negative: a duration per byte such as 2.5ns/B or seconds "
        "such as 2.5e-9, got '{}'",
        text));
  }
  return *seconds;
}

inline void add_simulation_options(CLI::App& app, simulation_settings& s, bool slow_too) {
  app.add_option("--simulate", s.hosts,
                 "Run the ranks on a simulated cluster of HOSTS hosts (SimGrid: transport::simulated), one star "
                 "switch; the summary's simulated_seconds is its time");
  app.add_option("--link", s.link, "With --simulate: each host's link bandwidth, with a unit (bps ... Gbps, Bps ... GBps)")
      ->capture_default_str();
  app.add_option("--latency", s.latency, "With --simulate: each link's latency, with a unit (s, ms, us, ns)")
      ->capture_default_str();
  app.add_option("--ranks-per-host", s.ranks_per_host,
                 "With --simulate: ranks on each host, as many cores (ranks = HOSTS x this)")
      ->capture_default_str();
  if (slow_too) {
    app.add_option("--slow", s.slow,
                   "With --simulate: HOST:FACTOR[@FROM-TO]: simulated host HOST computes at FACTOR times the speed of "
                   "this machine, for the whole run or from simulated second FROM to TO; may be repeated")
        ->check(parsed_by(parse_simulated_slow, "HOST:FACTOR[@FROM-TO]"));
  }
  app.add_option("--platform", s.platform,
                 "With --simulate: a SimGrid platform XML file instead of the star (--simulate HOSTS must match its "
                 "hosts)");
  app.add_option("--sim-compute", s.compute,
                 "With --simulate: measured (a rank's CPU time between two messages), calibrated (each step costs what "
                 "a step took before the run; repeatable to the bit) or calibrated:SECONDS")
      ->check(parsed_by(parse_sim_compute, "MODE"))
      ->capture_default_str();
  app.add_option("--sim-byte-cost", s.byte_cost,
                 "With --simulate: CPU time per byte that a message between two hosts costs its sender and its "
                 "receiver, on their hosts (2.5ns/B, or seconds per byte); 0: communication costs no CPU")
      ->check(parsed_by(parse_byte_cost, "TIME/B"))
      ->capture_default_str();
  app.add_option("--sim-network", s.network, "With --simulate: SimGrid's network model (docs/simulation.md)")
      ->check(CLI::IsMember({"cm02", "lv08"}))
      ->capture_default_str();
  app.add_option("--sim-precision", s.precision,
                 "With --simulate: SimGrid's time precision, with a unit (s, ms, us, ns): events within it of the "
                 "earliest happen with it, which simulates crowded all-to-all traffic faster (docs/simulation.md); "
                 "at most --latency and the hosts' loopback latency, 1us")
      ->capture_default_str();
}

/// Notes whether --simulate was given; refuses the simulation's options without it, and --ranks
/// with it.
inline void read_simulation_flags(const CLI::App& app, simulation_settings& s, bool slow_too) {
  s.on = app.count("--simulate") != 0;
  if (!s.on) {
    for (const std::string& option : simulation_only_options(slow_too)) {
      if (app.count(option) != 0) throw sy::usage_error(fmt::format("{} describes a simulated cluster: it needs --simulate HOSTS", option));
    }
    return;
  }
  if (app.count("--ranks") != 0) {
    throw sy::usage_error(fmt::format("--ranks counts in-process ranks; with --simulate the ranks are HOSTS x "
                                      "--ranks-per-host ({} x {})",
                                      s.hosts, s.ranks_per_host));
  }
  if (!s.platform.empty() && (app.count("--link") != 0 || app.count("--latency") != 0)) {
    throw sy::usage_error("--link and --latency describe the simulated star; a --platform file gives its own links");
  }
}

/// The simulated cluster of `s` (--simulate given), checked as far as it can be before SimGrid
/// starts: hosts, rates, latencies, ranks per host and slow hosts.
inline sy::transport::simulated_options simulation_options(const simulation_settings& s) {
  sy::transport::simulated_options o;
  if (s.hosts < 1) throw sy::usage_error(fmt::format("--simulate needs at least 1 host, got {}", s.hosts));
  if (s.ranks_per_host < 1) {
    throw sy::usage_error(fmt::format("--ranks-per-host needs at least 1 rank, got {}", s.ranks_per_host));
  }
  o.platform.hosts = s.hosts;
  o.platform.cores = s.ranks_per_host;
  o.ranks_per_host = s.ranks_per_host;
  o.platform.file = s.platform;
  if (s.platform.empty()) {
    o.platform.bandwidth = s.link;
    o.platform.latency = s.latency;
    (void)sy::transport::parse_bandwidth(s.link, "--link");
    (void)sy::transport::parse_duration(s.latency, "--latency");
  }
  for (const std::string& text : s.slow) {
    const sy::transport::host_speed speed = parse_simulated_slow(text);
    if (!s.platform.empty()) {
      throw sy::usage_error(fmt::format("--slow {}: a --platform file gives its hosts their speeds", text));
    }
    if (speed.host >= s.hosts) {
      throw sy::usage_error(fmt::format("--slow {} names host {}, but the simulated cluster has hosts 0 to {}", text,
                                        speed.host, s.hosts - 1));
    }
    o.platform.speeds.push_back(speed);
  }
  o.byte_cost = parse_byte_cost(s.byte_cost);
  o.time_precision = s.precision;
  const double precision = sy::transport::parse_duration(s.precision, "--sim-precision");
  if (!(precision > 0)) throw sy::usage_error(fmt::format("--sim-precision must be above 0, got '{}'", s.precision));
  if (s.platform.empty()) {
    const auto check_resolved = [&](const std::string& latency, const std::string& what) {
      if (precision > sy::transport::parse_duration(latency, what)) {
        throw sy::usage_error(fmt::format("--sim-precision {} is coarser than {} {}, which SimGrid could then not "
                                          "resolve",
                                          s.precision, what, latency));
      }
    };
    check_resolved(s.latency, "--latency");
    check_resolved(o.platform.loopback_latency, "the hosts' loopback latency");
  }
  o.network = s.network == "lv08" ? sy::transport::network_model::lv08 : sy::transport::network_model::cm02;
  o.compute = parse_sim_compute(s.compute) ? sy::transport::compute_model::calibrated
                                           : sy::transport::compute_model::measured;
  return o;
}

/// The simulated cluster as the summaries record it, or null without --simulate: {"hosts": 16,
/// "ranks_per_host": 1, "link": "1Gbps", "latency": "50us", "platform": null, "slow": [{"host": 1,
/// "factor": 0.25, "from_seconds": 10, "to_seconds": 40}], "compute": "calibrated", "byte_cost": 0, "network": "cm02",
/// "time_precision": "1ns", "step_seconds": 0.0021}.
inline json simulation_json(const simulation_settings& s, double step_seconds) {
  if (!s.on) return nullptr;
  json slow = json::array();
  for (const std::string& text : s.slow) {
    const sy::transport::host_speed speed = parse_simulated_slow(text);
    json host = {{"host", speed.host}, {"factor", speed.factor}};
    if (!speed.whole_run()) host.update(json{{"from_seconds", speed.from}, {"to_seconds", speed.to}});
    slow.push_back(std::move(host));
  }
  const bool star = s.platform.empty();
  return {{"hosts", s.hosts},
          {"ranks_per_host", s.ranks_per_host},
          {"link", star ? json(s.link) : json(nullptr)},
          {"latency", star ? json(s.latency) : json(nullptr)},
          {"platform", star ? json(nullptr) : json(s.platform)},
          {"slow", std::move(slow)},
          {"compute", step_seconds > 0 ? "calibrated" : "measured"},
          {"byte_cost", parse_byte_cost(s.byte_cost)},
          {"network", s.network},
          {"time_precision", s.precision},
          {"step_seconds", step_seconds > 0 ? json(step_seconds) : json(nullptr)}};
}

}  // namespace example

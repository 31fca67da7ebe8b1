// What the Fashion-MNIST examples write about a run besides its epochs: the training totals, the
// time it took to reach each accuracy threshold, and the hosts an emulated cluster slowed down (for
// the whole run or a window of it). Free of models and transports, so that
// tests/examples/run_summary.cpp tests it alone.
#pragma once

#include "json_output.hpp"
#include "startup_checks.hpp"

#include <switchyard/core/error.hpp>
#include <switchyard/core/history.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace example {

namespace sy = switchyard;

/// The training steps of a run summed over its epochs: the time (each epoch's slowest rank) and
/// the samples, the bytes sent, and the workers' time breakdown in seconds per worker (`epoch_record`'s fields).
struct training_totals {
  double train_seconds = 0;
  std::size_t samples = 0;
  std::uint64_t bytes_sent = 0;  ///< by all ranks
  double compute_seconds = 0;
  double slowest_compute_seconds = 0;
  double exchange_seconds = 0;
  double least_exchange_seconds = 0;

  [[nodiscard]] double samples_per_second() const {
    return train_seconds > 0 ? static_cast<double>(samples) / train_seconds : 0.0;
  }
};

inline training_totals totals(const sy::train::history& h) {
  training_totals t;
  for (const auto& e : h.epochs) {
    t.train_seconds += e.train_seconds;
    t.samples += e.samples;
    t.bytes_sent += e.bytes_sent;
    t.compute_seconds += e.compute_seconds;
    t.slowest_compute_seconds += e.slowest_compute_seconds;
    t.exchange_seconds += e.exchange_seconds;
    t.least_exchange_seconds += e.least_exchange_seconds;
  }
  return t;
}

/// The breakdown of `totals` as a JSON object, in seconds per worker over the run:
/// {"compute": 41.2, "slowest_compute": 80.5, "exchange": 60.1, "least_exchange": 21.3}.
inline json breakdown_json(const training_totals& t) {
  return {{"compute", rounded(t.compute_seconds, 3)},
          {"slowest_compute", rounded(t.slowest_compute_seconds, 3)},
          {"exchange", rounded(t.exchange_seconds, 3)},
          {"least_exchange", rounded(t.least_exchange_seconds, 3)}};
}

/// For each threshold, the wall time at the end of the first epoch whose test accuracy reached
/// it, or nothing if no epoch did.
inline std::vector<std::optional<double>> time_to_accuracy(const sy::train::history& h,
                                                           std::span<const double> thresholds) {
  std::vector<std::optional<double>> times;
  times.reserve(thresholds.size());
  for (const double threshold : thresholds) {
    const auto reached = std::find_if(h.epochs.begin(), h.epochs.end(),
                                      [&](const sy::train::epoch_record& e) { return e.test_accuracy >= threshold; });
    times.push_back(reached == h.epochs.end() ? std::nullopt : std::optional<double>(reached->wall_seconds));
  }
  return times;
}

/// `time_to_accuracy` as a JSON object keyed by the thresholds: {"0.85": 7.312, "0.88": null}.
inline json time_to_accuracy_json(std::span<const double> thresholds, std::span<const std::optional<double>> times) {
  json reached = json::object();
  for (std::size_t k = 0; k < thresholds.size(); ++k) {
    reached[fmt::format("{}", thresholds[k])] = times[k] ? json(rounded(*times[k], 3)) : json(nullptr);
  }
  return reached;
}

namespace detail {

// A host name as the summaries write it: not empty, without colons, quotes, backslashes or spaces.
inline bool host_name(const std::string& text) {
  return !text.empty() && std::none_of(text.begin(), text.end(), [](char ch) {
    return ch == ':' || ch == '"' || ch == '\\' || std::isspace(static_cast<unsigned char>(ch)) != 0;
  });
}

}  // namespace detail

/// --thresholds 0.85,0.88,0.89: test accuracies in (0, 1], each listed once.
inline std::vector<double> parse_thresholds(const std::string& text) {
  std::vector<double> thresholds;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::optional<double> value = finite_number(item);
    if (!value || *value <= 0.0 || *value > 1.0) {
      throw sy::usage_error(fmt::format(
          "--thresholds takes test accuracies in (0, 1] separated by commas, such as 0.85,0.88,0.89: '{}' in '{}' "
          "is not one",
          item, text));
    }
    if (std::find(thresholds.begin(), thresholds.end(), *value) != thresholds.end()) {
      throw sy::usage_error(fmt::format("--thresholds lists {} twice in '{}'", *value, text));
    }
    thresholds.push_back(*value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return thresholds;
}

/// --slow HOST:SHARE: the host of an emulated cluster (examples/cluster/emulate) that ran at
/// SHARE cores. The examples only record it: the emulator applies the share.
struct slow_host {
  std::string host;
  double share = 0;
};

inline slow_host parse_slow_host(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  const std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  // Not a number counts as 0, which is refused.
  const double share = colon == std::string::npos ? 0.0 : finite_number(text.substr(colon + 1)).value_or(0.0);
  if (!detail::host_name(host) || share <= 0.0) {
    throw sy::usage_error(fmt::format(
        "--slow takes HOST:SHARE, a host name and its positive share of a core, such as h1:0.17, got '{}'", text));
  }
  return {host, share};
}

/// Every --slow, each host once.
inline std::vector<slow_host> parse_slow_hosts(const std::vector<std::string>& texts) {
  std::vector<slow_host> hosts;
  for (const std::string& text : texts) {
    slow_host slow = parse_slow_host(text);
    if (std::any_of(hosts.begin(), hosts.end(), [&](const slow_host& h) { return h.host == slow.host; })) {
      throw sy::usage_error(fmt::format("--slow names {} twice", slow.host));
    }
    hosts.push_back(std::move(slow));
  }
  return hosts;
}

/// The slow hosts as a JSON list: [{"host": "h1", "share": 0.17}].
inline json slow_hosts_json(std::span<const slow_host> hosts) {
  json list = json::array();
  for (const slow_host& h : hosts) list.push_back({{"host", h.host}, {"share", h.share}});
  return list;
}

/// --slow-during HOST:SHARE:A:B: the host of an emulated cluster that ran at SHARE cores from
/// second A to second B of each strategy's run (examples/cluster/run_experiment.sh schedules it
/// with `emulate share`), and at its usual share before and after. Recorded only, like --slow.
struct slow_window {
  std::string host;
  double share = 0;
  double from_seconds = 0;
  double to_seconds = 0;
};

/// Refuses a malformed window, and a host that `slow` makes slow for the whole run.
inline slow_window parse_slow_window(const std::string& text, std::span<const slow_host> slow) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  std::optional<double> share;
  std::optional<double> from;
  std::optional<double> to;
  if (parts.size() == 4) {
    share = finite_number(parts[1]);
    from = finite_number(parts[2]);
    to = finite_number(parts[3]);
  }
  if (parts.size() != 4 || !detail::host_name(parts[0]) || !share || *share <= 0.0 || !from || !to || *from < 0.0 ||
      *from >= *to) {
    throw sy::usage_error(fmt::format(
        "--slow-during takes HOST:SHARE:A:B, a host name, its positive share of a core and the seconds 0 <= A < B "
        "of each run it had that share, such as h1:0.17:10:40, got '{}'",
        text));
  }
  if (std::any_of(slow.begin(), slow.end(), [&](const slow_host& h) { return h.host == parts[0]; })) {
    throw sy::usage_error(fmt::format(
        "--slow and --slow-during both name {}: a host is slow for the whole run or for a window, not both", parts[0]));
  }
  return {parts[0], *share, *from, *to};
}

/// The window as a JSON object, or null without one:
/// {"host": "h1", "share": 0.17, "from_seconds": 10, "to_seconds": 40}.
inline json slow_window_json(const std::optional<slow_window>& window) {
  if (!window) return nullptr;
  return {{"host", window->host},
          {"share", window->share},
          {"from_seconds", window->from_seconds},
          {"to_seconds", window->to_seconds}};
}

}  // namespace example

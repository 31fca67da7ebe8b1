// examples/run_summary.hpp: the time to each accuracy threshold, the training totals, the
// parsing of --thresholds, --slow and --slow-during, with their refusals, and their JSON; the
// number checks of examples/startup_checks.hpp.
#include "run_summary.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace {

using example::parse_slow_host;
using example::parse_slow_hosts;
using example::parse_thresholds;
using example::time_to_accuracy;

switchyard::train::history epochs_reaching(const std::vector<double>& accuracies) {
  switchyard::train::history h;
  for (std::size_t k = 0; k < accuracies.size(); ++k) {
    switchyard::train::epoch_record e;
    e.epoch = k + 1;
    e.test_accuracy = accuracies[k];
    e.wall_seconds = 10.0 * static_cast<double>(k + 1);
    e.train_seconds = 8.0;
    e.samples = 60000;
    h.epochs.push_back(e);
  }
  return h;
}

std::string message_of(auto&& call) {
  try {
    call();
  } catch (const switchyard::usage_error& e) {
    return e.what();
  }
  return "(no usage_error)";
}

}  // namespace

TEST_CASE("examples.time_to_accuracy.first_epoch_reaching_each") {
  // Accuracy falls back below 0.85 after epoch 2: the first epoch that reached it counts.
  const auto h = epochs_reaching({0.80, 0.86, 0.84, 0.885, 0.89});
  const std::vector<double> thresholds{0.85, 0.88, 0.89, 0.95};
  const auto times = time_to_accuracy(h, thresholds);
  REQUIRE(times.size() == 4);
  CHECK(times[0] == std::optional<double>(20.0));
  CHECK(times[1] == std::optional<double>(40.0));
  CHECK(times[2] == std::optional<double>(50.0));  // reached exactly
  CHECK_FALSE(times[3].has_value());
  CHECK(example::time_to_accuracy_json(thresholds, times).dump() ==
        R"({"0.85":20.0,"0.88":40.0,"0.89":50.0,"0.95":null})");
}

TEST_CASE("examples.time_to_accuracy.empty") {
  const std::vector<double> thresholds{0.5};
  CHECK_FALSE(time_to_accuracy(epochs_reaching({}), thresholds).front().has_value());
  CHECK(time_to_accuracy(epochs_reaching({0.9}), std::vector<double>{}).empty());
  CHECK(example::time_to_accuracy_json({}, {}).dump() == "{}");
}

TEST_CASE("examples.training_totals") {
  const example::training_totals t = example::totals(epochs_reaching({0.5, 0.6}));
  CHECK(t.train_seconds == doctest::Approx(16.0));
  CHECK(t.samples == 120000);
  CHECK(t.samples_per_second() == doctest::Approx(7500.0));
  CHECK(example::totals(epochs_reaching({})).samples_per_second() == 0.0);
}

TEST_CASE("examples.parse_thresholds") {
  CHECK(parse_thresholds("0.85,0.88,0.89") == std::vector<double>{0.85, 0.88, 0.89});
  CHECK(parse_thresholds("1") == std::vector<double>{1.0});
  for (const std::string bad : {"0", "1.01", "-0.5", "0.85,,0.9", "", "0.85,", "x", "0.8x", "nan", "inf"}) {
    CAPTURE(bad);
    const std::string message = message_of([&] { parse_thresholds(bad); });
    CHECK(message.find("--thresholds takes test accuracies in (0, 1]") != std::string::npos);
    CHECK(message.find("'" + bad + "'") != std::string::npos);
  }
  CHECK(message_of([] { parse_thresholds("0.9,1.5"); }).find("'1.5' in '0.9,1.5'") != std::string::npos);
  CHECK(message_of([] { parse_thresholds("0.9,0.90"); }).find("lists 0.9 twice") != std::string::npos);
}

TEST_CASE("examples.parse_slow_host") {
  const example::slow_host s = parse_slow_host("h1:0.17");
  CHECK(s.host == "h1");
  CHECK(s.share == doctest::Approx(0.17));
  CHECK(parse_slow_host("node-7.example.org:2").share == doctest::Approx(2.0));
  for (const std::string bad : {"h1", "h1:", ":0.17", "h1:0", "h1:-1", "h1:x", "h1:0.17x", "h 1:0.5", "h1:nan"}) {
    CAPTURE(bad);
    const std::string message = message_of([&] { parse_slow_host(bad); });
    CHECK(message.find("--slow takes HOST:SHARE") != std::string::npos);
    CHECK(message.find("got '" + bad + "'") != std::string::npos);
  }
  CHECK(parse_slow_hosts({"h1:0.17", "h3:0.25"}).size() == 2);
  CHECK(message_of([] { parse_slow_hosts({"h1:0.17", "h1:0.25"}); }).find("names h1 twice") != std::string::npos);
  CHECK(example::slow_hosts_json(parse_slow_hosts({"h1:0.17"})).dump() == R"([{"host":"h1","share":0.17}])");
  CHECK(example::slow_hosts_json({}).dump() == "[]");
}

TEST_CASE("examples.parse_slow_window") {
  const example::slow_window w = example::parse_slow_window("h1:0.17:10:40", {});
  CHECK(w.host == "h1");
  CHECK(w.share == doctest::Approx(0.17));
  CHECK(w.from_seconds == doctest::Approx(10.0));
  CHECK(w.to_seconds == doctest::Approx(40.0));
  CHECK(example::parse_slow_window("h0:0.3:0:1.5", {}).to_seconds == doctest::Approx(1.5));
  CHECK(example::slow_window_json(w).dump() ==
        R"({"host":"h1","share":0.17,"from_seconds":10.0,"to_seconds":40.0})");
  CHECK(example::slow_window_json(std::nullopt).dump() == "null");
  for (const std::string bad : {"h1:0.17:10", "h1:0.17:10:40:50", ":0.17:10:40", "h1:0:10:40", "h1:x:10:40",
                                "h1:0.17:-1:40", "h1:0.17:40:40", "h1:0.17:40:10", "h1:0.17:10:y", "h 1:0.17:10:40"}) {
    CAPTURE(bad);
    const std::string message = message_of([&] { example::parse_slow_window(bad, {}); });
    CHECK(message.find("--slow-during takes HOST:SHARE:A:B") != std::string::npos);
    CHECK(message.find("got '" + bad + "'") != std::string::npos);
  }
  // A host slow for the whole run cannot also be slow for a window.
  const std::vector<example::slow_host> slow = parse_slow_hosts({"h1:0.17"});
  const std::string both = message_of([&] { example::parse_slow_window("h1:0.1:10:40", slow); });
  CHECK(both.find("--slow and --slow-during both name h1") != std::string::npos);
  CHECK(example::parse_slow_window("h2:0.1:10:40", slow).host == "h2");
}

TEST_CASE("examples.option_checks.numbers") {
  CHECK(example::finite_number("0.25") == std::optional<double>(0.25));
  CHECK(example::finite_number("-1") == std::optional<double>(-1.0));
  for (const std::string bad : {"nan", "inf", "-inf", "", "1x", "x"}) CHECK_FALSE(example::finite_number(bad));
  CHECK(example::count_number("12") == std::optional<std::uint64_t>(12));
  for (const std::string bad : {"-1", "+1", "1.5", "", " 1", "1234567890123456789"}) {
    CHECK_FALSE(example::count_number(bad));
  }
  // CLI11's Range lets NaN through; finite_range does not.
  std::string nan = "nan";
  CHECK_FALSE(example::finite_range(0.0, 1.0)(nan).empty());
  std::string half = "0.5";
  CHECK(example::finite_range(0.0, 1.0)(half).empty());
  std::string zero = "0";
  CHECK(example::finite_positive()(zero) == "expected a finite number above 0, got '0'");
}

TEST_CASE("examples.json_output.figures") {
  CHECK(example::rounded(12.3456, 3) == 12.346);
  const example::json record{{"accuracy", example::rounded(std::nan(""), 3)}, {"label", "a \"b\""}};
  CHECK(record.dump() == R"({"accuracy":null,"label":"a \"b\""})");
  CHECK(example::breakdown_json(example::totals(epochs_reaching({0.5}))).dump() ==
        R"({"compute":0.0,"slowest_compute":0.0,"exchange":0.0,"least_exchange":0.0})");
}

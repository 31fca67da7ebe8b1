#include <switchyard/train/epoch_log.hpp>

#include <doctest/doctest.h>
#if __has_include(<nlohmann/json.hpp>)
#include <nlohmann/json.hpp>
#endif

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace sy = switchyard;

namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

sy::train::epoch_record sample() {
  sy::train::epoch_record e;
  e.epoch = 3;
  e.stage = "allreduce";
  e.train_loss = 0.25;
  e.test_accuracy = 0.875;
  e.samples = 60000;
  e.bytes_sent = 1234567;
  e.compute_seconds = 1.5;
  e.slowest_compute_seconds = 2.25;
  e.exchange_seconds = 0.75;
  e.least_exchange_seconds = 0.125;
  e.median_step_compute_seconds = 0.0125;
  e.slowest_step_compute_seconds = 0.05;
  return e;
}

}  // namespace

TEST_CASE("epoch_log.csv: a header, then one flushed line per epoch") {
  const auto path = std::filesystem::temp_directory_path() / "switchyard_epoch_log_test.csv";
  {
    sy::train::epoch_log log{path};
    log.write(sample());
    // Flushed at once: a run that dies keeps what it logged.
    CHECK(read(path).find("\n3,allreduce,0.250000,") != std::string::npos);
  }
  const std::string text = read(path);
  CHECK(text.rfind("epoch,stage,train_loss,test_loss,test_accuracy,", 0) == 0);
  CHECK(text.find(",60000,") != std::string::npos);
  CHECK(text.find(",1234567,1.500,2.250,0.750,0.125,0.012500,0.050000,\n") != std::string::npos);
  CHECK(text.find(",bytes_sent,compute_seconds,slowest_compute_seconds,exchange_seconds,least_exchange_seconds,"
                  "median_step_compute_seconds,slowest_step_compute_seconds,switches\n") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("epoch_log.jsonl: one JSON object per line") {
  const auto path = std::filesystem::temp_directory_path() / "switchyard_epoch_log_test.jsonl";
  {
    sy::train::epoch_log log{path};
    log.write(sample());
    log.write(sample());
  }
  const std::string text = read(path);
  CHECK(text.rfind("{\"epoch\": 3, \"stage\": \"allreduce\", \"train_loss\": 0.250000,", 0) == 0);
  CHECK(text.find("\"test_accuracy\": 0.875000") != std::string::npos);
  CHECK(text.find("\"compute_seconds\": 1.500, \"slowest_compute_seconds\": 2.250, \"exchange_seconds\": 0.750, "
                  "\"least_exchange_seconds\": 0.125, \"median_step_compute_seconds\": 0.012500, "
                  "\"slowest_step_compute_seconds\": 0.050000, \"switches\": []}\n") != std::string::npos);
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  CHECK(lines == 2);
  std::filesystem::remove(path);
}

TEST_CASE("epoch_log.switches: each line carries the switches made since the last, with their reasons") {
  const std::vector<std::string> switches{"in epoch 3 after batch 120 to ps: straggler ratio 2.87 > 1.5 for 3 samples",
                                          "after epoch 3 to allreduce: a \"quoted\" reason, with a comma"};
  sy::train::epoch_record e = sample();
  e.stage = "allreduce>ps";
  const auto csv = std::filesystem::temp_directory_path() / "switchyard_epoch_log_switches.csv";
  const auto jsonl = std::filesystem::temp_directory_path() / "switchyard_epoch_log_switches.jsonl";
  {
    sy::train::epoch_log log{csv};
    log.write(e, switches);
    log.write(sample());
    sy::train::epoch_log json{jsonl};
    json.write(e, switches);
  }
  // CSV: one field, the switches joined by "; ", quoted since it holds a comma, its quotes doubled.
  const std::string text = read(csv);
  CHECK(text.find("\n3,allreduce>ps,0.250000,") != std::string::npos);
  CHECK(text.find(",0.050000,\"in epoch 3 after batch 120 to ps: straggler ratio 2.87 > 1.5 for 3 samples; after "
                  "epoch 3 to allreduce: a \"\"quoted\"\" reason, with a comma\"\n") != std::string::npos);
  CHECK(text.ends_with(",0.050000,\n"));  // no switch in the second epoch: an empty field
  // JSON lines: an array of strings, escaped.
  const std::string json = read(jsonl);
  CHECK(std::count(json.begin(), json.end(), '\n') == 1);
  CHECK(json.find("\"stage\": \"allreduce>ps\"") != std::string::npos);
  CHECK(json.ends_with(
      "\"switches\": [\"in epoch 3 after batch 120 to ps: straggler ratio 2.87 > 1.5 for 3 samples\", \"after epoch 3 "
      "to allreduce: a \\\"quoted\\\" reason, with a comma\"]}\n"));
  std::filesystem::remove(csv);
  std::filesystem::remove(jsonl);
}

TEST_CASE("epoch_log.errors: an unwritable path names itself") {
  CHECK_THROWS_WITH_AS(sy::train::epoch_log{"/nonexistent-dir/run.csv"}, doctest::Contains("/nonexistent-dir/run.csv"),
                       sy::usage_error);
}

TEST_CASE("epoch_log.jsonl: a NaN figure is null, and names with quotes stay valid JSON") {
  sy::train::epoch_record e = sample();
  e.train_loss = std::numeric_limits<double>::quiet_NaN();
  e.test_loss = std::numeric_limits<double>::infinity();
  e.stage = "my \"ps\"\\v2\n";
  const std::vector<std::string> switches{"to \"allreduce\": ratio\t1.2"};
  const auto path = std::filesystem::temp_directory_path() / "switchyard_epoch_log_nan.jsonl";
  {
    sy::train::epoch_log log{path};
    log.write(e, switches);
  }
  const std::string text = read(path);
  CHECK(text.find("\"train_loss\": null, \"test_loss\": null, \"test_accuracy\": 0.875000") != std::string::npos);
  CHECK(text.find("\"stage\": \"my \\\"ps\\\"\\\\v2\\u000a\"") != std::string::npos);
  CHECK(text.find("nan") == std::string::npos);
  CHECK(text.find("inf") == std::string::npos);
#if __has_include(<nlohmann/json.hpp>)
  const nlohmann::json line = nlohmann::json::parse(text);
  CHECK(line["train_loss"].is_null());
  CHECK(line["test_loss"].is_null());
  CHECK(line["test_accuracy"].get<double>() == doctest::Approx(0.875));
  CHECK(line["stage"].get<std::string>() == e.stage);
  CHECK(line["switches"][0].get<std::string>() == switches[0]);
#endif
  std::filesystem::remove(path);
}

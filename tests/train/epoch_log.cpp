#include <switchyard/train/epoch_log.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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
  CHECK(text.find(",1234567,1.500,2.250,0.750,0.125\n") != std::string::npos);
  CHECK(text.find(",bytes_sent,compute_seconds,slowest_compute_seconds,exchange_seconds,least_exchange_seconds\n") !=
        std::string::npos);
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
                  "\"least_exchange_seconds\": 0.125}\n") != std::string::npos);
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  CHECK(lines == 2);
  std::filesystem::remove(path);
}

TEST_CASE("epoch_log.errors: an unwritable path names itself") {
  CHECK_THROWS_WITH_AS(sy::train::epoch_log{"/nonexistent-dir/run.csv"}, doctest::Contains("/nonexistent-dir/run.csv"),
                       sy::usage_error);
}

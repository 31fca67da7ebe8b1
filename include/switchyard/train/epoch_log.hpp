// A per-epoch log file for plotting and comparing runs: CSV, or JSON lines, one record per epoch.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/history.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace switchyard::train {

/// @brief Writes epoch records to a file as they come: CSV when the name ends in `.csv`, else
/// JSON lines. Each line is flushed, so a run that dies leaves every finished epoch on disk.
/// @code
/// switchyard::train::epoch_log log{"run.csv"};
/// trainer.on_epoch([&](const switchyard::train::epoch_record& e) { log.write(e); });
/// @endcode
class epoch_log {
 public:
  explicit epoch_log(const std::filesystem::path& path)
      : csv_(path.extension() == ".csv"), out_(path, std::ios::trunc) {
    if (!out_) {
      detail::raise<usage_error>(detail::str("cannot open the log file ", path.string(), " for writing"));
    }
    if (csv_) {
      out_ << "epoch,stage,train_loss,test_loss,test_accuracy,wall_seconds,train_seconds,samples,"
              "samples_per_second,bytes_sent,compute_seconds,slowest_compute_seconds,exchange_seconds,"
              "least_exchange_seconds\n";
    }
  }

  void write(const epoch_record& e) {
    char line[512];
    if (csv_) {
      std::snprintf(line, sizeof line, "%zu,%s,%.6f,%.6f,%.6f,%.3f,%.3f,%zu,%.1f,%llu,%.3f,%.3f,%.3f,%.3f\n", e.epoch,
                    e.stage.c_str(), e.train_loss, e.test_loss, e.test_accuracy, e.wall_seconds, e.train_seconds,
                    e.samples, e.samples_per_second, static_cast<unsigned long long>(e.bytes_sent), e.compute_seconds,
                    e.slowest_compute_seconds, e.exchange_seconds, e.least_exchange_seconds);
    } else {
      std::snprintf(line, sizeof line,
                    "{\"epoch\": %zu, \"stage\": \"%s\", \"train_loss\": %.6f, \"test_loss\": %.6f, "
                    "\"test_accuracy\": %.6f, \"wall_seconds\": %.3f, \"train_seconds\": %.3f, \"samples\": %zu, "
                    "\"samples_per_second\": %.1f, \"bytes_sent\": %llu, \"compute_seconds\": %.3f, "
                    "\"slowest_compute_seconds\": %.3f, \"exchange_seconds\": %.3f, \"least_exchange_seconds\": %.3f}\n",
                    e.epoch, e.stage.c_str(), e.train_loss, e.test_loss, e.test_accuracy, e.wall_seconds,
                    e.train_seconds, e.samples, e.samples_per_second, static_cast<unsigned long long>(e.bytes_sent),
                    e.compute_seconds, e.slowest_compute_seconds, e.exchange_seconds, e.least_exchange_seconds);
    }
    out_ << line << std::flush;
  }

 private:
  bool csv_;
  std::ofstream out_;
};

}  // namespace switchyard::train

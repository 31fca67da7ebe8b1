// A per-epoch log file for plotting and comparing runs: CSV, or JSON lines, one record per epoch.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/history.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>

namespace switchyard::train {

/// @brief Writes epoch records to a file as they come: CSV when the name ends in `.csv`, else
/// JSON lines. Each line is flushed, so a run that dies leaves every finished epoch on disk.
///
/// Beside the record, a line can carry the strategy switches made since the last line, each
/// described in one sentence with its reason and figures (the `switches` column, joined by "; ",
/// or a JSON array): an `alternate`'s `switches()`, as `examples/fashion_mnist` logs them.
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
              "least_exchange_seconds,median_step_compute_seconds,slowest_step_compute_seconds,switches\n";
    }
  }

  void write(const epoch_record& e, std::span<const std::string> switches = {}) {
    char figures[512];
    if (csv_) {
      std::snprintf(figures, sizeof figures, "%.6f,%.6f,%.6f,%.3f,%.3f,%zu,%.1f,%llu,%.3f,%.3f,%.3f,%.3f,%.6f,%.6f",
                    e.train_loss, e.test_loss, e.test_accuracy, e.wall_seconds, e.train_seconds, e.samples,
                    e.samples_per_second, static_cast<unsigned long long>(e.bytes_sent), e.compute_seconds,
                    e.slowest_compute_seconds, e.exchange_seconds, e.least_exchange_seconds,
                    e.median_step_compute_seconds, e.slowest_step_compute_seconds);
      std::string joined;
      for (const std::string& s : switches) {
        if (!joined.empty()) joined += "; ";
        joined += s;
      }
      out_ << e.epoch << ',' << csv_field(e.stage) << ',' << figures << ',' << csv_field(joined) << '\n' << std::flush;
    } else {
      // A NaN or infinite figure (a diverged loss) is null: JSON has no word for it.
      out_ << "{\"epoch\": " << e.epoch << ", \"stage\": " << json_string(e.stage)
           << ", \"train_loss\": " << json_number(e.train_loss, 6) << ", \"test_loss\": " << json_number(e.test_loss, 6)
           << ", \"test_accuracy\": " << json_number(e.test_accuracy, 6)
           << ", \"wall_seconds\": " << json_number(e.wall_seconds, 3)
           << ", \"train_seconds\": " << json_number(e.train_seconds, 3) << ", \"samples\": " << e.samples
           << ", \"samples_per_second\": " << json_number(e.samples_per_second, 1) << ", \"bytes_sent\": " << e.bytes_sent
           << ", \"compute_seconds\": " << json_number(e.compute_seconds, 3)
           << ", \"slowest_compute_seconds\": " << json_number(e.slowest_compute_seconds, 3)
           << ", \"exchange_seconds\": " << json_number(e.exchange_seconds, 3)
           << ", \"least_exchange_seconds\": " << json_number(e.least_exchange_seconds, 3)
           << ", \"median_step_compute_seconds\": " << json_number(e.median_step_compute_seconds, 6)
           << ", \"slowest_step_compute_seconds\": " << json_number(e.slowest_step_compute_seconds, 6)
           << ", \"switches\": [";
      for (std::size_t i = 0; i < switches.size(); ++i) out_ << (i == 0 ? "" : ", ") << json_string(switches[i]);
      out_ << "]}\n" << std::flush;
    }
  }

 private:
  // A CSV field: quoted, with its quotes doubled, when it holds a comma, a quote or a line break.
  static std::string csv_field(std::string_view text) {
    if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
    std::string quoted = "\"";
    for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + '"';
  }
  // A JSON number with `decimals` decimals, or null when `value` is NaN or infinite.
  static std::string json_number(double value, int decimals) {
    if (!std::isfinite(value)) return "null";
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
  }
  // A JSON string: quotes, backslashes and control characters escaped.
  static std::string json_string(std::string_view text) {
    std::string quoted = "\"";
    for (const char c : text) {
      if (c == '"' || c == '\\') {
        quoted += '\\';
        quoted += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        quoted += escaped;
      } else {
        quoted += c;
      }
    }
    return quoted + '"';
  }

  bool csv_;
  std::ofstream out_;
};

}  // namespace switchyard::train

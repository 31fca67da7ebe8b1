// The examples' JSON files, written through nlohmann-json: keys in the order they are set,
// figures rounded to the digits they carry, NaN and infinities as null.
#pragma once

#include <switchyard/core/error.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>

namespace example {

namespace sy = switchyard;

using json = nlohmann::ordered_json;

/// `value` rounded to `digits` decimals, so that the file shows 12.346 rather than
/// 12.345999999999999; NaN and infinities stay as they are (the file writes them as null).
inline double rounded(double value, int digits) {
  if (!std::isfinite(value)) return value;
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

/// Writes `document` to `path`, indented, with a final line break.
inline void write_json_file(const std::string& path, const json& document) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw sy::usage_error("cannot open " + path + " for writing");
  out << document.dump(2) << '\n';
  if (!out.flush()) throw sy::usage_error("cannot write " + path);
}

}  // namespace example

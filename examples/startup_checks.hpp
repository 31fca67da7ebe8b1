// The checks the examples make as they start: their command lines' values, as CLI11 validators
// (a value they refuse ends the program before any data is read, with CLI11's message
// "--OPTION: expected ..., got '...'"), and the kernels OpenBLAS runs. CLI11's own Range and
// PositiveNumber let NaN through (every comparison with it is false).
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/nn/blas_kernels.hpp>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace example {

namespace sy = switchyard;

/// The whole of `text` as a finite number, or nothing ("nan", "inf", "2x" and "" are not).
inline std::optional<double> finite_number(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::logic_error&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

/// The whole of `text` as a count, digits only, or nothing ("-1", "+3" and "2x" are not).
inline std::optional<std::uint64_t> count_number(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoull(text);
}

/// A whole number, digits only: CLI11 reads "-1" into an unsigned option as its largest value.
inline CLI::Validator whole_number() {
  return CLI::Validator(
      [](const std::string& text) {
        if (count_number(text)) return std::string();
        return fmt::format("expected a whole number (digits only), got '{}'", text);
      },
      "WHOLE");
}

/// A finite number from `low` to `high`.
inline CLI::Validator finite_range(double low, double high) {
  return CLI::Validator(
      [low, high](const std::string& text) {
        const std::optional<double> value = finite_number(text);
        if (value && *value >= low && *value <= high) return std::string();
        return fmt::format("expected a finite number from {} to {}, got '{}'", low, high, text);
      },
      fmt::format("FINITE in [{} - {}]", low, high));
}

/// A finite number above zero.
inline CLI::Validator finite_positive() {
  return CLI::Validator(
      [](const std::string& text) {
        const std::optional<double> value = finite_number(text);
        if (value && *value > 0.0) return std::string();
        return fmt::format("expected a finite number above 0, got '{}'", text);
      },
      "FINITE > 0");
}

/// The text that `parse` reads without a usage_error; that error's message is CLI11's.
template <class Parse>
CLI::Validator parsed_by(Parse parse, std::string description) {
  return CLI::Validator(
      [parse = std::move(parse)](const std::string& text) {
        try {
          parse(text);
        } catch (const sy::usage_error& e) {
          return std::string(e.what());
        }
        return std::string();
      },
      std::move(description));
}

/// One line on stderr when OpenBLAS runs kernels older than the CPU supports.
inline void warn_of_blas_kernels(std::string_view program) {
  if (const std::optional<std::string> warning = sy::nn::blas_kernel_warning()) {
    fmt::print(stderr, "{}: warning: {}\n", program, *warning);
  }
}

}  // namespace example

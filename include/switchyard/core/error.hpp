// The exception hierarchy of switchyard, sorted by what the caller can do about the error
// (see docs/errors.md). Every message names where it was raised and the ranks and sizes involved.
#pragma once

#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace switchyard {

/// @brief Base of every exception switchyard throws; catch this to catch them all.
class error : public std::runtime_error {
 public:
  explicit error(const std::string& what) : std::runtime_error(what) {}
};

/// @brief The caller broke a precondition (bad argument, wrong sizes, object used after its end).
/// Fix the calling code; retrying the same call fails the same way.
class usage_error : public error {
 public:
  using error::error;
};

/// @brief Input data (a file, a checkpoint, a stream) is missing, malformed or inconsistent.
/// Fix or replace the data; the message names the file and what is wrong with it.
class data_error : public error {
 public:
  using error::error;
};

/// @brief Communication failed: a peer rank failed, a message did not fit, the world ended.
/// The run cannot continue as is; restart it (from a checkpoint, where there is one).
class transport_error : public error {
 public:
  using error::error;
};

/// @brief A wait did not complete in the configured time (a receive nobody will match, a stalled
/// peer). Usually a bug in the calling code (mismatched collectives) or a dead or stuck rank.
class timeout_error : public transport_error {
 public:
  using transport_error::transport_error;
};

/// @brief Training diverged: a step's loss or gradient is NaN or infinite (the message names the
/// epoch, the step and the rank). The run ends there; restart from the last checkpoint, which
/// holds no diverged state, with a smaller learning rate or a safer setting.
class divergence_error : public error {
 public:
  using error::error;
};

namespace detail {

#if defined(__cpp_lib_source_location)
using source_location = std::source_location;
#else
/// The file and line of a call, for compilers whose standard library lacks std::source_location
/// (clang before 15 with libstdc++, which the libFuzzer build uses).
class source_location {
 public:
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           unsigned line = __builtin_LINE()) noexcept {
    return source_location(file, line);
  }
  [[nodiscard]] constexpr const char* file_name() const noexcept { return file_; }
  [[nodiscard]] constexpr unsigned line() const noexcept { return line_; }

 private:
  constexpr source_location(const char* file, unsigned line) noexcept : file_(file), line_(line) {}
  const char* file_;
  unsigned line_;
};
#endif

/// Concatenates anything printable into one string (messages are built off the hot path only).
template <class... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// Prefixes a message with `[file:line] ` of the place that raised it.
inline std::string located(std::string_view message,
                           const source_location where = source_location::current()) {
  std::string_view file = where.file_name();
  if (const auto slash = file.rfind('/'); slash != std::string_view::npos) {
    file.remove_prefix(slash + 1);
  }
  std::string out;
  out.reserve(file.size() + message.size() + 16);
  out += '[';
  out += file;
  out += ':';
  out += std::to_string(where.line());
  out += "] ";
  out += message;
  return out;
}

/// Throws `Error` with the message located at the caller.
template <class Error>
[[noreturn]] void raise(std::string_view message,
                        const source_location where = source_location::current()) {
  throw Error(located(message, where));
}

}  // namespace detail
}  // namespace switchyard

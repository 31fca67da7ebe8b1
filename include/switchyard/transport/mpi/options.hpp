// The settings of an MPI handle: the stall watchdog's timeout, how a rank waits (spin or
// passive), and whether collectives are checked; their defaults come from the environment.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/transport.hpp>

#include <chrono>
#include <cstdlib>
#include <string_view>

namespace switchyard::transport {

/// @brief How a rank waits for a message or a collective to complete (`mpi_options::wait`).
enum class mpi_wait {
  /// `MPI_Wait` and the blocking collectives, which spin inside MPI: the fastest answer when each
  /// rank has a core of its own. The default.
  spin,
  /// `MPI_Test`, then a sleep of 20 us doubling to 100 us (to 1 ms once the wait has slept 5 ms)
  /// until the next test: a waiting rank
  /// gives up its core at once, for ranks that share cores (the cluster emulator, docs/cluster.md)
  /// or a co-located rank that must not steal its neighbour's cycles.
  passive,
};

namespace detail {

using switchyard::detail::raise;
using switchyard::detail::str;

/// The stall timeout named by the environment variable `SWITCHYARD_TIMEOUT` (seconds, fractions
/// allowed), or zero (off) when it is unset or empty; anything else is a `usage_error`.
inline std::chrono::milliseconds timeout_from_environment() {
  const char* text = std::getenv("SWITCHYARD_TIMEOUT");
  if (text == nullptr || *text == '\0') return std::chrono::milliseconds(0);
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds >= 0.0 && seconds <= 1e9)) {
    raise<usage_error>(str("SWITCHYARD_TIMEOUT must be a number of seconds from 0 (off) to 1e9, got '", text, "'"));
  }
  return std::chrono::ceil<std::chrono::milliseconds>(std::chrono::duration<double>(seconds));
}

/// The wait policy named by the environment variable `SWITCHYARD_MPI_WAIT` (`spin` or `passive`),
/// or `spin` when it is unset or empty; anything else is a `usage_error`.
inline mpi_wait wait_from_environment() {
  const char* text = std::getenv("SWITCHYARD_MPI_WAIT");
  if (text == nullptr || *text == '\0') return mpi_wait::spin;
  const std::string_view value = text;
  if (value == "spin") return mpi_wait::spin;
  if (value == "passive") return mpi_wait::passive;
  raise<usage_error>(str("SWITCHYARD_MPI_WAIT must be 'spin' or 'passive', got '", value, "'"));
}

}  // namespace detail

/// @brief Settings of an MPI handle.
struct mpi_options {
  /// The stall watchdog: a wait (send, receive, barrier, native collective) that has not finished
  /// after this long prints to stderr which rank waits, for which peer and what, and since when,
  /// then ends the whole job with `MPI_Abort` (exit status 124). Zero turns it off: waits then
  /// block as long as MPI does; a negative timeout is a `usage_error`. The default comes from the environment variable
  /// `SWITCHYARD_TIMEOUT` (seconds, e.g. `60` or `0.5`), and is off when that is not set.
  std::chrono::milliseconds timeout = detail::timeout_from_environment();
  /// How every wait of the handle waits: send, receive, a request's `wait()`, barrier and the
  /// native collectives. `mpi_wait::passive` tests, then sleeps with a short backoff, and runs the
  /// collectives in their MPI-3 non-blocking forms so that it can. Default: the environment
  /// variable `SWITCHYARD_MPI_WAIT` (`spin` or `passive`), else `mpi_wait::spin`.
  mpi_wait wait = detail::wait_from_environment();
  /// Every collective first exchanges a fingerprint of the call with the other ranks and raises
  /// `usage_error` on every rank when they differ (docs/collectives.md#checked-collectives).
  /// Default: the environment variable `SWITCHYARD_CHECK_COLLECTIVES`.
  bool check_collectives = check_collectives_from_environment();
};

}  // namespace switchyard::transport

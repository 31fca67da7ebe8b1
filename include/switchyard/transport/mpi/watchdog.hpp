// The stall watchdog of the MPI transport: which rank a wait belongs to and how long it may take,
// and the report that ends the job when a wait outlives its timeout.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/mpi/options.hpp>
#include <switchyard/transport/mpi/site.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>

namespace switchyard::transport::detail {

using switchyard::detail::str;

/// The exit status of a job the watchdog ended, as `timeout(1)` uses.
inline constexpr int watchdog_exit_status = 124;

// Which rank a wait belongs to, how long it may take and how it waits.
struct watchdog {
  std::chrono::milliseconds timeout{0};
  int rank = 0;        // in the handle's communicator
  int world_rank = 0;  // in MPI_COMM_WORLD, which the report also names when it differs
  mpi_wait policy = mpi_wait::spin;

  // Whether a wait must poll (MPI_Test) rather than block in MPI_Wait or a blocking collective.
  [[nodiscard]] bool polls() const noexcept { return timeout.count() != 0 || policy == mpi_wait::passive; }
};

// Why a wait at `site` can stall, for the watchdog's report.
inline std::string_view stall_reason(const wait_site& site) {
  const std::string_view operation = site.operation;
  if (site.peer != no_peer) return operation == "send" ? " (the receiver has not taken it)" : "";
  return operation == "barrier" ? " (at least one has not entered it)" : " (at least one has not joined it)";
}

inline std::string utc_time(std::chrono::system_clock::time_point when) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[40];
  const std::size_t length = std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &parts);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000;
  std::snprintf(text + length, sizeof text - length, ".%03d UTC", static_cast<int>(millis));
  return text;
}

// The watchdog fired: report who waits for whom, for what and since when, and end the job.
[[noreturn]] inline void report_stall(const watchdog& watch, const wait_site& site,
                                      std::chrono::steady_clock::time_point started) noexcept {
  const auto waited = std::chrono::steady_clock::now() - started;
  const auto since =
      std::chrono::system_clock::now() - std::chrono::duration_cast<std::chrono::system_clock::duration>(waited);
  const std::string report = switchyard::detail::located(str(
      "switchyard watchdog: rank ", watch.rank,
      watch.world_rank == watch.rank ? std::string() : str(" (world rank ", watch.world_rank, ")"), " has waited ",
      std::chrono::duration_cast<std::chrono::milliseconds>(waited).count(), " ms, since ", utc_time(since), ", for ", describe(site), stall_reason(site),
      "; the timeout is ", watch.timeout.count(),
      " ms (mpi_options::timeout or SWITCHYARD_TIMEOUT): aborting the job"));
  std::fprintf(stderr, "%s\n", report.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, watchdog_exit_status);
  std::abort();  // not reached: MPI_Abort does not return
}

}  // namespace switchyard::transport::detail

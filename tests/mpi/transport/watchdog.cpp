// transport/mpi/watchdog.hpp: when a wait must poll, and the parts of the stall report. The report
// itself ends the job: tests/mpi/stall.cpp (meson tests transport.mpi.watchdog.*) checks it.
#include <switchyard/transport/mpi/watchdog.hpp>

#include <doctest/doctest.h>

#include <chrono>

namespace sy = switchyard;
using sy::transport::mpi_wait;
using sy::transport::detail::no_peer;
using sy::transport::detail::stall_reason;
using sy::transport::detail::utc_time;
using sy::transport::detail::watchdog;
using namespace std::chrono_literals;

static_assert(sy::transport::detail::watchdog_exit_status == 124);

TEST_CASE("mpi.watchdog.polls: a wait polls when it is timed or passive, and blocks in MPI otherwise") {
  CHECK_FALSE(watchdog{}.polls());
  CHECK(watchdog{.timeout = 1ms}.polls());
  CHECK(watchdog{.policy = mpi_wait::passive}.polls());
  CHECK(watchdog{.timeout = 60s, .policy = mpi_wait::passive}.polls());
  CHECK_FALSE(watchdog{.timeout = 0ms, .rank = 3, .world_rank = 5, .policy = mpi_wait::spin}.polls());
}

TEST_CASE("mpi.watchdog.stall_reason: who has not come, for a send and for collectives") {
  CHECK(stall_reason({"send", 1, 7, 4, 2}) == " (the receiver has not taken it)");
  CHECK(stall_reason({"receive", 1, 7, 4, 2}).empty());
  CHECK(stall_reason({"barrier", no_peer, -1, 0, 3}) == " (at least one has not entered it)");
  CHECK(stall_reason({"allreduce", no_peer, -1, 4, 3}) == " (at least one has not joined it)");
}

TEST_CASE("mpi.watchdog.utc_time: date and time in UTC to the millisecond") {
  const std::chrono::system_clock::time_point epoch{};
  CHECK(utc_time(epoch) == "1970-01-01 00:00:00.000 UTC");
  CHECK(utc_time(epoch + 1234ms) == "1970-01-01 00:00:01.234 UTC");
  CHECK(utc_time(epoch + std::chrono::seconds(1740924311) + 672ms) == "2025-03-02 14:05:11.672 UTC");
}

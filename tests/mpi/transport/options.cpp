// transport/mpi/options.hpp: the settings of an MPI handle and their defaults, read from
// SWITCHYARD_TIMEOUT and SWITCHYARD_MPI_WAIT.
#include <switchyard/transport/mpi/options.hpp>

#include "environment.hpp"

#include <doctest/doctest.h>

#include <chrono>

namespace sy = switchyard;
using sy::transport::mpi_options;
using sy::transport::mpi_wait;
using namespace std::chrono_literals;

TEST_CASE("mpi.options.defaults: no watchdog, spinning waits, checks as the environment says") {
  const mpi_tests::scoped_environment timeout("SWITCHYARD_TIMEOUT", nullptr);
  const mpi_tests::scoped_environment wait("SWITCHYARD_MPI_WAIT", nullptr);
  const mpi_options o;
  CHECK(o.timeout == 0ms);
  CHECK(o.wait == mpi_wait::spin);
  CHECK(o.check_collectives == sy::transport::check_collectives_from_environment());
}

TEST_CASE("mpi.options.designated: each field can be given on its own, the others keep their defaults") {
  const mpi_tests::scoped_environment timeout("SWITCHYARD_TIMEOUT", "3");
  const mpi_tests::scoped_environment wait("SWITCHYARD_MPI_WAIT", "passive");
  const mpi_options o{.timeout = 250ms, .wait = mpi_wait::spin, .check_collectives = true};
  CHECK(o.timeout == 250ms);
  CHECK(o.wait == mpi_wait::spin);
  CHECK(o.check_collectives);
  const mpi_options only_wait{.wait = mpi_wait::spin};
  CHECK(only_wait.timeout == 3s);
  const mpi_options only_timeout{.timeout = 0ms};
  CHECK(only_timeout.wait == mpi_wait::passive);
}

TEST_CASE("mpi.options.timeout_environment: seconds with fractions, rounded up to milliseconds") {
  mpi_tests::scoped_environment timeout("SWITCHYARD_TIMEOUT", "0.0001");
  CHECK(mpi_options{}.timeout == 1ms);
  timeout.set("1e3");
  CHECK(mpi_options{}.timeout == 1000s);
  timeout.set("1e9");
  CHECK(mpi_options{}.timeout == std::chrono::seconds(1'000'000'000));
  for (const char* bad : {"1e10", "inf", " ", "2,5"}) {
    CAPTURE(bad);
    timeout.set(bad);
    CHECK_THROWS_WITH_AS((void)mpi_options{}, doctest::Contains("SWITCHYARD_TIMEOUT must be a number of seconds from 0 (off) to 1e9"),
                         sy::usage_error);
  }
}

// transport/simulated/options.hpp: rates and durations need their units and a sign that makes
// sense, and the defaults describe a 4-host star of 1 Gbit/s, 50 us links under CM02.
#include <switchyard/transport/simulated/options.hpp>

#include <doctest/doctest.h>

namespace sy = switchyard;
using sy::transport::parse_bandwidth;
using sy::transport::parse_duration;

TEST_CASE("simulated.options.rates: bits and bytes, decimal prefixes") {
  CHECK(parse_bandwidth("1Gbps") == doctest::Approx(125e6));
  CHECK(parse_bandwidth("10Gbps") == doctest::Approx(1.25e9));
  CHECK(parse_bandwidth("125MBps") == doctest::Approx(125e6));
  CHECK(parse_bandwidth("2.5e3kbps") == doctest::Approx(312500));
  CHECK(parse_duration("50us") == doctest::Approx(50e-6));
  CHECK(parse_duration("1.5ms") == doctest::Approx(1.5e-3));
  CHECK(parse_duration("0s") == 0);
}

TEST_CASE("simulated.options.bad_rates: no unit, an unknown unit, a negative or zero rate") {
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("100"), doctest::Contains("bandwidth '100' has no unit"), sy::usage_error);
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("1Gbit"), doctest::Contains("unknown unit 'Gbit'"), sy::usage_error);
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("-1Gbps"), doctest::Contains("must be positive"), sy::usage_error);
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("0Gbps"), doctest::Contains("must be positive"), sy::usage_error);
  CHECK_THROWS_WITH_AS((void)parse_bandwidth("fast"), doctest::Contains("is not a number followed by a unit"),
                       sy::usage_error);
  CHECK_THROWS_WITH_AS((void)parse_duration("50"), doctest::Contains("latency '50' has no unit"), sy::usage_error);
  CHECK_THROWS_WITH_AS((void)parse_duration("-5us"), doctest::Contains("must not be negative"), sy::usage_error);
}

TEST_CASE("simulated.options.defaults: a 4-host star, one rank per host, CM02 without cross-traffic") {
  const sy::transport::simulated_options o;
  CHECK(o.platform.hosts == 4);
  CHECK(o.ranks_per_host == 1);
  CHECK(o.platform.rack_size == 0);
  CHECK(o.network == sy::transport::network_model::cm02);
  CHECK_FALSE(o.cross_traffic);
  CHECK(o.compute == sy::transport::compute_model::measured);
}

// transport/simulated/platform.hpp: bad options are refused before anything runs, racks put an
// uplink on the route between racks, a platform file gives its hosts, the time precision lets flows
// that end close together end at once, and a slow host computes slower in simulated time, for the
// whole run or inside a window.
#include <switchyard/transport/simulated/platform.hpp>

#include <switchyard/transport/simulated/world.hpp>

#include <doctest/doctest.h>

#include "../../common/simulated_quiet.hpp"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace sy = switchyard;
using sy::transport::simulated;
using sy::transport::simulated_options;
using sy::transport::simulated_world;

namespace {

std::string written(const std::string& name, const std::string& text) {
  const std::string path = "simulated_platform_test_" + name + ".xml";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("simulated.platform.refused: bad options get a usage_error before anything runs") {
  simulated_options o = quiet();
  o.platform.hosts = 0;
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("a simulated cluster needs at least 1 host, got 0"), sy::usage_error);
  o = quiet();
  o.platform.bandwidth = "-1Gbps";
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("link bandwidth '-1Gbps' must be positive"), sy::usage_error);
  o = quiet();
  o.platform.latency = "50";
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("link latency '50' has no unit"), sy::usage_error);
  o = quiet();
  o.ranks_per_host = 3;
  o.platform.cores = 2;
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("3 ranks per host need as many cores, but the hosts have 2 (simulated_platform::cores)"),
                       sy::usage_error);
  o = quiet();
  o.native_max_ranks = 0;
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("simulated_options::native_max_ranks must be at least 1, got 0"),
                       sy::usage_error);
  o = quiet();
  o.platform.speeds = {{4, 0.5}};
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("a speed factor names host 4 but the cluster has hosts 0 to 3"), sy::usage_error);
  o = quiet();
  o.platform.speeds = {{1, 0}};
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("speed factor of host 1 must be positive"), sy::usage_error);
  o = quiet();
  o.platform.speeds = {{1, 0.5, 2.0, 1.0}};
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("the speed window of host 1 must run from 0 or later to a later time, got 2 to 1"),
                       sy::usage_error);
  o.platform.speeds = {{1, 0.5, -1.0, 1.0}};
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("the speed window of host 1"), sy::usage_error);
  o.platform.speeds = {{2, 0.5, 1.0, 3.0}, {2, 0.25, 2.0, 4.0}};
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("host 2 has overlapping speed windows: 2 to 4 and 1 to 3"), sy::usage_error);
  o.platform.speeds = {{2, 0.5}, {2, 0.25, 2.0, 4.0}};
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("host 2 has overlapping speed windows"), sy::usage_error);
  o = quiet();
  o.time_precision = "0ns";
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("simulated_options::time_precision must be above 0, got 0ns"),
                       sy::usage_error);
  o.time_precision = "1";
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("time precision '1' has no unit"), sy::usage_error);
  o.time_precision = "-1ns";
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("time precision '-1ns' must not be negative"),
                       sy::usage_error);
  o.time_precision = "1min";
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("time precision '1min'"), sy::usage_error);
  o.time_precision = "100us";
  CHECK_THROWS_WITH_AS(simulated_world{o},
                       doctest::Contains("the time precision 100us is coarser than the link latency 50us, which SimGrid "
                                         "could then not resolve: give a precision of at most 50us"),
                       sy::usage_error);
  o.time_precision = "2us";
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("coarser than the loopback latency 1us"), sy::usage_error);
  o = quiet();
  o.platform.file = "no_such_platform.xml";
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("the platform file 'no_such_platform.xml' cannot be read"), sy::usage_error);
  o.platform.speeds = {{0, 0.5}};
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("speed factors apply to the hosts the options describe, not to those of the platform file"),
                       sy::usage_error);
}

TEST_CASE("simulated.platform.file: hosts of a file, by name; a file that does not parse, names no hosts or has a link "
          "faster than the time precision") {
  const std::string header =
      "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n";
  simulated_options o = quiet();
  o.platform.file = written("good", header +
                                        "<zone id='z' routing='Full'><host id='b' speed='1Gf' core='2'/><host id='a' speed='1Gf'/>"
                                        "<link id='l' bandwidth='1GBps' latency='10us'/>"
                                        "<route src='a' dst='b'><link_ctn id='l'/></route></zone></platform>\n");
  simulated_world world(o);
  const std::vector<int> ranks = world.run([](simulated& t) {
    std::vector<char> byte(1);
    if (t.rank() == 0) t.send(std::span<const char>(byte), 1, 0);
    if (t.rank() == 1) t.recv(std::span<char>(byte), 0, 0);
    return t.size();
  });
  CHECK(ranks == std::vector<int>{2, 2});
  CHECK(world.simulated_seconds() == doctest::Approx(10e-6 + 1e-9).epsilon(1e-6).scale(0));

  o.platform.file = written("empty", header + "<zone id='z' routing='Full'></zone></platform>\n");
  CHECK_THROWS_WITH_AS(simulated_world{o}, doctest::Contains("names no hosts"), sy::usage_error);
  o.platform.file = written("fine_link", header +
                                             "<zone id='z' routing='Full'><host id='a' speed='1Gf'/><host id='b' speed='1Gf'/>"
                                             "<link id='fast' bandwidth='1GBps' latency='500ns'/>"
                                             "<route src='a' dst='b'><link_ctn id='fast'/></route></zone></platform>\n");
  o.time_precision = "1us";
  CHECK_THROWS_WITH_AS(simulated_world(o).run([](simulated&) {}),
                       doctest::Contains("coarser than the latency of link fast of the platform file"), sy::usage_error);
  o.time_precision = "500ns";
  CHECK(simulated_world(o).run([](simulated& t) { return t.size(); }) == std::vector<int>{2, 2});
  o.platform.file = written("broken", header + "<zone id='z' routing='Full'><host id='a' speed='1Gf'>\n");
  CHECK_THROWS_WITH_AS(simulated_world(o).run([](simulated&) {}), doctest::Contains("does not load"), sy::usage_error);
  for (const char* name : {"good", "empty", "broken", "fine_link"}) std::remove(("simulated_platform_test_" + std::string(name) + ".xml").c_str());
}

TEST_CASE("simulated.platform.time_precision: flows that end within the precision of each other end together") {
  // Two flows on disjoint routes, of 1,000 and 1,500 bytes at 1 GB/s: their ends are 0.5 us apart.
  const auto ends = [](const std::string& precision) {
    simulated_options o = quiet();
    o.platform.bandwidth = "8Gbps";
    o.platform.latency = "10us";
    o.time_precision = precision;
    simulated_world world(o);
    return world.run([](simulated& t) {
      std::vector<char> data(t.rank() < 2 ? 1000 : 1500);
      if (t.rank() % 2 == 0) t.send(std::span<const char>(data), t.rank() + 1, 0);
      if (t.rank() % 2 == 1) t.recv(std::span<char>(data), t.rank() - 1, 0);
      return t.now();
    });
  };
  const std::vector<double> fine = ends("1ns");
  CHECK(fine[1] == doctest::Approx(20e-6 + 1e-6).epsilon(1e-6).scale(0));
  CHECK(fine[3] == doctest::Approx(20e-6 + 1.5e-6).epsilon(1e-6).scale(0));
  const std::vector<double> coarse = ends("1us");
  CHECK(coarse[1] == fine[1]);
  CHECK(coarse[3] == coarse[1]);  // ended with the first, 0.5 us early
  const std::vector<double> again = ends("1ns");  // each world sets its own precision
  CHECK(again[3] - again[1] == doctest::Approx(0.5e-6).epsilon(1e-3).scale(0));
}

TEST_CASE("simulated.platform.racks: between racks a message crosses both uplinks too") {
  simulated_options o = quiet();
  o.platform.hosts = 4;
  o.platform.rack_size = 2;
  o.platform.latency = "10us";
  o.platform.bandwidth = "8Gbps";  // 1 GB/s
  auto one_message = [&](int to) {
    simulated_world world(o);
    world.run([to](simulated& t) {
      std::vector<char> data(1000000);
      if (t.rank() == 0) t.send(std::span<const char>(data), to, 0);
      if (t.rank() == to) t.recv(std::span<char>(data), 0, 0);
    });
    return world.simulated_seconds();
  };
  CHECK(one_message(1) == doctest::Approx(20e-6 + 1e-3).epsilon(1e-6).scale(0));
  CHECK(one_message(2) == doctest::Approx(40e-6 + 1e-3).epsilon(1e-6).scale(0));
}

TEST_CASE("simulated.platform.speed: measured compute takes about twice the time on a host of factor 0.5") {
  simulated_options o;
  o.platform.hosts = 2;
  o.platform.speeds = {{1, 0.5}};
  const std::vector<double> compute = simulated_world(o).run([](simulated& t) {
    simulated alone = t.split(t.rank(), 0);  // a barrier of one rank charges compute and waits for nobody
    alone.barrier();
    const double start = t.now();
    volatile double sink = 0;
    for (int i = 0; i < 20000000; ++i) sink = sink + 1e-9;
    alone.barrier();
    return t.now() - start;
  });
  CHECK(compute[0] > 0.001);
  CHECK(compute[1] / compute[0] == doctest::Approx(2.0).epsilon(0.25));
}

TEST_CASE("simulated.platform.speed_window: a host runs at its factor only inside its window of simulated time") {
  // Calibrated compute: each rank charges 4 s of this machine's CPU. Host 1 runs at 0.5 from 1 s to
  // 3 s, so it does 1 + 1 seconds' worth by 3 s and the last 2 at full speed: 5 s of simulated
  // time. Host 2 runs at 2 from 1 s to 2 s and at 0.25 from 2.5 s on: 1 + 2 + 0.5 by 2.5 s, then
  // 0.5 at 0.25 takes 2 s more.
  simulated_options o = quiet();
  o.compute = sy::transport::compute_model::calibrated;
  o.platform.hosts = 3;
  o.platform.speeds = {{1, 0.5, 1.0, 3.0}, {2, 0.25, 2.5}, {2, 2.0, 1.0, 2.0}};
  for (int run = 0; run < 2; ++run) {  // a second world in one process starts its windows from its own start
    CAPTURE(run);
    simulated_world world(o);
    const std::vector<double> ends = world.run([](simulated& t) {
      t.compute(4.0);
      return t.now();
    });
    CHECK(ends[0] == doctest::Approx(4.0).epsilon(1e-9));
    CHECK(ends[1] == doctest::Approx(5.0).epsilon(1e-9));
    CHECK(ends[2] == doctest::Approx(4.5).epsilon(1e-9));
    CHECK(world.simulated_seconds() == doctest::Approx(5.0).epsilon(1e-9));
  }
  // A window that opens after the last rank ended changes nothing and does not outlast the run.
  o.platform.speeds = {{1, 0.5, 10.0, 20.0}};
  simulated_world late(o);
  late.run([](simulated& t) { t.compute(1.0); });
  CHECK(late.simulated_seconds() == doctest::Approx(1.0).epsilon(1e-9));
}

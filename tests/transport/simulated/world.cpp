// Tests of transport/simulated/world.hpp: every rank runs as an actor and returns its result, the
// first failure is rethrown after the others were released, a deadlock is reported with what each
// rank waited for, and simulated time is measured.
#include <switchyard/transport/simulated/world.hpp>

#include <switchyard/core/error.hpp>

#include <doctest/doctest.h>

#include "../../common/simulated_quiet.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace sy = switchyard;
using sy::transport::simulated;

TEST_CASE("simulated.world.run: every rank returns its result, in rank order" * doctest::timeout(60)) {
  for (int hosts : {1, 2, 3, 4, 7}) {
    CAPTURE(hosts);
    const std::vector<int> ranks = sy::transport::run_simulated(hosts, [](simulated& t) { return t.rank() * 10 + t.size(); }, quiet());
    REQUIRE(ranks.size() == static_cast<std::size_t>(hosts));
    for (int r = 0; r < hosts; ++r) CHECK(ranks[static_cast<std::size_t>(r)] == r * 10 + hosts);
  }
}

TEST_CASE("simulated.world.ranks_per_host: ranks fill hosts in blocks" * doctest::timeout(60)) {
  sy::transport::simulated_options o = quiet();
  o.platform.hosts = 3;
  o.platform.cores = 2;
  o.ranks_per_host = 2;
  sy::transport::simulated_world world(o);
  CHECK(world.size() == 6);
  const std::vector<int> hosts = world.run([](simulated& t) { return t.host(); });
  CHECK(hosts == std::vector<int>{0, 0, 1, 1, 2, 2});
}

TEST_CASE("simulated.world.time: a message of M bytes takes two link latencies and M over the bandwidth" * doctest::timeout(60)) {
  sy::transport::simulated_options o = quiet();
  o.platform.bandwidth = "1GBps";
  o.platform.latency = "10us";
  sy::transport::simulated_world world(o);
  const std::vector<double> arrival = world.run([](simulated& t) {
    std::vector<double> data(125000);  // 1 MB
    if (t.rank() == 0) t.send(std::span<const double>(data), 1, 3);
    if (t.rank() == 1) t.recv(std::span<double>(data), 0, 3);
    return t.now();
  });
  CHECK(arrival[1] == doctest::Approx(20e-6 + 1e-3).epsilon(1e-6).scale(0));
  CHECK(world.simulated_seconds() == doctest::Approx(20e-6 + 1e-3).epsilon(1e-6).scale(0));
}

TEST_CASE("simulated.world.failure: the first failure is rethrown, the others' waits are abandoned" * doctest::timeout(60)) {
  std::vector<std::string> seen(3);
  auto run = [&] {
    sy::transport::run_simulated(3, [&](simulated& t) {
      if (t.rank() == 1) throw std::runtime_error("rank 1 ran out of data");
      std::vector<float> data(4);
      try {
        t.recv(std::span<float>(data), 1, 0);
      } catch (const sy::transport_error& e) {
        seen[static_cast<std::size_t>(t.rank())] = e.what();
        throw;
      }
    }, quiet());
  };
  CHECK_THROWS_WITH_AS(run(), "rank 1 ran out of data", std::runtime_error);
  CHECK(seen[0].find("abandoned because rank 1 failed: rank 1 ran out of data") != std::string::npos);
  CHECK(seen[2].find("abandoned because rank 1 failed") != std::string::npos);
}

TEST_CASE("simulated.world.deadlock: ranks that all wait are reported with what they wait for" * doctest::timeout(60)) {
  auto run = [] {
    sy::transport::run_simulated(2, [](simulated& t) {
      std::vector<float> data(4);
      t.recv(std::span<float>(data), 1 - t.rank(), 5);
    }, quiet());
  };
  CHECK_THROWS_WITH_AS(run(), doctest::Contains("rank 0 waited for receive of 4 elements from rank 1 with tag 5"),
                       sy::transport_error);
}

TEST_CASE("simulated.world.ended: a handle used after its run is refused" * doctest::timeout(60)) {
  std::optional<simulated> kept;
  sy::transport::run_simulated(2, [&](simulated& t) {
    if (t.rank() == 0) kept.emplace(t);
  }, quiet());
  std::vector<float> data(1);
  CHECK_THROWS_WITH_AS(kept->send(std::span<const float>(data), 1, 0), doctest::Contains("whose world has ended"),
                       sy::usage_error);
}

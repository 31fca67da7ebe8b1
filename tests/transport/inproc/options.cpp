// transport/inproc/options.hpp: the settings of an in-process world and their defaults.
#include <switchyard/transport/inproc/options.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <vector>

namespace sy = switchyard;

TEST_CASE("inproc.options.defaults: two minutes to wait, 64 spins, checks as the environment says, one node") {
  const sy::transport::inproc_options o;
  CHECK(o.timeout == std::chrono::minutes(2));
  CHECK(o.timeout == std::chrono::milliseconds(120'000));
  CHECK(o.spin == 64);
  CHECK(o.check_collectives == sy::transport::check_collectives_from_environment());
  CHECK(o.node_sizes.empty());
  CHECK_FALSE(o.round_robin_nodes);
}

TEST_CASE("inproc.options.designated: each field can be given on its own, the others keep their defaults") {
  const sy::transport::inproc_options o{.timeout = std::chrono::milliseconds(300), .spin = 0, .check_collectives = true};
  CHECK(o.timeout == std::chrono::milliseconds(300));
  CHECK(o.spin == 0);
  CHECK(o.check_collectives);
  const sy::transport::inproc_options only_spin{.spin = 8};
  CHECK(only_spin.timeout == std::chrono::minutes(2));
  CHECK(only_spin.spin == 8);
  const sy::transport::inproc_options only_nodes{.node_sizes = {2, 2}};
  CHECK(only_nodes.spin == 64);
  CHECK(only_nodes.node_sizes == std::vector<int>{2, 2});
}

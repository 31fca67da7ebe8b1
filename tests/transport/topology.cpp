// transport/topology.hpp: the default topology of a transport without the hook, the virtual nodes of
// the in-process transport (kept by split, forwarded by faulty), and the group cache.
#include <switchyard/transport/topology.hpp>

#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <vector>

namespace sy = switchyard;
using sy::transport::inproc;
using sy::transport::node_topology;

namespace {

// A transport's rank and size, and nothing else the topology could come from.
struct no_hook {
  int r;
  int n;
  [[nodiscard]] int rank() const { return r; }
  [[nodiscard]] int size() const { return n; }
};

std::vector<node_topology> topologies(int ranks, std::vector<int> sizes, bool round_robin = false) {
  sy::transport::inproc_options o;
  o.node_sizes = std::move(sizes);
  o.round_robin_nodes = round_robin;
  return sy::transport::run_inproc(ranks, [](inproc& t) { return t.topology(); }, o);
}

}  // namespace

static_assert(!sy::transport::has_node_topology<no_hook>);
static_assert(sy::transport::has_node_topology<inproc> && sy::transport::has_group_cache<inproc>);
static_assert(sy::transport::has_node_topology<sy::transport::faulty<inproc>> &&
              sy::transport::has_group_cache<sy::transport::faulty<inproc>>);

TEST_CASE("topology.default: without the hook every rank is a node of its own, and nothing is hierarchical") {
  const node_topology t = sy::transport::topology_of(no_hook{2, 5});
  CHECK(t == node_topology{2, 0, 1, 5, 1, 1});
  CHECK_FALSE(t.hierarchical());
}

TEST_CASE("topology.inproc: one node by default; node_sizes groups consecutive ranks") {
  for (const node_topology& t : topologies(4, {})) {
    CHECK(t.nodes == 1);
    CHECK(t.local_size == 4);
    CHECK_FALSE(t.hierarchical());
  }
  const std::vector<node_topology> uneven = topologies(6, {3, 1, 2});
  const std::vector<node_topology> expected = {{0, 0, 3, 3, 3, 1}, {0, 1, 3, 3, 3, 1}, {0, 2, 3, 3, 3, 1},
                                               {1, 0, 1, 3, 3, 1}, {2, 0, 2, 3, 3, 1}, {2, 1, 2, 3, 3, 1}};
  CHECK(uneven == expected);
  CHECK(uneven[0].hierarchical());
  for (const node_topology& t : topologies(3, {1, 1, 1})) CHECK_FALSE(t.hierarchical());
}

TEST_CASE("topology.inproc.round_robin: ranks dealt to the nodes in turn, skipping full nodes") {
  // {3, 1, 2}: node 0 gets ranks 0, 3 and 5, node 1 rank 1, node 2 ranks 2 and 4.
  const std::vector<node_topology> dealt = topologies(6, {3, 1, 2}, true);
  const std::vector<node_topology> expected = {{0, 0, 3, 3, 3, 1}, {1, 0, 1, 3, 3, 1}, {2, 0, 2, 3, 3, 1},
                                               {0, 1, 3, 3, 3, 1}, {2, 1, 2, 3, 3, 1}, {0, 2, 3, 3, 3, 1}};
  CHECK(dealt == expected);
  CHECK(topologies(4, {4}, true) == topologies(4, {4}));
  CHECK(topologies(3, {1, 1, 1}, true) == topologies(3, {1, 1, 1}));
}

TEST_CASE("topology.split: ranks made by split keep their nodes, renumbered in the new group") {
  sy::transport::inproc_options o;
  o.node_sizes = {3, 1, 2};
  const auto seen = sy::transport::run_inproc(
      6,
      [](inproc& t) {
        // Ranks 1, 3, 4 and 5 stay together, in reverse order: nodes {5, 4}, {3}, {1}.
        inproc part = t.split(t.rank() == 0 || t.rank() == 2 ? 1 : 0, -t.rank());
        return t.rank() == 0 || t.rank() == 2 ? node_topology{} : part.topology();
      },
      o);
  CHECK(seen[5] == node_topology{0, 0, 2, 3, 2, 1});
  CHECK(seen[4] == node_topology{0, 1, 2, 3, 2, 1});
  CHECK(seen[3] == node_topology{1, 0, 1, 3, 2, 1});
  CHECK(seen[1] == node_topology{2, 0, 1, 3, 2, 1});
}

TEST_CASE("topology.faulty: the decorator reports its inner transport's topology and shares its cache") {
  sy::transport::inproc_options o;
  o.node_sizes = {2, 2};
  sy::transport::run_inproc(
      4,
      [](inproc& t) {
        sy::transport::faulty f(t);
        CHECK(f.topology() == t.topology());
        CHECK(&f.group_cache() == &t.group_cache());
      },
      o);
}

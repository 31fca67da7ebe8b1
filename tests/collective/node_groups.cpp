// collective/node_groups.hpp: the per-level groups of a topology, the slices each rank owns, and a
// topology that split contradicts.
#include <switchyard/collective/node_groups.hpp>
#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace sy = switchyard;
using sy::collective::node_groups;
using sy::transport::inproc;

namespace {

// What one rank sees of its groups: its node's members and, per owned slice, the world ranks of
// that slice's owners.
struct seen {
  std::vector<int> node_members;
  std::vector<int> slices;
  std::vector<std::vector<int>> owners;
};

// The world rank of every member of `group`, in group order.
std::vector<int> members(inproc& group, int world_rank) {
  std::vector<int> mine{world_rank};
  std::vector<int> all(static_cast<std::size_t>(group.size()));
  for (int r = 0; r < group.size(); ++r) {
    if (r == group.rank()) {
      all[static_cast<std::size_t>(r)] = world_rank;
      for (int peer = 0; peer < group.size(); ++peer) {
        if (peer != r) group.send(std::span<const int>(mine), peer, 7);
      }
    } else {
      group.recv(std::span<int>(all).subspan(static_cast<std::size_t>(r), 1), r, 7);
    }
  }
  return all;
}

std::vector<seen> groups_of(std::vector<int> sizes) {
  int ranks = 0;
  for (const int s : sizes) ranks += s;
  sy::transport::inproc_options o;
  o.node_sizes = std::move(sizes);
  return sy::transport::run_inproc(
      ranks,
      [](inproc& t) {
        node_groups<inproc> groups(t);
        seen s;
        s.node_members = members(groups.node(), t.rank());
        s.slices.assign(groups.owned_slices().begin(), groups.owned_slices().end());
        for (std::size_t i = 0; i < s.slices.size(); ++i) s.owners.push_back(members(groups.across(i), t.rank()));
        return s;
      },
      o);
}

}  // namespace

TEST_CASE("node_groups.uneven: nodes of 3, 1 and 2 ranks cut buffers into 3 slices, owned modulo the node size") {
  const std::vector<seen> all = groups_of({3, 1, 2});
  using v = std::vector<int>;
  using vv = std::vector<std::vector<int>>;
  CHECK(all[0].node_members == v{0, 1, 2});
  CHECK(all[3].node_members == v{3});
  CHECK(all[5].node_members == v{4, 5});
  CHECK(all[0].slices == v{0});
  CHECK(all[1].slices == v{1});
  CHECK(all[2].slices == v{2});
  CHECK(all[3].slices == v{0, 1, 2});
  CHECK(all[4].slices == v{0, 2});
  CHECK(all[5].slices == v{1});
  // The owners of a slice, one per node, ranked by node.
  CHECK(all[0].owners == vv{{0, 3, 4}});
  CHECK(all[1].owners == vv{{1, 3, 5}});
  CHECK(all[2].owners == vv{{2, 3, 4}});
  CHECK(all[3].owners == vv{{0, 3, 4}, {1, 3, 5}, {2, 3, 4}});
  CHECK(all[4].owners == vv{{0, 3, 4}, {2, 3, 4}});
}

TEST_CASE("node_groups.shapes: one node, one rank per node, equal nodes") {
  using v = std::vector<int>;
  const std::vector<seen> one_node = groups_of({3});
  for (int r = 0; r < 3; ++r) {
    CHECK(one_node[static_cast<std::size_t>(r)].node_members == v{0, 1, 2});
    CHECK(one_node[static_cast<std::size_t>(r)].slices == v{r});
    CHECK(one_node[static_cast<std::size_t>(r)].owners == std::vector<v>{{r}});
  }
  const std::vector<seen> flat = groups_of({1, 1, 1});
  for (int r = 0; r < 3; ++r) {
    CHECK(flat[static_cast<std::size_t>(r)].node_members == v{r});
    CHECK(flat[static_cast<std::size_t>(r)].owners == std::vector<v>{{0, 1, 2}});
  }
  const std::vector<seen> equal = groups_of({2, 2, 2});
  CHECK(equal[3].node_members == v{2, 3});
  CHECK(equal[3].slices == v{1});
  CHECK(equal[3].owners == std::vector<v>{{1, 3, 5}});
}

namespace {

// A transport whose topology() lies: it claims every rank shares one node with its neighbour.
class lying_topology : public inproc {
 public:
  explicit lying_topology(inproc inner) : inproc(std::move(inner)) {}
  [[nodiscard]] sy::transport::node_topology topology() const { return {0, rank(), 2, 1, 2, 2}; }
  [[nodiscard]] lying_topology split(int color, int key) { return lying_topology(inproc::split(color, key)); }
};

}  // namespace

TEST_CASE("node_groups.errors: a topology that the split contradicts is a usage error naming both") {
  CHECK_THROWS_WITH_AS(sy::transport::run_inproc(3,
                                                 [](inproc& t) {
                                                   lying_topology lying(t);
                                                   node_groups<lying_topology> groups(lying);
                                                 }),
                       doctest::Contains("the transport's topology() puts it at local rank"), sy::usage_error);
}

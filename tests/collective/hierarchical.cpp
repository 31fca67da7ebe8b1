// algorithm::hierarchical of collective/allreduce.hpp (collective/detail/hierarchical.hpp): every
// grouping of 1 to 7 ranks into virtual nodes, the choice of algorithm::automatic, and the groups
// kept between calls.
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/detail/hierarchical.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>

#include "harness.hpp"
#include "scenarios.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sy = switchyard;
using sy::transport::inproc;

TEST_CASE("allreduce.hierarchical.groupings: every grouping of 1 to 7 ranks into nodes matches the reference, "
          "replicas identical" *
          doctest::timeout(600)) {
  harness::run_in_every_grouping([](inproc& t) { return scenarios::hierarchical_suite(t); });
}

TEST_CASE("allreduce.hierarchical.many_nodes: 8 nodes of 2 and 9 uneven nodes, where the step across nodes is "
          "halving-doubling" *
          doctest::timeout(600)) {
  // Across 8 nodes every slice takes halving-doubling; across 9 those under 4 x 64 KiB do
  // (collective/choice.hpp), so both the power of two and the fold run, and the ring for the rest.
  const std::vector<std::vector<int>> groupings = {{2, 2, 2, 2, 2, 2, 2, 2}, {2, 1, 2, 1, 2, 1, 2, 1, 2}};
  for (const std::vector<int>& sizes : groupings) {
    int ranks = 0;
    for (const int s : sizes) ranks += s;
    const std::string nodes = harness::grouping_name(sizes);
    CAPTURE(nodes);
    sy::transport::inproc_options o = harness::options();
    o.node_sizes = sizes;
    harness::report(sy::transport::run_inproc(ranks, [](inproc& t) { return scenarios::hierarchical_suite(t); }, o));
  }
}

namespace {

// The bits each algorithm leaves on rank 0 for the same rounding inputs, with whether the
// hierarchical groups were built (only the hierarchical algorithm builds them).
struct outcome {
  std::uint64_t automatic = 0;
  std::uint64_t hierarchical = 0;
  std::uint64_t native = 0;
  std::uint64_t ring = 0;
  std::uint64_t recursive_doubling = 0;
  bool built_by_automatic = false;
};

template <class Transport>
outcome outcome_of(Transport& t, std::size_t count) {
  auto run = [&](auto algorithm) {
    std::vector<float> data(count);
    for (std::size_t i = 0; i < count; ++i) data[i] = scenarios::rounding_value<float>(t.rank(), i);
    sy::collective::allreduce(t, data, sy::ops::sum{}, algorithm);
    return scenarios::bit_hash(data);
  };
  outcome o;
  o.automatic = run(sy::algorithm::automatic{});
  if constexpr (sy::transport::has_group_cache<Transport>) o.built_by_automatic = t.group_cache().node_groups.has_value();
  o.hierarchical = run(sy::algorithm::hierarchical{});
  if constexpr (sy::collective::has_native_allreduce<Transport, float, sy::ops::sum>) {
    o.native = run(sy::algorithm::native{});
  }
  o.ring = run(sy::algorithm::ring{});
  o.recursive_doubling = run(sy::algorithm::recursive_doubling{});
  return o;
}

sy::transport::inproc_options grouped(std::vector<int> sizes) {
  sy::transport::inproc_options o = harness::options();
  o.node_sizes = std::move(sizes);
  return o;
}

const std::size_t large = sy::collective::ring_threshold_bytes / sizeof(float) + 3;
const std::size_t small = sy::collective::ring_threshold_bytes / sizeof(float) - 1;

}  // namespace

TEST_CASE("allreduce.hierarchical.automatic: taken for large buffers over several nodes with more than one rank on "
          "some" *
          doctest::timeout(120)) {
  for (const std::vector<int>& sizes : std::vector<std::vector<int>>{{2, 2}, {3, 1}, {1, 2, 1}, {2, 2, 3}}) {
    int ranks = 0;
    for (const int s : sizes) ranks += s;
    const std::string nodes = harness::grouping_name(sizes);
    CAPTURE(nodes);
    const auto large_outcomes = sy::transport::run_inproc(ranks, [](inproc& t) { return outcome_of(t, large); },
                                                          grouped(sizes));
    for (const outcome& o : large_outcomes) {
      CHECK(o.built_by_automatic);
      CHECK(o.automatic == o.hierarchical);
    }
    // Below the threshold it stays with the native all-reduce, as without nodes.
    const auto small_outcomes = sy::transport::run_inproc(ranks, [](inproc& t) { return outcome_of(t, small); },
                                                          grouped(sizes));
    for (const outcome& o : small_outcomes) {
      CHECK_FALSE(o.built_by_automatic);
      CHECK(o.automatic == o.native);
    }
  }
}

TEST_CASE("allreduce.hierarchical.automatic: one node, or one rank per node, chooses as before" *
          doctest::timeout(120)) {
  for (const std::vector<int>& sizes : std::vector<std::vector<int>>{{}, {4}, {1, 1, 1, 1}}) {
    const std::string nodes = sizes.empty() ? std::string("default") : harness::grouping_name(sizes);
    CAPTURE(nodes);
    for (const std::size_t count : {small, large}) {
      CAPTURE(count);
      const auto outcomes = sy::transport::run_inproc(4, [&](inproc& t) { return outcome_of(t, count); }, grouped(sizes));
      for (const outcome& o : outcomes) {
        CHECK_FALSE(o.built_by_automatic);
        CHECK(o.automatic == o.native);
      }
    }
  }
}

TEST_CASE("allreduce.hierarchical.automatic: without a native all-reduce, the ring or recursive doubling as before, "
          "hierarchical over nodes" *
          doctest::timeout(120)) {
  auto through_faulty = [](std::vector<int> sizes, std::size_t count) {
    return sy::transport::run_inproc(
        4,
        [&](inproc& t) {
          sy::transport::faulty f(t);
          return outcome_of(f, count);
        },
        grouped(std::move(sizes)));
  };
  for (const outcome& o : through_faulty({}, large)) CHECK(o.automatic == o.ring);
  for (const outcome& o : through_faulty({}, small)) CHECK(o.automatic == o.recursive_doubling);
  for (const outcome& o : through_faulty({1, 1, 1, 1}, large)) CHECK(o.automatic == o.ring);
  for (const outcome& o : through_faulty({2, 2}, large)) {
    CHECK(o.built_by_automatic);
    CHECK(o.automatic == o.hierarchical);
  }
  for (const outcome& o : through_faulty({2, 2}, small)) CHECK(o.automatic == o.recursive_doubling);
}

TEST_CASE("allreduce.hierarchical.cache: the groups are split on the first call and kept for the next ones" *
          doctest::timeout(60)) {
  sy::transport::run_inproc(
      6,
      [](inproc& t) {
        std::vector<double> data(1000, 1.0);
        sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::hierarchical{});
        const auto* kept = std::any_cast<sy::collective::node_groups<inproc>>(&t.group_cache().node_groups);
        REQUIRE(kept != nullptr);
        inproc copy = t;
        sy::collective::allreduce(copy, data, sy::ops::sum{}, sy::algorithm::hierarchical{});
        CHECK(std::any_cast<sy::collective::node_groups<inproc>>(&t.group_cache().node_groups) == kept);
        CHECK(data == std::vector<double>(1000, 36.0));
        // A group made by split has a cache of its own.
        inproc half = t.split(t.rank() % 2, t.rank());
        CHECK_FALSE(half.group_cache().node_groups.has_value());
      },
      grouped({3, 1, 2}));
}

TEST_CASE("allreduce.hierarchical.checked: with collective checks on, calls through every phase match" *
          doctest::timeout(60)) {
  sy::transport::inproc_options o = grouped({3, 1, 2});
  o.check_collectives = true;
  sy::transport::run_inproc(
      6,
      [](inproc& t) {
        std::vector<float> data(50000, 0.5f);
        for (int i = 0; i < 3; ++i) {
          sy::collective::allreduce(t, data, sy::ops::average{}, sy::algorithm::hierarchical{});
          sy::collective::allreduce(t, data, sy::ops::average{});
        }
        CHECK(data == std::vector<float>(50000, 0.5f));
      },
      o);
}

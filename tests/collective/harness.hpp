// Runs a multi-rank scenario in process at every world size the tests sweep (or in every grouping
// of ranks into virtual nodes), and reports each rank's failures through doctest on the calling
// thread.
#pragma once

#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

namespace harness {

inline constexpr int world_sizes[] = {1, 2, 3, 4, 7};

// Short enough that a deadlock fails the test quickly, long enough for 7 ranks on 2 cores.
inline switchyard::transport::inproc_options options() {
  switchyard::transport::inproc_options o;
  o.timeout = std::chrono::seconds(30);
  return o;
}

// Reports every rank's failures, the first ten in full.
inline void report(const std::vector<std::vector<std::string>>& failures) {
  std::size_t total = 0;
  for (const auto& of_rank : failures) {
    for (const std::string& failure : of_rank) {
      if (++total <= 10) FAIL_CHECK(failure);
    }
  }
  CHECK(total == 0);
}

template <class Suite>
void run_at_every_size(Suite suite) {
  for (int ranks : world_sizes) {
    CAPTURE(ranks);
    report(switchyard::transport::run_inproc(ranks, [&](switchyard::transport::inproc& t) { return suite(t); },
                                             options()));
  }
}

// Node sizes (inproc_options::node_sizes) of every family at 1 to 7 ranks: one node, one rank per
// node, equal nodes, and uneven nodes with the largest first, last and in the middle.
inline const std::vector<std::vector<int>> groupings = {
    {1},          {2},          {1, 1},       {3},    {1, 1, 1},    {2, 1},          {1, 2},
    {4},          {1, 1, 1, 1}, {2, 2},       {1, 3}, {3, 1},       {5},             {1, 1, 1, 1, 1},
    {2, 3},       {3, 1, 1},    {6},          {1, 1, 1, 1, 1, 1},   {3, 3},          {2, 2, 2},
    {3, 1, 2},    {7},          {1, 1, 1, 1, 1, 1, 1},              {2, 2, 3},       {4, 1, 2},
    {1, 5, 1}};

inline std::string grouping_name(const std::vector<int>& sizes) {
  std::string name;
  for (const int size : sizes) name += (name.empty() ? "" : "+") + std::to_string(size);
  return name;
}

template <class Suite>
void run_in_every_grouping(Suite suite) {
  for (const std::vector<int>& sizes : groupings) {
    int ranks = 0;
    for (const int size : sizes) ranks += size;
    const std::string nodes = grouping_name(sizes);
    CAPTURE(nodes);
    switchyard::transport::inproc_options o = options();
    o.node_sizes = sizes;
    report(switchyard::transport::run_inproc(ranks, [&](switchyard::transport::inproc& t) { return suite(t); }, o));
  }
}

}  // namespace harness

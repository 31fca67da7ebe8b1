// Runs a multi-rank scenario in process at every world size the tests sweep, and reports each
// rank's failures through doctest on the calling thread.
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

template <class Suite>
void run_at_every_size(Suite suite) {
  for (int ranks : world_sizes) {
    CAPTURE(ranks);
    const std::vector<std::vector<std::string>> failures =
        switchyard::transport::run_inproc(ranks, [&](switchyard::transport::inproc& t) { return suite(t); }, options());
    std::size_t total = 0;
    for (const auto& of_rank : failures) {
      for (const std::string& failure : of_rank) {
        if (++total <= 10) FAIL_CHECK(failure);
      }
    }
    CHECK(total == 0);
  }
}

}  // namespace harness

// Runs a multi-rank scenario on simulated hosts at every world size the tests sweep, one rank per
// host, and reports each rank's failures through doctest.
#pragma once

#include <switchyard/transport/simulated.hpp>

#include <doctest/doctest.h>

#include "../common/simulated_quiet.hpp"

#include <string>
#include <vector>

namespace simulated_harness {

inline constexpr int host_counts[] = {1, 2, 3, 4, 7};

template <class Suite>
void run_at_every_size(Suite suite) {
  for (int hosts : host_counts) {
    CAPTURE(hosts);
    const std::vector<std::vector<std::string>> failures = switchyard::transport::run_simulated(
        hosts, [&](switchyard::transport::simulated& t) { return suite(t); }, quiet());
    std::size_t total = 0;
    for (const auto& of_rank : failures) {
      for (const std::string& failure : of_rank) {
        if (++total <= 10) FAIL_CHECK(failure);
      }
    }
    CHECK(total == 0);
  }
}

}  // namespace simulated_harness

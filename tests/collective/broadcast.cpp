#include <switchyard/collective/broadcast.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>

#include "harness.hpp"
#include "scenarios.hpp"

#include <cstddef>
#include <string>
#include <vector>

TEST_CASE("broadcast.inproc: against the sequential reference at 1, 2, 3, 4 and 7 ranks" * doctest::timeout(300)) {
  harness::run_at_every_size([](switchyard::transport::inproc& t) { return scenarios::broadcast_suite(t); });
}

TEST_CASE("broadcast.automatic.scatter_allgather: taken without a native broadcast as prefers_scatter_allgather says" *
          doctest::timeout(120)) {
  namespace sy = switchyard;
  // faulty<inproc> has no native broadcast, so automatic chooses between the tree and
  // scatter_allgather. Rank 0 names scatter_allgather; the checked collectives compare what every
  // rank resolved, so the call passes exactly when automatic chose it too.
  auto run = [](int ranks, std::size_t count) {
    sy::transport::inproc_options options = harness::options();
    options.check_collectives = true;
    return sy::transport::run_inproc(
        ranks,
        [&](sy::transport::inproc& t) -> std::string {
          sy::transport::faulty f(t);
          std::vector<float> data(count);
          for (std::size_t i = 0; i < count; ++i) data[i] = scenarios::exact_value<float>(t.rank(), i);
          try {
            if (t.rank() == 0) {
              sy::collective::broadcast(f, data, 2, sy::algorithm::scatter_allgather{});
            } else {
              sy::collective::broadcast(f, data, 2);
            }
          } catch (const sy::usage_error& e) {
            return e.what();
          }
          for (std::size_t i = 0; i < count; ++i) {
            if (data[i] != scenarios::exact_value<float>(2, i)) return "element " + std::to_string(i) + " is wrong";
          }
          return "ok";
        },
        options);
  };
  constexpr std::size_t threshold = sy::collective::ring_threshold_bytes;
  // 8 ranks: 3 rounds, scatter_allgather above 3 thresholds.
  const std::size_t above = 3 * threshold / sizeof(float) + 1;
  for (const std::string& outcome : run(8, above)) CHECK(outcome == "ok");
  for (const std::string& outcome : run(8, above - 1)) {
    CHECK(outcome.find("algorithm: scatter_allgather (rank 0) vs binomial_tree (ranks 1-7)") != std::string::npos);
  }
  for (const std::string& outcome : run(7, 64 * above)) {
    CHECK(outcome.find("algorithm: scatter_allgather (rank 0) vs binomial_tree (ranks 1-6)") != std::string::npos);
  }
}

#include <switchyard/collective/allgather.hpp>

#include "harness.hpp"
#include "scenarios.hpp"

TEST_CASE("allgather.inproc: against the sequential reference at 1, 2, 3, 4 and 7 ranks" * doctest::timeout(300)) {
  harness::run_at_every_size([](switchyard::transport::inproc& t) { return scenarios::allgather_suite(t); });
}

TEST_CASE("allgather.inproc.recursive_doubling: Bruck's all-gather at 5, 6, 8, 9, 12 and 13 ranks, where runs of "
          "blocks wrap past the last rank, also over blocks of different sizes" *
          doctest::timeout(300)) {
  for (int ranks : {5, 6, 8, 9, 12, 13}) {
    CAPTURE(ranks);
    harness::report(switchyard::transport::run_inproc(
        ranks,
        [](switchyard::transport::inproc& t) {
          std::vector<std::string> failures;
          for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1001}}) {
            scenarios::allgather_case<double, switchyard::algorithm::recursive_doubling>(t, count, failures);
            scenarios::allgather_case<std::int32_t, switchyard::algorithm::recursive_doubling>(t, count, failures);
          }
          for (std::size_t scale : {std::size_t{0}, std::size_t{1}, std::size_t{1000}}) {
            scenarios::allgather_blocks_case<float, switchyard::algorithm::recursive_doubling>(t, scale, failures);
            scenarios::allgather_blocks_case<float, switchyard::algorithm::automatic>(t, scale, failures);
          }
          return failures;
        },
        harness::options()));
  }
}

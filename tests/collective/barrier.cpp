#include <switchyard/collective/barrier.hpp>

#include "harness.hpp"
#include "scenarios.hpp"

TEST_CASE("barrier.inproc: against the sequential reference at 1, 2, 3, 4 and 7 ranks" * doctest::timeout(300)) {
  harness::run_at_every_size([](switchyard::transport::inproc& t) { return scenarios::barrier_suite(t); });
}

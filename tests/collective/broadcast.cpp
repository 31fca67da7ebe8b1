#include <switchyard/collective/broadcast.hpp>

#include "harness.hpp"
#include "scenarios.hpp"

TEST_CASE("broadcast.inproc: against the sequential reference at 1, 2, 3, 4 and 7 ranks" * doctest::timeout(300)) {
  harness::run_at_every_size([](switchyard::transport::inproc& t) { return scenarios::broadcast_suite(t); });
}

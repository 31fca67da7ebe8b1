#include <switchyard/collective/reduce_scatter.hpp>

#include "harness.hpp"
#include "scenarios.hpp"

TEST_CASE("reduce_scatter.inproc: against the sequential reference at 1, 2, 3, 4 and 7 ranks" * doctest::timeout(300)) {
  harness::run_at_every_size([](switchyard::transport::inproc& t) { return scenarios::reduce_scatter_suite(t); });
}

// switchyard/collective/compressed.hpp in process: fp16 and bf16 all-reduces at 1, 2, 3, 4 and 7
// ranks (the same scenarios run under mpiexec in tests/mpi/transport_mpi.cpp).
#include <switchyard/collective/compressed.hpp>

#include "harness.hpp"
#include "scenarios.hpp"

#include <doctest/doctest.h>

#include <functional>

namespace sy = switchyard;

static_assert(sy::is_commutative_v<sy::collective::encoded_op<sy::compression::fp16, sy::ops::sum>>);
static_assert(!sy::is_commutative_v<sy::collective::encoded_op<sy::compression::bf16, std::minus<>>>);

TEST_CASE("compressed.inproc: identical replicas within the codec's bound at 1, 2, 3, 4 and 7 ranks" *
          doctest::timeout(300)) {
  harness::run_at_every_size([](sy::transport::inproc& t) { return scenarios::compressed_suite(t); });
}

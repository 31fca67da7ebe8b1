// transport/mpi/operations.hpp: exactly switchyard's own sum, average, min and max map to MPI's
// built-in operations; anything else, even derived from one of them, does not.
#include <switchyard/transport/mpi/operations.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

namespace sy = switchyard;
using sy::transport::detail::builtin_mpi_op;
using sy::transport::detail::has_builtin_mpi_op;

namespace {

// A user's operation derived from ops::sum that is not a plain sum.
struct capped_sum : sy::ops::sum {
  template <class T>
  T operator()(T a, T b) const {
    return std::min<T>(static_cast<T>(a + b), T(100));
  }
};

}  // namespace

static_assert(has_builtin_mpi_op<sy::ops::sum>);
static_assert(has_builtin_mpi_op<sy::ops::average>);
static_assert(has_builtin_mpi_op<sy::ops::min>);
static_assert(has_builtin_mpi_op<sy::ops::max>);
static_assert(!has_builtin_mpi_op<capped_sum>);
static_assert(!has_builtin_mpi_op<const sy::ops::sum>);

TEST_CASE("mpi.operations.builtin: sum and average are MPI_SUM, min MPI_MIN, max MPI_MAX, others none") {
  CHECK(builtin_mpi_op<sy::ops::sum, float>() == MPI_SUM);
  CHECK(builtin_mpi_op<sy::ops::average, double>() == MPI_SUM);
  CHECK(builtin_mpi_op<sy::ops::min, std::int32_t>() == MPI_MIN);
  CHECK(builtin_mpi_op<sy::ops::max, std::uint64_t>() == MPI_MAX);
  CHECK(builtin_mpi_op<capped_sum, std::int32_t>() == MPI_OP_NULL);
}

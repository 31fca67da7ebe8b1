// transport/mpi/errors.hpp: a failed MPI call becomes a transport_error naming the rank, the call,
// what it was for and MPI's own words; a count beyond MPI's int is refused before MPI sees it.
#include <switchyard/transport/mpi/errors.hpp>

#include <doctest/doctest.h>

#include <climits>
#include <cstddef>
#include <string>

namespace sy = switchyard;
using sy::transport::detail::mpi_check;
using sy::transport::detail::mpi_count;
using sy::transport::detail::mpi_error_text;
using sy::transport::detail::no_peer;

TEST_CASE("mpi.errors.text: MPI's error string, one per code") {
  const std::string truncated = mpi_error_text(MPI_ERR_TRUNCATE);
  CHECK_FALSE(truncated.empty());
  CHECK(truncated != mpi_error_text(MPI_ERR_COUNT));
  CHECK(truncated.find('\0') == std::string::npos);
}

TEST_CASE("mpi.errors.check: success passes; a failure names the rank, the call, the wait and MPI's text") {
  CHECK_NOTHROW(mpi_check(MPI_SUCCESS, 0, "MPI_Send", {"send", 1, 7, 4, 2}));
  const std::string message = "rank 3: MPI_Send failed for a send of 4 elements to rank 1 with tag 7: " +
                              mpi_error_text(MPI_ERR_COUNT);
  CHECK_THROWS_WITH_AS(mpi_check(MPI_ERR_COUNT, 3, "MPI_Send", {"send", 1, 7, 4, 2}), doctest::Contains(message.c_str()),
                       sy::transport_error);
  CHECK_THROWS_WITH_AS(mpi_check(MPI_ERR_COMM, 0, "MPI_Ibarrier", {"barrier", no_peer, -1, 0, 4}),
                       doctest::Contains("rank 0: MPI_Ibarrier failed for a barrier of 4 ranks: "), sy::transport_error);
}

TEST_CASE("mpi.errors.count: up to INT_MAX elements pass as an int, one more is a usage error") {
  CHECK(mpi_count(0, 0) == 0);
  CHECK(mpi_count(std::size_t{INT_MAX}, 0) == INT_MAX);
  CHECK_THROWS_WITH_AS((void)mpi_count(std::size_t{INT_MAX} + 1, 2),
                       doctest::Contains("rank 2: 2147483648 elements exceed MPI's int count limit"), sy::usage_error);
}

// transport/mpi/node_topology.hpp under mpiexec: every process of this machine shares its node.
#include <switchyard/transport/mpi/node_topology.hpp>

#include <doctest/doctest.h>

#include <mpi.h>

namespace sy = switchyard;

TEST_CASE("topology.mpi.shared_memory: the processes of one machine are one node, in rank order") {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const sy::transport::node_topology t = sy::transport::shared_memory_topology(MPI_COMM_WORLD);
  CHECK(t == sy::transport::node_topology{0, rank, size, 1, size, size});
  CHECK_FALSE(t.hierarchical());

  // A split communicator: the odd ranks, in reverse order, still one node.
  MPI_Comm odd_or_even = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &odd_or_even);
  int part_rank = 0;
  int part_size = 0;
  MPI_Comm_rank(odd_or_even, &part_rank);
  MPI_Comm_size(odd_or_even, &part_size);
  CHECK(sy::transport::shared_memory_topology(odd_or_even) ==
        sy::transport::node_topology{0, part_rank, part_size, 1, part_size, part_size});
  MPI_Comm_free(&odd_or_even);
}

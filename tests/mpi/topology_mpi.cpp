// transport/mpi/node_topology.hpp and the MPI handle's topology hooks under mpiexec: every process
// of this machine shares its node.
#include <switchyard/transport/mpi/node_topology.hpp>

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/node_groups.hpp>
#include <switchyard/transport/mpi.hpp>

#include <doctest/doctest.h>

#include <mpi.h>

#include <any>
#include <cstddef>
#include <vector>

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

static_assert(sy::transport::has_node_topology<sy::transport::mpi>);
static_assert(sy::transport::has_group_cache<sy::transport::mpi>);

TEST_CASE("topology.mpi.handle: the handle's topology is its communicator's, a split finds its own") {
  sy::transport::mpi t;
  const int rank = t.rank();
  const int size = t.size();
  CHECK(t.topology() == sy::transport::node_topology{0, rank, size, 1, size, size});
  CHECK(sy::transport::topology_of(t) == t.topology());

  // The odd ranks in reverse order: local ranks follow the new group's ranks, not the world's.
  const sy::transport::mpi part = t.split(rank % 2, -rank);
  CHECK(part.topology() == sy::transport::node_topology{0, part.rank(), part.size(), 1, part.size(), part.size()});
}

TEST_CASE("topology.mpi.group_cache: shared by copies, a fresh one for each split") {
  sy::transport::mpi t;
  sy::transport::mpi copy = t;
  CHECK(&copy.group_cache() == &t.group_cache());
  sy::transport::mpi part = t.split(0, t.rank());
  CHECK(&part.group_cache() != &t.group_cache());
  CHECK_FALSE(part.group_cache().node_groups.has_value());

  // The hierarchical all-reduce splits its groups on the first call and keeps them for the next
  // (a group of one rank has nothing to split).
  using groups = sy::collective::node_groups<sy::transport::mpi>;
  const double n = t.size();
  std::vector<double> values(1001, 1.0);
  sy::collective::allreduce(t, values, sy::ops::sum{}, sy::algorithm::hierarchical{});
  CHECK(values == std::vector<double>(1001, n));
  groups* kept = std::any_cast<groups>(&copy.group_cache().node_groups);
  CHECK((kept != nullptr) == (t.size() > 1));
  if (kept != nullptr) CHECK(kept->node().size() == t.size());
  sy::collective::allreduce(copy, values, sy::ops::sum{}, sy::algorithm::hierarchical{});
  CHECK(std::any_cast<groups>(&t.group_cache().node_groups) == kept);
  CHECK(values == std::vector<double>(1001, n * n));
  CHECK_FALSE(part.group_cache().node_groups.has_value());
}

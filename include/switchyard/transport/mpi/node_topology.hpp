// The topology of an MPI communicator: which of its ranks share a node, found with
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), for the MPI transport's topology() hook.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/topology.hpp>

// Only the C API is used: skip MPI's deprecated C++ bindings and their warnings, as Boost.MPI does.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace switchyard::transport {

/// @brief The node of every rank of `comm` (ranks that share memory share a node), as this rank
/// sees it. Collective over `comm`: one split and two small collectives, meant to run once when a
/// handle is made (at construction and in `split`), never per call.
/// @throws transport_error naming the MPI call that failed.
/// @code
/// const switchyard::transport::node_topology where = switchyard::transport::shared_memory_topology(MPI_COMM_WORLD);
/// @endcode
inline node_topology shared_memory_topology(MPI_Comm comm) {
  using switchyard::detail::raise;
  using switchyard::detail::str;
  const auto check = [](int code, const char* call) {
    if (code != MPI_SUCCESS) {
      raise<transport_error>(str("shared_memory_topology: ", call, " failed with MPI error ", code));
    }
  };
  int rank = 0;
  int size = 1;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  // Keyed by rank, so local rank 0 is the node's lowest rank: its leader, which names the node.
  int leader = rank;
  const int shared = MPI_Bcast(&leader, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  check(shared, "MPI_Bcast");
  std::vector<int> leaders(static_cast<std::size_t>(size));
  check(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm), "MPI_Allgather");

  // Nodes are numbered in the order of their leaders, which is the order of their lowest ranks.
  std::vector<int> sorted = leaders;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  node_topology t;
  t.nodes = static_cast<int>(sorted.size());
  t.node = static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), leader) - sorted.begin());
  t.local_rank = static_cast<int>(std::count(leaders.begin(), leaders.begin() + rank, leader));
  t.local_size = static_cast<int>(std::count(leaders.begin(), leaders.end(), leader));
  t.largest_node = 0;
  t.smallest_node = size;
  for (const int each : sorted) {
    const int ranks = static_cast<int>(std::count(leaders.begin(), leaders.end(), each));
    t.largest_node = std::max(t.largest_node, ranks);
    t.smallest_node = std::min(t.smallest_node, ranks);
  }
  return t;
}

}  // namespace switchyard::transport

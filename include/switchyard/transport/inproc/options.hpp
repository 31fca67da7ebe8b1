// The settings of an in-process world: how long a wait may take, how long a waiting rank spins
// before it sleeps, whether collectives are checked, and how ranks group into virtual nodes.
#pragma once

#include <switchyard/transport/transport.hpp>

#include <chrono>
#include <vector>

namespace switchyard::transport {

/// @brief Settings of an in-process world.
struct inproc_options {
  /// A wait (receive, send, barrier, collective) that has not completed after this long ends in
  /// `timeout_error` naming the rank, the peer and the tag. Must be positive;
  /// `std::chrono::milliseconds::max()` waits forever.
  std::chrono::milliseconds timeout = std::chrono::minutes(2);
  /// How many times a waiting rank yields before it sleeps; spinning wins for short waits when
  /// ranks have cores of their own, sleeping wins when they share them.
  int spin = 64;
  /// Every collective first exchanges a fingerprint of the call with the other ranks and raises
  /// `usage_error` on every rank when they differ (docs/collectives.md#checked-collectives).
  /// Default: the environment variable `SWITCHYARD_CHECK_COLLECTIVES`.
  bool check_collectives = check_collectives_from_environment();
  /// Virtual nodes: consecutive ranks grouped into nodes of these sizes, which `topology()`
  /// reports (`{3, 1, 2}`: ranks 0-2, rank 3, ranks 4-5). The sizes must be positive and add up to
  /// the world size, else the world's constructor throws `usage_error`. Empty (the default): all
  /// ranks are one node, as the threads of one process are.
  std::vector<int> node_sizes{};
  /// Deals the ranks to the virtual nodes in turn instead, as `mpirun` places ranks by default:
  /// each rank goes to the next node that has room (`{3, 1, 2}`: ranks 0, 3 and 5 on node 0, rank 1
  /// on node 1, ranks 2 and 4 on node 2).
  bool round_robin_nodes = false;
};

}  // namespace switchyard::transport

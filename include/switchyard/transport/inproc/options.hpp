// The settings of an in-process world: how long a wait may take, how long a waiting rank spins
// before it sleeps, and whether collectives are checked.
#pragma once

#include <switchyard/transport/transport.hpp>

#include <chrono>

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
};

}  // namespace switchyard::transport

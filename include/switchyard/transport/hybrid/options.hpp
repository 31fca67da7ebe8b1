// The settings of a hybrid world: how long a wait may take, how a waiting thread waits, and
// whether collectives are checked.
#pragma once

#include <switchyard/transport/mpi/options.hpp>
#include <switchyard/transport/transport.hpp>

#include <chrono>

namespace switchyard::transport {

/// @brief Settings of a hybrid world (transport::hybrid): the same on every process.
struct hybrid_options {
  /// A wait (receive, send, barrier) that has not completed after this long ends in
  /// `timeout_error` naming the rank, the peer and the tag, on the threads of this node and across
  /// nodes alike. Must be positive; `std::chrono::milliseconds::max()` waits forever.
  std::chrono::milliseconds timeout = std::chrono::minutes(2);
  /// How many times a thread waiting for a thread of its own node yields before it sleeps
  /// (`inproc_options::spin`).
  int spin = 64;
  /// How a thread waits for a message from another node: `mpi_wait::spin` tests and yields,
  /// `mpi_wait::passive` tests and sleeps with a short backoff, giving up the core. Default: the
  /// environment variable `SWITCHYARD_MPI_WAIT`, else `spin`.
  mpi_wait wait = detail::wait_from_environment();
  /// Every collective first exchanges a fingerprint of the call with the other ranks
  /// (docs/collectives.md#checked-collectives). Default: `SWITCHYARD_CHECK_COLLECTIVES`.
  bool check_collectives = check_collectives_from_environment();
};

}  // namespace switchyard::transport

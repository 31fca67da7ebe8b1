// The MPI transport: a rank's handle on any boost::mpi::communicator (Open MPI, MPICH, under
// mpirun or Slurm). Arithmetic spans travel as MPI datatypes, never serialized; the native
// collectives are MPI's own. An optional stall watchdog ends the job when a wait does not finish,
// and a passive wait policy lets a waiting rank give up its core. The pieces live in
// transport/mpi/: options.hpp (mpi_options, mpi_wait), site.hpp (what a wait is for),
// watchdog.hpp (the stall watchdog and its report), wait.hpp (spinning and passive waits),
// errors.hpp (MPI's return codes as errors), operations.hpp (MPI's built-in operations),
// request.hpp (mpi_request) and handle.hpp (mpi).
#pragma once

#include <switchyard/transport/mpi/errors.hpp>
#include <switchyard/transport/mpi/handle.hpp>
#include <switchyard/transport/mpi/node_topology.hpp>
#include <switchyard/transport/mpi/operations.hpp>
#include <switchyard/transport/mpi/options.hpp>
#include <switchyard/transport/mpi/request.hpp>
#include <switchyard/transport/mpi/site.hpp>
#include <switchyard/transport/mpi/wait.hpp>
#include <switchyard/transport/mpi/watchdog.hpp>

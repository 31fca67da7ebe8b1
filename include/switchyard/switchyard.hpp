// The umbrella header: everything switchyard offers whose dependencies the build provides.
// The core (transports in process, collectives) needs only the standard library; the MPI
// transport comes with `dependency('switchyard-mpi')`, which defines SWITCHYARD_HAS_MPI.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/barrier.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/collective/partition.hpp>
#include <switchyard/collective/reduce_scatter.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/transport/transport.hpp>

#if defined(SWITCHYARD_HAS_MPI)
#include <switchyard/transport/mpi.hpp>
#endif

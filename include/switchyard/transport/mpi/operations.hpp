// Which of switchyard's operations are MPI's built-in ones (MPI_SUM, MPI_MIN, MPI_MAX), so that
// the MPI handle's native collectives take only those.
#pragma once

#include <switchyard/core/operations.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings

#include <type_traits>

namespace switchyard::transport::detail {

// Exactly the built-in operations: a user's operation derived from ops::sum may compute
// something else, so it never maps to MPI_SUM.
template <class Op, class T>
MPI_Op builtin_mpi_op() {
  if constexpr (std::is_same_v<Op, ops::sum> || std::is_same_v<Op, ops::average>) {
    return MPI_SUM;
  } else if constexpr (std::is_same_v<Op, ops::min>) {
    return MPI_MIN;
  } else if constexpr (std::is_same_v<Op, ops::max>) {
    return MPI_MAX;
  } else {
    return MPI_OP_NULL;
  }
}

template <class Op>
inline constexpr bool has_builtin_mpi_op =
    std::is_same_v<Op, ops::sum> || std::is_same_v<Op, ops::average> || std::is_same_v<Op, ops::min> ||
    std::is_same_v<Op, ops::max>;

}  // namespace switchyard::transport::detail

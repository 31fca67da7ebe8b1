// MPI's return codes as switchyard's errors: a failed call becomes a transport_error naming the
// rank, the call and what it was for; a count MPI's int cannot hold is a usage_error.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/mpi/site.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings

#include <climits>
#include <cstddef>
#include <string>

namespace switchyard::transport::detail {

using switchyard::detail::raise;
using switchyard::detail::str;

inline std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

// Calls into MPI return codes, not exceptions: the communicators we make are set to
// MPI_ERRORS_RETURN, and this turns a failure into a transport_error naming the rank and call,
// and, for a message or a collective, what it was (peer, tag, element count).
inline void mpi_check(int code, int rank, const char* call, const wait_site& site) {
  if (code != MPI_SUCCESS) {
    raise<transport_error>(str("rank ", rank, ": ", call, " failed for ", describe(site), ": ", mpi_error_text(code)));
  }
}

inline int mpi_count(std::size_t count, int rank) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    raise<usage_error>(str("rank ", rank, ": ", count, " elements exceed MPI's int count limit"));
  }
  return static_cast<int>(count);
}

}  // namespace switchyard::transport::detail

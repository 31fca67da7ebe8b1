// Barrier: no rank leaves before every rank has arrived.
#pragma once

#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/detail/fingerprint.hpp>
#include <switchyard/transport/transport.hpp>

namespace switchyard::collective {

/// @brief Blocks until every rank of `t` has called it; the transport's own barrier (a shared
/// counter in process, `MPI_Barrier` under MPI).
/// @code
/// switchyard::collective::barrier(t);
/// @endcode
/// @tparam Transport a `transport::transport`.
template <class Transport>
void barrier(Transport& t) {
  detail::require_transport<Transport>();
  detail::in_context("barrier", t.rank(), 0, [&] {
    detail::check_call<void>(t, {detail::operation::barrier});
    t.barrier();
  });
}

}  // namespace switchyard::collective

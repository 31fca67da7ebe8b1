// A non-blocking send or receive on the MPI transport: it owns an MPI_Request, completes under
// the handle's watchdog and wait policy, and checks that a receive got the size it expects.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/mpi/errors.hpp>
#include <switchyard/transport/mpi/site.hpp>
#include <switchyard/transport/mpi/wait.hpp>
#include <switchyard/transport/mpi/watchdog.hpp>
#include <switchyard/transport/transport.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings

#include <cstddef>
#include <utility>

namespace switchyard::transport {

class mpi;

/// @brief A non-blocking MPI send or receive: movable, completes on `wait()`; destroying a pending
/// one waits for it, since MPI still owns the buffer. Both waits are under the handle's watchdog.
class mpi_request {
 public:
  mpi_request() = default;
  mpi_request(mpi_request&& other) noexcept
      : request_(std::exchange(other.request_, MPI_REQUEST_NULL)), watch_(other.watch_), site_(other.site_),
        element_(other.element_), exact_(other.exact_), status_(other.status_) {}
  mpi_request& operator=(mpi_request&& other) noexcept {
    if (this != &other) {
      complete_quietly();
      request_ = std::exchange(other.request_, MPI_REQUEST_NULL);
      watch_ = other.watch_;
      site_ = other.site_;
      element_ = other.element_;
      exact_ = other.exact_;
      status_ = other.status_;
    }
    return *this;
  }
  mpi_request(const mpi_request&) = delete;
  mpi_request& operator=(const mpi_request&) = delete;
  ~mpi_request() { complete_quietly(); }

  /// Blocks until done; throws `transport_error` if MPI failed or a receive got a message of
  /// another size than its buffer. With the watchdog on, a wait past its timeout ends the job.
  void wait() {
    if (request_ == MPI_REQUEST_NULL) return;
    MPI_Status status;
    detail::mpi_check(detail::watched_wait(request_, &status, watch_, site_), watch_.rank, "MPI_Wait", site_);
    record(status);
  }
  bool test() {
    if (request_ == MPI_REQUEST_NULL) return true;
    int done = 0;
    MPI_Status status;
    detail::mpi_check(MPI_Test(&request_, &done, &status), watch_.rank, "MPI_Test", site_);
    if (done) record(status);
    return done != 0;
  }
  [[nodiscard]] message_status status() const noexcept { return status_; }

 private:
  friend class mpi;
  mpi_request(MPI_Request request, const detail::watchdog& watch, const detail::wait_site& site, MPI_Datatype element,
              bool exact)
      : request_(request), watch_(watch), site_(site), element_(element), exact_(exact) {}

  void record(const MPI_Status& status) {
    if (element_ == MPI_DATATYPE_NULL) return;  // a send
    int count = 0;
    MPI_Get_count(&status, element_, &count);
    status_ = {status.MPI_SOURCE, status.MPI_TAG, static_cast<std::size_t>(count)};
    if (exact_ && status_.count != site_.count) {
      detail::raise<transport_error>(detail::str("rank ", watch_.rank, ": message from rank ", status.MPI_SOURCE,
                                                 " with tag ", status.MPI_TAG, " has ", count,
                                                 " elements but the receive expects ", site_.count));
    }
  }
  void complete_quietly() noexcept {
    if (request_ != MPI_REQUEST_NULL) detail::watched_wait(request_, MPI_STATUS_IGNORE, watch_, site_);
  }

  MPI_Request request_ = MPI_REQUEST_NULL;
  detail::watchdog watch_;
  detail::wait_site site_;  // its count is the receive's expected element count
  MPI_Datatype element_ = MPI_DATATYPE_NULL;
  bool exact_ = true;
  message_status status_;
};

}  // namespace switchyard::transport

// A non-blocking send or receive on the hybrid transport: an in-process request for a thread of
// the same process, an MPI request for a thread of another, and for a receive from any rank both
// halves, the in-process one posted and the MPI one probed, until one of them has a message.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/hybrid/group.hpp>
#include <switchyard/transport/hybrid/process.hpp>
#include <switchyard/transport/inproc/request.hpp>
#include <switchyard/transport/mpi/errors.hpp>
#include <switchyard/transport/mpi/site.hpp>
#include <switchyard/transport/transport.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

namespace switchyard::transport {

class hybrid;

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief A non-blocking send or receive on the hybrid transport (transport::hybrid).
///
/// Movable, not copyable; a default-constructed request is complete. Destroying one that has not
/// completed cancels it when it waits for a thread of this process, and waits for it when MPI
/// owns its buffer.
class hybrid_request {
 public:
  hybrid_request() = default;
  hybrid_request(hybrid_request&& other) noexcept { take(other); }
  hybrid_request& operator=(hybrid_request&& other) noexcept {
    if (this != &other) {
      retire();
      take(other);
    }
    return *this;
  }
  hybrid_request(const hybrid_request&) = delete;
  hybrid_request& operator=(const hybrid_request&) = delete;
  ~hybrid_request() { retire(); }

  /// Blocks until the operation completes; throws `transport_error` if it failed (a message of
  /// another size than an exact receive expects, a thread of this process failed) and
  /// `timeout_error` after `hybrid_options::timeout`.
  void wait();
  /// Whether the operation completed (throws as `wait` does if it failed).
  bool test();
  /// What a completed receive got: the sender's rank in the group, the tag, the element count.
  [[nodiscard]] message_status status() const noexcept { return status_; }

 private:
  friend class hybrid;
  enum class kind { done, local, remote, any };

  // Polls once; true when complete.
  bool poll();
  bool poll_remote();
  bool poll_any();
  void record_local();
  std::string describe() const;
  void take(hybrid_request& other) noexcept;
  void retire() noexcept;

  kind kind_ = kind::done;
  std::shared_ptr<detail::hybrid_group> group_;
  inproc_request local_;
  MPI_Request remote_ = MPI_REQUEST_NULL;
  detail::wait_site site_;  // operation, peer (group rank), tag, element count
  void* buffer_ = nullptr;  // an any-source receive's
  MPI_Datatype element_ = MPI_DATATYPE_NULL;  // a receive's
  bool receive_ = false;
  bool exact_ = true;
  message_status status_;
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

inline void hybrid_request::take(hybrid_request& other) noexcept {
  kind_ = std::exchange(other.kind_, kind::done);
  group_ = std::move(other.group_);
  local_ = std::move(other.local_);
  remote_ = std::exchange(other.remote_, MPI_REQUEST_NULL);
  site_ = other.site_;
  buffer_ = other.buffer_;
  element_ = other.element_;
  receive_ = other.receive_;
  exact_ = other.exact_;
  status_ = other.status_;
}

inline std::string hybrid_request::describe() const { return detail::describe(site_); }

inline void hybrid_request::record_local() {
  const message_status got = local_.status();
  if (!receive_ || got.source < 0) return;  // a send, or a cancelled receive
  status_ = {group_->local_ranks[static_cast<std::size_t>(got.source)], got.tag, got.count};
}

inline bool hybrid_request::poll_remote() {
  int done = 0;
  MPI_Status status;
  detail::mpi_check(MPI_Test(&remote_, &done, &status), group_->rank, "MPI_Test", site_);
  if (done == 0) return false;
  if (element_ != MPI_DATATYPE_NULL) {
    int count = 0;
    MPI_Get_count(&status, element_, &count);
    status_ = {site_.peer, site_.tag, static_cast<std::size_t>(count)};
    if (exact_ && status_.count != site_.count) {
      detail::raise<transport_error>(detail::str("rank ", group_->rank, ": message from rank ", site_.peer,
                                                 " with tag ", site_.tag, " has ", count,
                                                 " elements but the receive expects ", site_.count));
    }
  }
  return true;
}

inline bool hybrid_request::poll_any() {
  if (local_.test()) {
    record_local();
    return true;
  }
  detail::hybrid_group& g = *group_;
  const detail::hybrid_tag_layout& layout = g.process->layout;
  MPI_Comm comm = g.comm_of(g.me().slot);
  for (const int slot : g.remote_slots) {
    int found = 0;
    MPI_Status probed;
    const int tag = layout.encode(g.context, slot, site_.tag);
    detail::mpi_check(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &found, &probed), g.rank, "MPI_Iprobe", site_);
    if (found == 0) continue;
    // A thread of this process may have matched the in-process half meanwhile: its message is
    // then the one received, and the probed one stays queued for the next receive.
    if (!local_.cancel_unmatched()) continue;
    int count = 0;
    MPI_Get_count(&probed, element_, &count);
    const int source = g.rank_of(probed.MPI_SOURCE, slot);
    if (exact_ && static_cast<std::size_t>(count) != site_.count) {
      detail::raise<transport_error>(detail::str("rank ", g.rank, ": message from rank ", source, " with tag ",
                                                 site_.tag, " has ", count, " elements but the receive expects ",
                                                 site_.count));
    }
    if (static_cast<std::size_t>(count) > site_.count) {
      detail::raise<transport_error>(detail::str("rank ", g.rank, ": message from rank ", source, " with tag ",
                                                 site_.tag, " has ", count, " elements but the receive buffer holds only ",
                                                 site_.count));
    }
    // Only this thread receives on its slot's communicator, so the probed message is the one taken.
    detail::mpi_check(MPI_Recv(buffer_, count, element_, probed.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE), g.rank,
                      "MPI_Recv", site_);
    status_ = {source, site_.tag, static_cast<std::size_t>(count)};
    return true;
  }
  return false;
}

inline bool hybrid_request::poll() {
  switch (kind_) {
    case kind::done:
      return true;
    case kind::local:
      if (!local_.test()) return false;
      record_local();
      return true;
    case kind::remote:
      return poll_remote();
    case kind::any:
      return poll_any();
  }
  return true;
}

inline void hybrid_request::wait() {
  if (kind_ == kind::done) return;
  if (kind_ == kind::local) {
    local_.wait();
    record_local();
  } else {
    detail::hybrid_wait(*group_->process, group_->rank, [this] { return poll(); }, [this] { return describe(); });
  }
  kind_ = kind::done;
}

inline bool hybrid_request::test() {
  if (!poll()) return false;
  kind_ = kind::done;
  return true;
}

inline void hybrid_request::retire() noexcept {
  if (kind_ == kind::remote && remote_ != MPI_REQUEST_NULL) {
    // MPI owns the buffer until the operation completes: a receive is withdrawn, a send finishes.
    if (receive_) MPI_Cancel(&remote_);
    MPI_Wait(&remote_, MPI_STATUS_IGNORE);
  }
  // An in-process half cancels itself; an unreceived MPI message of an any-source receive stays queued.
  local_ = inproc_request();
  kind_ = kind::done;
}

}  // namespace switchyard::transport

// The MPI transport: a rank's handle on any boost::mpi::communicator (Open MPI, MPICH, under
// mpirun or Slurm). Arithmetic spans travel as MPI datatypes, never serialized; the native
// collectives are MPI's own.
#pragma once

#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/transport/transport.hpp>
#include <switchyard/collective/partition.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/datatype.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/mpi/operations.hpp>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::transport {

class mpi;

namespace detail {

using switchyard::detail::raise;
using switchyard::detail::str;

inline std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

// Calls into MPI return codes, not exceptions: the communicators we make are set to
// MPI_ERRORS_RETURN, and this turns a failure into a transport_error naming the rank and call.
inline void mpi_check(int code, int rank, const char* call) {
  if (code != MPI_SUCCESS) {
    raise<transport_error>(str("rank ", rank, ": ", call, " failed: ", mpi_error_text(code)));
  }
}

inline int mpi_count(std::size_t count, int rank) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    raise<usage_error>(str("rank ", rank, ": ", count, " elements exceed MPI's int count limit"));
  }
  return static_cast<int>(count);
}

template <class Op, class T>
MPI_Op builtin_mpi_op() {
  if constexpr (std::is_base_of_v<ops::sum, Op>) {
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
    std::is_base_of_v<ops::sum, Op> || std::is_same_v<Op, ops::min> || std::is_same_v<Op, ops::max>;

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief A non-blocking MPI send or receive: movable, completes on `wait()`; destroying a pending
/// one waits for it, since MPI still owns the buffer.
class mpi_request {
 public:
  mpi_request() = default;
  mpi_request(mpi_request&& other) noexcept
      : request_(std::exchange(other.request_, MPI_REQUEST_NULL)), rank_(other.rank_), element_(other.element_),
        expected_(other.expected_), exact_(other.exact_), status_(other.status_) {}
  mpi_request& operator=(mpi_request&& other) noexcept {
    if (this != &other) {
      complete_quietly();
      request_ = std::exchange(other.request_, MPI_REQUEST_NULL);
      rank_ = other.rank_;
      element_ = other.element_;
      expected_ = other.expected_;
      exact_ = other.exact_;
      status_ = other.status_;
    }
    return *this;
  }
  mpi_request(const mpi_request&) = delete;
  mpi_request& operator=(const mpi_request&) = delete;
  ~mpi_request() { complete_quietly(); }

  /// Blocks until done; throws `transport_error` if MPI failed or a receive got a message of
  /// another size than its buffer.
  void wait() {
    if (request_ == MPI_REQUEST_NULL) return;
    MPI_Status status;
    detail::mpi_check(MPI_Wait(&request_, &status), rank_, "MPI_Wait");
    record(status);
  }
  bool test() {
    if (request_ == MPI_REQUEST_NULL) return true;
    int done = 0;
    MPI_Status status;
    detail::mpi_check(MPI_Test(&request_, &done, &status), rank_, "MPI_Test");
    if (done) record(status);
    return done != 0;
  }
  [[nodiscard]] message_status status() const noexcept { return status_; }

 private:
  friend class mpi;
  mpi_request(MPI_Request request, int rank, MPI_Datatype element, std::size_t expected, bool exact)
      : request_(request), rank_(rank), element_(element), expected_(expected), exact_(exact) {}

  void record(const MPI_Status& status) {
    if (element_ == MPI_DATATYPE_NULL) return;  // a send
    int count = 0;
    MPI_Get_count(&status, element_, &count);
    status_ = {status.MPI_SOURCE, status.MPI_TAG, static_cast<std::size_t>(count)};
    if (exact_ && status_.count != expected_) {
      detail::raise<transport_error>(detail::str("rank ", rank_, ": message from rank ", status.MPI_SOURCE,
                                                 " with tag ", status.MPI_TAG, " has ", count,
                                                 " elements but the receive expects ", expected_));
    }
  }
  void complete_quietly() noexcept {
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }

  MPI_Request request_ = MPI_REQUEST_NULL;
  int rank_ = 0;
  MPI_Datatype element_ = MPI_DATATYPE_NULL;
  std::size_t expected_ = 0;
  bool exact_ = true;
  message_status status_;
};

/// @brief One rank's handle on an MPI communicator.
///
/// It does not initialize MPI: construct a `boost::mpi::environment` (or call `MPI_Init`) first,
/// or use `mpi::environment`. Any communicator works (world, a split, one from Slurm);
/// the handle duplicates it so switchyard's messages never mix with the application's, and sets
/// it to return errors so that they surface as `transport_error`.
/// @code
/// boost::mpi::environment env;
/// switchyard::transport::mpi t{boost::mpi::communicator{}};
/// switchyard::collective::allreduce(t, grad, switchyard::ops::average{});
/// @endcode
class mpi {
 public:
  using request = mpi_request;
  /// An owned MPI environment, for programs that let switchyard initialize MPI.
  using environment = boost::mpi::environment;

  /// A handle on a duplicate of `MPI_COMM_WORLD`.
  mpi() : mpi(boost::mpi::communicator()) {}
  explicit mpi(const boost::mpi::communicator& communicator)
      : communicator_(communicator, boost::mpi::comm_duplicate) {
    MPI_Comm_set_errhandler(static_cast<MPI_Comm>(communicator_), MPI_ERRORS_RETURN);
    rank_ = communicator_.rank();
    size_ = communicator_.size();
  }

  /// Whether an MPI launcher (Open MPI's mpirun, MPICH's hydra, Slurm's srun) started this
  /// process, even as a world of one: programs that run in process otherwise check it before
  /// choosing their transport. Ask before MPI is initialized: Open MPI's singleton start-up sets
  /// the same variables.
  [[nodiscard]] static bool launched() noexcept {
    return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
           std::getenv("PMIX_RANK") != nullptr;
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  /// The duplicated communicator, for the application's own Boost.MPI calls (serialized control
  /// messages, for instance).
  [[nodiscard]] const boost::mpi::communicator& communicator() const noexcept { return communicator_; }

  template <arithmetic T>
  void send(std::span<const T> data, int destination, int tag) {
    check_peer(destination, "send");
    detail::mpi_check(MPI_Send(data.data(), detail::mpi_count(data.size(), rank_), boost::mpi::get_mpi_datatype<T>(),
                               destination, tag, comm()),
                      rank_, "MPI_Send");
  }
  template <arithmetic T>
  void recv(std::span<T> data, int source, int tag) {
    irecv(data, source, tag).wait();
  }
  template <arithmetic T>
  [[nodiscard]] mpi_request isend(std::span<const T> data, int destination, int tag) {
    check_peer(destination, "send");
    MPI_Request request;
    detail::mpi_check(MPI_Isend(data.data(), detail::mpi_count(data.size(), rank_), boost::mpi::get_mpi_datatype<T>(),
                                destination, tag, comm(), &request),
                      rank_, "MPI_Isend");
    return mpi_request(request, rank_, MPI_DATATYPE_NULL, data.size(), true);
  }
  template <arithmetic T>
  [[nodiscard]] mpi_request irecv(std::span<T> data, int source, int tag) {
    if (source != any_source) check_peer(source, "receive");
    return post_receive(data, source == any_source ? MPI_ANY_SOURCE : source, tag, true);
  }
  /// Receives the next message with `tag` (`any_tag` for any) from any rank; it may hold fewer
  /// elements than `data`, never more.
  template <arithmetic T>
  message_status recv_any(std::span<T> data, int tag) {
    mpi_request request = post_receive(data, MPI_ANY_SOURCE, tag, false);
    request.wait();
    return request.status();
  }

  void barrier() { detail::mpi_check(MPI_Barrier(comm()), rank_, "MPI_Barrier"); }

  /// Collective: ranks with the same `color` (>= 0) form a new communicator ordered by (key, rank).
  [[nodiscard]] mpi split(int color, int key) const {
    if (color < 0) detail::raise<usage_error>(detail::str("rank ", rank_, ": split color must be >= 0, got ", color));
    return mpi(communicator_.split(color, key));
  }

  template <arithmetic T, class Op>
    requires detail::has_builtin_mpi_op<Op>
  void native_allreduce(std::span<T> data, Op) {
    detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, data.data(), detail::mpi_count(data.size(), rank_),
                                    boost::mpi::get_mpi_datatype<T>(), detail::builtin_mpi_op<Op, T>(), comm()),
                      rank_, "MPI_Allreduce");
    if constexpr (finalized_reduction<Op, T>) {
      for (T& v : data) v = Op::finalize(v, size_);
    }
  }
  template <arithmetic T>
  void native_broadcast(std::span<T> data, int root) {
    detail::mpi_check(MPI_Bcast(data.data(), detail::mpi_count(data.size(), rank_), boost::mpi::get_mpi_datatype<T>(),
                                root, comm()),
                      rank_, "MPI_Bcast");
  }
  template <arithmetic T>
  void native_allgather(std::span<const T> mine, std::span<T> all) {
    const int count = detail::mpi_count(mine.size(), rank_);
    detail::mpi_check(MPI_Allgather(mine.data(), count, boost::mpi::get_mpi_datatype<T>(), all.data(), count,
                                    boost::mpi::get_mpi_datatype<T>(), comm()),
                      rank_, "MPI_Allgather");
  }
  template <arithmetic T, class Op>
    requires detail::has_builtin_mpi_op<Op>
  std::span<T> native_reduce_scatter(std::span<T> data, Op) {
    // MPI leaves this rank's block at the front of the buffer; move it to its place.
    counts_.resize(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      counts_[static_cast<std::size_t>(r)] = detail::mpi_count(
          collective::block_of(data.size(), static_cast<std::size_t>(size_), static_cast<std::size_t>(r)).size, rank_);
    }
    detail::mpi_check(MPI_Reduce_scatter(MPI_IN_PLACE, data.data(), counts_.data(), boost::mpi::get_mpi_datatype<T>(),
                                         detail::builtin_mpi_op<Op, T>(), comm()),
                      rank_, "MPI_Reduce_scatter");
    const collective::block mine =
        collective::block_of(data.size(), static_cast<std::size_t>(size_), static_cast<std::size_t>(rank_));
    std::copy_backward(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(mine.size),
                       data.begin() + static_cast<std::ptrdiff_t>(mine.offset + mine.size));
    std::span<T> result = data.subspan(mine.offset, mine.size);
    if constexpr (finalized_reduction<Op, T>) {
      for (T& v : result) v = Op::finalize(v, size_);
    }
    return result;
  }

 private:
  MPI_Comm comm() const { return static_cast<MPI_Comm>(communicator_); }

  void check_peer(int peer, const char* what) const {
    if (peer < 0 || peer >= size_) {
      detail::raise<usage_error>(
          detail::str("rank ", rank_, ": ", what, " names rank ", peer, " but the group has ranks 0 to ", size_ - 1));
    }
  }

  template <class T>
  mpi_request post_receive(std::span<T> data, int source, int tag, bool exact) {
    MPI_Request request;
    detail::mpi_check(MPI_Irecv(data.data(), detail::mpi_count(data.size(), rank_), boost::mpi::get_mpi_datatype<T>(),
                                source, tag == any_tag ? MPI_ANY_TAG : tag, comm(), &request),
                      rank_, "MPI_Irecv");
    return mpi_request(request, rank_, boost::mpi::get_mpi_datatype<T>(), data.size(), exact);
  }

  boost::mpi::communicator communicator_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<int> counts_;
};

}  // namespace switchyard::transport

// One rank's handle on an MPI communicator: point-to-point messages, barrier, split, and MPI's
// own collectives as the native hooks.
#pragma once

#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/transport/mpi/errors.hpp>
#include <switchyard/transport/mpi/node_topology.hpp>
#include <switchyard/transport/mpi/operations.hpp>
#include <switchyard/transport/mpi/options.hpp>
#include <switchyard/transport/mpi/request.hpp>
#include <switchyard/transport/mpi/site.hpp>
#include <switchyard/transport/mpi/wait.hpp>
#include <switchyard/transport/mpi/watchdog.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings
#include <boost/mpi/datatype.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

namespace switchyard::transport {

/// @brief One rank's handle on an MPI communicator.
///
/// It does not initialize MPI: construct a `boost::mpi::environment` (or call `MPI_Init`) first,
/// or use `mpi::environment`. Any communicator works (world, a split, one from Slurm);
/// the handle duplicates it so switchyard's messages never mix with the application's, and sets
/// it to return errors so that they surface as `transport_error`. With `mpi_options::timeout` (or
/// `SWITCHYARD_TIMEOUT`) set, a stall watchdog ends the job instead of letting a wait block forever;
/// with `mpi_options::wait` (or `SWITCHYARD_MPI_WAIT`) `passive`, a waiting rank sleeps instead of
/// spinning. Its `topology()` groups the ranks that share memory into nodes
/// (`shared_memory_topology`), found once when the handle is made.
/// @code
/// boost::mpi::environment env;
/// switchyard::transport::mpi t{boost::mpi::communicator{}};
/// switchyard::collective::allreduce(t, grad, switchyard::ops::average{});
/// switchyard::transport::mpi watched{switchyard::transport::mpi_options{.timeout = std::chrono::minutes(5)}};
/// switchyard::transport::mpi sleeper{switchyard::transport::mpi_options{.wait = switchyard::transport::mpi_wait::passive}};
/// @endcode
class mpi {
 public:
  using request = mpi_request;
  /// An owned MPI environment, for programs that let switchyard initialize MPI.
  using environment = boost::mpi::environment;

  /// A handle on a duplicate of `MPI_COMM_WORLD`.
  mpi() : mpi(boost::mpi::communicator()) {}
  explicit mpi(mpi_options options) : mpi(boost::mpi::communicator(), options) {}
  /// A handle on a duplicate of `communicator`. Constructing one is collective over it: it also
  /// finds the communicator's nodes (`MPI_Comm_split_type` and two small collectives).
  explicit mpi(const boost::mpi::communicator& communicator, mpi_options options = {})
      : communicator_(communicator, boost::mpi::comm_duplicate), options_(options) {
    if (options_.timeout < std::chrono::milliseconds::zero()) {
      detail::raise<usage_error>(detail::str("mpi_options::timeout must be >= 0 (0 turns the watchdog off), got ",
                                             options_.timeout.count(), " ms"));
    }
    if (options_.wait != mpi_wait::spin && options_.wait != mpi_wait::passive) {
      detail::raise<usage_error>(detail::str("mpi_options::wait must be mpi_wait::spin or mpi_wait::passive, got ",
                                             static_cast<int>(options_.wait)));
    }
    MPI_Comm_set_errhandler(static_cast<MPI_Comm>(communicator_), MPI_ERRORS_RETURN);
    rank_ = communicator_.rank();
    size_ = communicator_.size();
    watch_.timeout = options_.timeout;
    watch_.policy = options_.wait;
    watch_.rank = rank_;
    MPI_Comm_rank(MPI_COMM_WORLD, &watch_.world_rank);
    checks_->enabled = options_.check_collectives;
    topology_ = shared_memory_topology(comm());
  }

  /// Whether threads other than the one that initialized MPI may call it, one at a time: the
  /// environment was initialized with `boost::mpi::threading::serialized` or above. An
  /// overlapped all-reduce (`strategy::exchange::overlapped`) calls the transport from its
  /// communication thread, and refuses to start otherwise.
  [[nodiscard]] static bool serves_other_threads() {
    return boost::mpi::environment::thread_level() >= boost::mpi::threading::serialized;
  }
  /// Whether several threads may call MPI at the same time: the environment was initialized with
  /// `boost::mpi::threading::multiple`. Co-located parameter servers (`strategy::colocated`) serve
  /// on a thread while the worker calls MPI too, and refuse to start otherwise.
  [[nodiscard]] static bool serves_concurrent_threads() {
    return boost::mpi::environment::thread_level() >= boost::mpi::threading::multiple;
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
  [[nodiscard]] const mpi_options& options() const noexcept { return options_; }
  /// Whether `algorithm::automatic` takes MPI's own collectives: not under the passive wait
  /// policy, where a non-blocking MPI collective advances about one round per test, so
  /// switchyard's algorithms, which wait message by message, move large buffers 2 to 3 times
  /// faster (docs/cluster.md). Every rank must use the same wait policy.
  [[nodiscard]] bool prefers_native() const noexcept { return options_.wait != mpi_wait::passive; }
  /// This rank's collective checks on this communicator (shared by copies of the handle), on
  /// when `mpi_options::check_collectives` is.
  [[nodiscard]] collective_check_state& collective_checks() noexcept { return *checks_; }
  /// This rank's node: the ranks of the communicator that share memory with it
  /// (`MPI_COMM_TYPE_SHARED`, which Open MPI and MPICH answer by host), found when the handle was
  /// made. A handle made by `split` finds its own.
  [[nodiscard]] node_topology topology() const noexcept { return topology_; }
  /// What the collectives keep between calls on this communicator (see transport/topology.hpp),
  /// shared by copies of the handle; a handle made by `split` starts with an empty one.
  [[nodiscard]] transport::group_cache& group_cache() noexcept { return *cache_; }

  template <arithmetic T>
  void send(std::span<const T> data, int destination, int tag) {
    if (polls()) {
      isend(data, destination, tag).wait();
      return;
    }
    check_peer(destination, "send");
    detail::mpi_check(MPI_Send(data.data(), detail::mpi_count(data.size(), rank_), boost::mpi::get_mpi_datatype<T>(),
                               destination, tag, comm()),
                      rank_, "MPI_Send", {"send", destination, tag, data.size(), size_});
  }
  template <arithmetic T>
  void recv(std::span<T> data, int source, int tag) {
    irecv(data, source, tag).wait();
  }
  template <arithmetic T>
  [[nodiscard]] mpi_request isend(std::span<const T> data, int destination, int tag) {
    check_peer(destination, "send");
    MPI_Request request;
    const detail::wait_site site{"send", destination, tag, data.size(), size_};
    detail::mpi_check(MPI_Isend(data.data(), detail::mpi_count(data.size(), rank_), boost::mpi::get_mpi_datatype<T>(),
                                destination, tag, comm(), &request),
                      rank_, "MPI_Isend", site);
    return mpi_request(request, watch_, site, MPI_DATATYPE_NULL, true);
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

  void barrier() {
    run_collective(
        "MPI_Barrier", "barrier", 0, [&] { return MPI_Barrier(comm()); },
        [&](MPI_Request* request) { return MPI_Ibarrier(comm(), request); });
  }

  /// Collective: ranks with the same `color` (>= 0) form a new communicator ordered by (key, rank).
  [[nodiscard]] mpi split(int color, int key) const {
    if (color < 0) detail::raise<usage_error>(detail::str("rank ", rank_, ": split color must be >= 0, got ", color));
    return mpi(communicator_.split(color, key), options_);
  }

  template <arithmetic T, class Op>
    requires detail::has_builtin_mpi_op<Op>
  void native_allreduce(std::span<T> data, Op) {
    const int count = detail::mpi_count(data.size(), rank_);
    const MPI_Datatype type = boost::mpi::get_mpi_datatype<T>();
    const MPI_Op mpi_op = detail::builtin_mpi_op<Op, T>();
    run_collective(
        "MPI_Allreduce", "allreduce", data.size(),
        [&] { return MPI_Allreduce(MPI_IN_PLACE, data.data(), count, type, mpi_op, comm()); },
        [&](MPI_Request* request) {
          return MPI_Iallreduce(MPI_IN_PLACE, data.data(), count, type, mpi_op, comm(), request);
        });
    finalize_all<Op>(data, size_);
  }
  template <arithmetic T>
  void native_broadcast(std::span<T> data, int root) {
    const int count = detail::mpi_count(data.size(), rank_);
    const MPI_Datatype type = boost::mpi::get_mpi_datatype<T>();
    run_collective(
        "MPI_Bcast", "broadcast", data.size(), [&] { return MPI_Bcast(data.data(), count, type, root, comm()); },
        [&](MPI_Request* request) { return MPI_Ibcast(data.data(), count, type, root, comm(), request); });
  }
  template <arithmetic T>
  void native_allgather(std::span<const T> mine, std::span<T> all) {
    const int count = detail::mpi_count(mine.size(), rank_);
    const MPI_Datatype type = boost::mpi::get_mpi_datatype<T>();
    run_collective(
        "MPI_Allgather", "allgather", mine.size(),
        [&] { return MPI_Allgather(mine.data(), count, type, all.data(), count, type, comm()); },
        [&](MPI_Request* request) {
          return MPI_Iallgather(mine.data(), count, type, all.data(), count, type, comm(), request);
        });
  }
  template <arithmetic T, class Op>
    requires detail::has_builtin_mpi_op<Op>
  std::span<T> native_reduce_scatter(std::span<T> data, Op) {
    // MPI leaves this rank's block at the front of the buffer; move it to its place. MPI sums the
    // blocks' counts in an int too (Open MPI's and MPICH's reduce-scatter), so the whole buffer
    // must fit one.
    static_cast<void>(detail::mpi_count(data.size(), rank_));
    counts_.resize(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      counts_[static_cast<std::size_t>(r)] = detail::mpi_count(
          block_of(data.size(), static_cast<std::size_t>(size_), static_cast<std::size_t>(r)).size, rank_);
    }
    const MPI_Datatype type = boost::mpi::get_mpi_datatype<T>();
    const MPI_Op mpi_op = detail::builtin_mpi_op<Op, T>();
    run_collective(
        "MPI_Reduce_scatter", "reduce_scatter", data.size(),
        [&] { return MPI_Reduce_scatter(MPI_IN_PLACE, data.data(), counts_.data(), type, mpi_op, comm()); },
        [&](MPI_Request* request) {
          return MPI_Ireduce_scatter(MPI_IN_PLACE, data.data(), counts_.data(), type, mpi_op, comm(), request);
        });
    const block mine =
        block_of(data.size(), static_cast<std::size_t>(size_), static_cast<std::size_t>(rank_));
    std::copy_backward(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(mine.size),
                       data.begin() + static_cast<std::ptrdiff_t>(mine.offset + mine.size));
    std::span<T> result = data.subspan(mine.offset, mine.size);
    finalize_all<Op>(result, size_);
    return result;
  }

 private:
  MPI_Comm comm() const { return static_cast<MPI_Comm>(communicator_); }
  bool polls() const noexcept { return watch_.polls(); }

  // Runs one collective: the blocking call when waits block, else its non-blocking form (MPI-3),
  // waited on by polling (the watchdog, the passive policy).
  template <class Blocking, class Start>
  void run_collective(const char* call, const char* name, std::size_t count, Blocking blocking, Start start) {
    const detail::wait_site site{name, detail::no_peer, any_tag, count, size_};
    if (!polls()) {
      detail::mpi_check(blocking(), rank_, call, site);
      return;
    }
    MPI_Request request;
    detail::mpi_check(start(&request), rank_, call, site);
    detail::mpi_check(detail::watched_wait(request, MPI_STATUS_IGNORE, watch_, site), rank_, call, site);
  }

  void check_peer(int peer, const char* what) const {
    if (peer < 0 || peer >= size_) {
      detail::raise<usage_error>(
          detail::str("rank ", rank_, ": ", what, " names rank ", peer, " but the group has ranks 0 to ", size_ - 1));
    }
  }

  template <class T>
  mpi_request post_receive(std::span<T> data, int source, int tag, bool exact) {
    MPI_Request request;
    const detail::wait_site site{"receive", source == MPI_ANY_SOURCE ? any_source : source, tag, data.size(), size_};
    detail::mpi_check(MPI_Irecv(data.data(), detail::mpi_count(data.size(), rank_), boost::mpi::get_mpi_datatype<T>(),
                                source, tag == any_tag ? MPI_ANY_TAG : tag, comm(), &request),
                      rank_, "MPI_Irecv", site);
    return mpi_request(request, watch_, site, boost::mpi::get_mpi_datatype<T>(), exact);
  }

  boost::mpi::communicator communicator_;
  mpi_options options_;
  int rank_ = 0;
  int size_ = 1;
  detail::watchdog watch_;
  std::vector<int> counts_;
  std::shared_ptr<collective_check_state> checks_ = std::make_shared<collective_check_state>();
  node_topology topology_;
  std::shared_ptr<transport::group_cache> cache_ = std::make_shared<transport::group_cache>();
};

}  // namespace switchyard::transport

// The MPI transport: a rank's handle on any boost::mpi::communicator (Open MPI, MPICH, under
// mpirun or Slurm). Arithmetic spans travel as MPI datatypes, never serialized; the native
// collectives are MPI's own. An optional stall watchdog ends the job when a wait does not finish,
// and a passive wait policy lets a waiting rank give up its core.
#pragma once

#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/transport/transport.hpp>
#include <switchyard/core/partition.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/datatype.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/mpi/operations.hpp>
#include <mpi.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::transport {

class mpi;

/// @brief How a rank waits for a message or a collective to complete (`mpi_options::wait`).
enum class mpi_wait {
  /// `MPI_Wait` and the blocking collectives, which spin inside MPI: the fastest answer when each
  /// rank has a core of its own. The default.
  spin,
  /// `MPI_Test`, then a sleep of 20 us doubling to 100 us (to 1 ms once the wait has slept 5 ms)
  /// until the next test: a waiting rank
  /// gives up its core at once, for ranks that share cores (the cluster emulator, docs/cluster.md)
  /// or a co-located rank that must not steal its neighbour's cycles.
  passive,
};

namespace detail {

using switchyard::detail::raise;
using switchyard::detail::str;

/// The stall timeout named by the environment variable `SWITCHYARD_TIMEOUT` (seconds, fractions
/// allowed), or zero (off) when it is unset or empty; anything else is a `usage_error`.
inline std::chrono::milliseconds timeout_from_environment() {
  const char* text = std::getenv("SWITCHYARD_TIMEOUT");
  if (text == nullptr || *text == '\0') return std::chrono::milliseconds(0);
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds >= 0.0 && seconds <= 1e9)) {
    raise<usage_error>(str("SWITCHYARD_TIMEOUT must be a number of seconds from 0 (off) to 1e9, got '", text, "'"));
  }
  return std::chrono::ceil<std::chrono::milliseconds>(std::chrono::duration<double>(seconds));
}

/// The wait policy named by the environment variable `SWITCHYARD_MPI_WAIT` (`spin` or `passive`),
/// or `spin` when it is unset or empty; anything else is a `usage_error`.
inline mpi_wait wait_from_environment() {
  const char* text = std::getenv("SWITCHYARD_MPI_WAIT");
  if (text == nullptr || *text == '\0') return mpi_wait::spin;
  const std::string_view value = text;
  if (value == "spin") return mpi_wait::spin;
  if (value == "passive") return mpi_wait::passive;
  raise<usage_error>(str("SWITCHYARD_MPI_WAIT must be 'spin' or 'passive', got '", value, "'"));
}

}  // namespace detail

/// @brief Settings of an MPI handle.
struct mpi_options {
  /// The stall watchdog: a wait (send, receive, barrier, native collective) that has not finished
  /// after this long prints to stderr which rank waits, for which peer and what, and since when,
  /// then ends the whole job with `MPI_Abort` (exit status 124). Zero turns it off: waits then
  /// block as long as MPI does; a negative timeout is a `usage_error`. The default comes from the environment variable
  /// `SWITCHYARD_TIMEOUT` (seconds, e.g. `60` or `0.5`), and is off when that is not set.
  std::chrono::milliseconds timeout = detail::timeout_from_environment();
  /// How every wait of the handle waits: send, receive, a request's `wait()`, barrier and the
  /// native collectives. `mpi_wait::passive` tests, then sleeps with a short backoff, and runs the
  /// collectives in their MPI-3 non-blocking forms so that it can. Default: the environment
  /// variable `SWITCHYARD_MPI_WAIT` (`spin` or `passive`), else `mpi_wait::spin`.
  mpi_wait wait = detail::wait_from_environment();
  /// Every collective first exchanges a fingerprint of the call with the other ranks and raises
  /// `usage_error` on every rank when they differ (docs/collectives.md#checked-collectives).
  /// Default: the environment variable `SWITCHYARD_CHECK_COLLECTIVES`.
  bool check_collectives = check_collectives_from_environment();
};

namespace detail {

/// The exit status of a job the watchdog ended, as `timeout(1)` uses.
inline constexpr int watchdog_exit_status = 124;

// Which rank a wait belongs to, how long it may take and how it waits.
struct watchdog {
  std::chrono::milliseconds timeout{0};
  int rank = 0;        // in the handle's communicator
  int world_rank = 0;  // in MPI_COMM_WORLD, which the report also names when it differs
  mpi_wait policy = mpi_wait::spin;

  // Whether a wait must poll (MPI_Test) rather than block in MPI_Wait or a blocking collective.
  [[nodiscard]] bool polls() const noexcept { return timeout.count() != 0 || policy == mpi_wait::passive; }
};

// The passive policy's sleeps between two tests: 20 us at first, since most waits end within
// microseconds of a message, doubling to 100 us; once a wait has slept 5 ms, doubling on to 1 ms.
// MPI progresses only inside a test (an MPI-3 collective advances one round per test; a sleeping
// rank neither answers a rendezvous nor refills its sockets), so the waits inside a collective
// want short sleeps: on 4 emulated hosts at 1 Gbit/s, 64 KiB, a native all-reduce took 12.4 ms
// with 1 ms sleeps, 2.7 ms with 100 us. But a sleep costs about 27 us of CPU on these machines, so
// 100 us sleeps cost a waiting rank 20% of a core; a long idle wait (a straggler's peers) drops to
// 3-7%.
inline constexpr std::chrono::microseconds passive_first_sleep{20};
inline constexpr std::chrono::microseconds passive_short_sleep{100};
inline constexpr std::chrono::microseconds passive_short_phase{5000};
inline constexpr std::chrono::microseconds passive_longest_sleep{1000};

// While a passive wait sleeps, the thread's timer slack is 1 us instead of Linux's default 50 us,
// which would add that much to every short sleep (measured here: a 20 us sleep took 104 us at the
// default slack, 53 us at 1 us); restored when the wait ends. A no-op elsewhere.
class fine_timer_slack {
 public:
  fine_timer_slack() noexcept {
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    saved_ = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    if (saved_ > 1000) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
#endif
  }
  fine_timer_slack(const fine_timer_slack&) = delete;
  fine_timer_slack& operator=(const fine_timer_slack&) = delete;
  ~fine_timer_slack() {
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    if (saved_ > 1000) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(saved_), 0, 0, 0);
#endif
  }

 private:
  [[maybe_unused]] int saved_ = 0;
};

// What a wait is for, kept as plain values: the report is built only when the watchdog fires.
inline constexpr int no_peer = -2;
struct wait_site {
  const char* operation = "receive";  // "send", "receive", "barrier" or a collective's name
  int peer = no_peer;                 // a rank, any_source, or no_peer for a collective
  int tag = any_tag;
  std::size_t count = 0;
  int ranks = 0;                      // the communicator's size, for collectives
};

// What the operation at `site` is: "a receive of 4 elements from rank 1 with tag 7".
inline std::string describe(const wait_site& site) {
  const std::string_view operation = site.operation;
  const char* article = operation.front() == 'a' ? "an " : "a ";  // allreduce, allgather
  if (site.peer == no_peer) {
    if (operation == "barrier") return str("a barrier of ", site.ranks, " ranks");
    return str(article, operation, " of ", site.count, " elements over ", site.ranks, " ranks");
  }
  return str("a ", operation, " of ", site.count, " elements ", operation == "send" ? "to" : "from", " ",
             site.peer == any_source ? std::string("any rank") : str("rank ", site.peer), " with tag ",
             site.tag == any_tag ? std::string("any") : std::to_string(site.tag));
}

// Why a wait at `site` can stall, for the watchdog's report.
inline std::string_view stall_reason(const wait_site& site) {
  const std::string_view operation = site.operation;
  if (site.peer != no_peer) return operation == "send" ? " (the receiver has not taken it)" : "";
  return operation == "barrier" ? " (at least one has not entered it)" : " (at least one has not joined it)";
}

inline std::string utc_time(std::chrono::system_clock::time_point when) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[40];
  const std::size_t length = std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &parts);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count() % 1000;
  std::snprintf(text + length, sizeof text - length, ".%03d UTC", static_cast<int>(millis));
  return text;
}

// The watchdog fired: report who waits for whom, for what and since when, and end the job.
[[noreturn]] inline void report_stall(const watchdog& watch, const wait_site& site,
                                      std::chrono::steady_clock::time_point started) noexcept {
  const auto waited = std::chrono::steady_clock::now() - started;
  const auto since =
      std::chrono::system_clock::now() - std::chrono::duration_cast<std::chrono::system_clock::duration>(waited);
  const std::string report = switchyard::detail::located(str(
      "switchyard watchdog: rank ", watch.rank,
      watch.world_rank == watch.rank ? std::string() : str(" (world rank ", watch.world_rank, ")"), " has waited ",
      std::chrono::duration_cast<std::chrono::milliseconds>(waited).count(), " ms, since ", utc_time(since), ", for ", describe(site), stall_reason(site),
      "; the timeout is ", watch.timeout.count(),
      " ms (mpi_options::timeout or SWITCHYARD_TIMEOUT): aborting the job"));
  std::fprintf(stderr, "%s\n", report.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, watchdog_exit_status);
  std::abort();  // not reached: MPI_Abort does not return
}

// Completes `request` as MPI_Wait does. When it must poll, it tests with MPI_Test (which also
// drives MPI's progress), then yields (spin) or sleeps with a backoff (passive), and with the
// watchdog on reports the stall once the timeout has passed. Returns MPI's error code.
inline int watched_wait(MPI_Request& request, MPI_Status* status, const watchdog& watch,
                        const wait_site& site) noexcept {
  if (!watch.polls()) return MPI_Wait(&request, status);
  const bool timed = watch.timeout.count() != 0;
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = timed ? deadline_after(watch.timeout) : std::chrono::steady_clock::time_point::max();
  std::chrono::microseconds pause = passive_first_sleep;
  std::chrono::microseconds slept{0};
  std::optional<fine_timer_slack> slack;  // set at the first sleep: most waits never sleep
  for (;;) {
    int done = 0;
    if (const int code = MPI_Test(&request, &done, status); code != MPI_SUCCESS || done != 0) return code;
    if (timed && std::chrono::steady_clock::now() >= deadline) report_stall(watch, site, started);
    if (watch.policy == mpi_wait::passive) {
      if (!slack) slack.emplace();
      std::this_thread::sleep_for(pause);
      slept += pause;
      pause = std::min(pause * 2, slept < passive_short_phase ? passive_short_sleep : passive_longest_sleep);
    } else {
      std::this_thread::yield();
    }
  }
}

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

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

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

/// @brief One rank's handle on an MPI communicator.
///
/// It does not initialize MPI: construct a `boost::mpi::environment` (or call `MPI_Init`) first,
/// or use `mpi::environment`. Any communicator works (world, a split, one from Slurm);
/// the handle duplicates it so switchyard's messages never mix with the application's, and sets
/// it to return errors so that they surface as `transport_error`. With `mpi_options::timeout` (or
/// `SWITCHYARD_TIMEOUT`) set, a stall watchdog ends the job instead of letting a wait block forever;
/// with `mpi_options::wait` (or `SWITCHYARD_MPI_WAIT`) `passive`, a waiting rank sleeps instead of
/// spinning.
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
  /// A handle on a duplicate of `communicator`. Constructing one is collective over it.
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
};

}  // namespace switchyard::transport

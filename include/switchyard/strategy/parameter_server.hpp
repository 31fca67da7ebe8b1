// Parameter-server data parallelism: S server ranks each own one contiguous shard of the
// parameters and its optimizer state; workers push each shard's gradient to its server and pull
// the fresh shard back. How long a worker may run ahead is the Consistency policy. This header
// holds the protocol and the servers' loop; the pieces it uses live in strategy/parameter_server/:
// consistency.hpp (the Consistency policies), statistics.hpp (ps_statistics), coordinator.hpp
// (batch_coordinator: which batch server 0 hands out next) and assembly.hpp
// (assemble_sharded_state: the whole optimizer state from the servers' shards) and
// serving_thread.hpp (the thread a co-located server serves on).
#pragma once

#include <switchyard/collective/broadcast.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/compression.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/optim/optimizer_state.hpp>
#include <switchyard/strategy/parameter_server/assembly.hpp>
#include <switchyard/strategy/parameter_server/consistency.hpp>
#include <switchyard/strategy/parameter_server/coordinator.hpp>
#include <switchyard/strategy/parameter_server/serving_thread.hpp>
#include <switchyard/strategy/parameter_server/statistics.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/transport/transport.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

namespace switchyard::strategy {

/// @brief The type of `colocated`.
struct colocated_servers {
  explicit constexpr colocated_servers() = default;
};
/// @brief Makes a parameter server whose every rank works and serves one shard, on a thread beside
/// its worker: `parameter_server<>(colocated)`.
inline constexpr colocated_servers colocated{};

/// @brief Whether a parameter-server worker overlaps its exchange with its next batch's compute.
enum class pipelining {
  /// Each step pushes its gradient and waits for the pull: every gradient is computed on the
  /// parameters the servers sent back for the worker's last push (the default).
  off,
  /// A step posts its push, from a copy of the gradient, and its pull, into a buffer beside the
  /// model, and returns; the worker computes its next batch's gradient while they are on the wire,
  /// and the step after waits for them. Each gradient is computed on parameters one exchange older
  /// (one more step of staleness, under every consistency: under `sync`, delayed synchronous SGD),
  /// and a worker's communication no longer adds to its compute. It costs one copy of the
  /// parameters and one of the gradients per worker (none more under compression). Handing out
  /// batches, server 0 gives each worker two to start an epoch's part with, so a stop rule is
  /// first asked once all of them are out.
  one_ahead,
};

namespace detail {

/// @brief The requests of a worker's exchange, of whatever type the transport's requests are,
/// kept from the step that posts them to the one that waits for them; allocated once and reused.
/// `in_flight()` says that an exchange is posted and not yet waited for. Dropping them destroys
/// what is still pending, which cancels it (in process) or waits for it (MPI): see
/// transport::request. A copy starts empty: each copy of a strategy gets its own.
class exchange_requests {
 public:
  exchange_requests() = default;
  exchange_requests(const exchange_requests&) noexcept {}
  exchange_requests& operator=(const exchange_requests&) noexcept {
    drop();
    return *this;
  }

  [[nodiscard]] bool in_flight() const noexcept { return in_flight_; }
  void set_in_flight(bool posted) noexcept { in_flight_ = posted; }

  template <class Request>
  [[nodiscard]] std::vector<Request>& of() {
    if (type_ == nullptr || *type_ != typeid(Request)) {
      drop();
      held_ = std::make_shared<std::vector<Request>>();
      type_ = &typeid(Request);
    }
    return *static_cast<std::vector<Request>*>(held_.get());
  }
  void drop() noexcept {
    held_.reset();
    type_ = nullptr;
    in_flight_ = false;
  }

 private:
  std::shared_ptr<void> held_;
  const std::type_info* type_ = nullptr;
  bool in_flight_ = false;
};

}  // namespace detail

/// @brief Parameter-server strategy: the last `servers` ranks serve, the others work; or, with
/// `colocated`, every rank works and serves.
///
/// The parameter arena is split into `servers` contiguous shards balanced by size
/// (`block_of`); server s owns shard s and the optimizer state for it, made from the
/// rank's optimizer by slicing its state. Each worker step pushes every shard's gradient to its
/// server and pulls the fresh shard, to all servers at once. At the end of each epoch every rank
/// receives every shard, so evaluation and the final model see the servers' parameters.
/// With `colocated` servers every rank is a worker and server r is rank r, as BytePS and ps-lite
/// shard theirs: each rank serves its shard on a thread of its own during each epoch
/// (`detail::serving_thread`) from its own copy of the shard's parameters, which its worker's
/// pulls cannot overwrite, and every host's link carries 1/N of the traffic instead of one
/// server's link carrying all of it. The rank's optimizer then holds its shard's state, used only
/// by that thread while an epoch runs. The transport is called from both threads at once: the
/// in-process transport allows it, `transport::mpi` needs `boost::mpi::threading::multiple`
/// (`serves_concurrent_threads()`), and `setup` refuses a transport that says it does not.
/// The element type is the model's and the optimizer's: float or double. With a `compression`
/// format, float pushes and pulls travel as 16-bit words (core/compression.hpp): each worker keeps
/// the rounding error of its pushes and adds it to the next (`compression::error_feedback`), and the
/// servers keep their parameters in float, so only the workers' copies are rounded. A checkpoint
/// keeps each worker's residual (`prepare_checkpoint`, `serialize_progress`), so that a resumed
/// run pushes the words the uninterrupted one would have. With `pipelining::one_ahead` each
/// worker's push and pull are on the wire while it computes its next batch's gradient.
/// @tparam Consistency a `consistency::policy`: `consistency::async` (default),
/// `consistency::bounded<K>`, `consistency::sync` or a user's.
/// @code
/// switchyard::strategy::parameter_server<switchyard::strategy::consistency::bounded<2>> ps{1};
/// switchyard::train::trainer trainer{model, optimizer, ps, options};
/// switchyard::strategy::parameter_server<> sharded{switchyard::strategy::colocated};  // every rank serves
/// @endcode
template <class Consistency = consistency::async>
class parameter_server {
  static_assert(consistency::policy<Consistency>,
                "the parameter server's Consistency must be copyable and provide max_lead() const, returning "
                "how many steps a worker may lead the slowest one (consistency::unbounded: any): see "
                "strategy/parameter_server.hpp");
  static_assert(!(consistency::is_synchronous<Consistency> && consistency::has_backups<Consistency>),
                "a Consistency is either synchronous (every worker's gradient in every update) or keeps backup "
                "workers (backup_workers(): the first W - B fresh gradients), not both");

 public:
  /// `servers` ranks serve; it must leave at least one worker and be at most the arena's length.
  /// `compression`: the pushes' and pulls' encoding on the wire (`none`: the model's elements).
  /// `pipeline`: whether a worker's exchange overlaps its next batch's compute.
  explicit parameter_server(std::size_t servers, Consistency consistency,
                            compression::format compression = compression::format::none,
                            pipelining pipeline = pipelining::off)
      : servers_(servers), consistency_(consistency), compression_(compression), pipeline_(pipeline) {}
  /// Every rank works and serves one shard (`colocated`).
  explicit parameter_server(colocated_servers, Consistency consistency,
                            compression::format compression = compression::format::none,
                            pipelining pipeline = pipelining::off)
      : servers_(0), colocated_(true), consistency_(consistency), compression_(compression), pipeline_(pipeline) {}
  /// With the Consistency's default, where it has one: a bound taken at run time (`backups{b}`,
  /// `bounded{k}`) must be passed, and the stage is then not default constructible (as an
  /// `alternate` or `switch_to` that holds it asks).
  explicit parameter_server(std::size_t servers = 1)
    requires std::default_initializable<Consistency>
      : parameter_server(servers, Consistency{}) {}
  explicit parameter_server(colocated_servers where)
    requires std::default_initializable<Consistency>
      : parameter_server(where, Consistency{}) {}

  [[nodiscard]] std::string_view name() const noexcept { return "ps"; }
  /// What a checkpoint must match (`train::strategy_signature`): `"ps"`, or with compression
  /// `"ps[bf16]"` or `"ps[fp16]"`, whose checkpoints also hold the workers' residuals.
  [[nodiscard]] std::string signature() const {
    if (!compressed()) return std::string(name());
    return switchyard::detail::str(name(), "[", compression::name(compression_), "]");
  }
  /// How many ranks serve: as constructed, or with `colocated` servers 0 until `setup` and then
  /// every rank.
  [[nodiscard]] std::size_t servers() const noexcept { return servers_; }
  /// Whether every rank serves, on a thread beside its worker.
  [[nodiscard]] bool colocated() const noexcept { return colocated_; }
  [[nodiscard]] const Consistency& consistency() const noexcept { return consistency_; }
  [[nodiscard]] compression::format compression() const noexcept { return compression_; }
  /// Whether workers overlap their exchange with their next batch's compute (`pipelining::one_ahead`).
  [[nodiscard]] bool pipelined() const noexcept { return pipeline_ == pipelining::one_ahead; }
  /// What this rank measured, added up over every period the stage served since it was built (an
  /// `alternate` enters it again and again).
  [[nodiscard]] const ps_statistics& statistics() const noexcept { return stats_; }

  template <class Transport>
  [[nodiscard]] std::size_t worker_count(const Transport& t) const {
    const auto ranks = static_cast<std::size_t>(t.size());
    return colocated_ ? ranks : ranks - std::min(servers_, ranks);
  }

  /// The batches one server update trains: one per worker when synchronous, W - B with B backup
  /// workers (at least one), else one.
  template <class Transport>
  [[nodiscard]] std::size_t batches_per_update(const Transport& t) const {
    if constexpr (consistency::has_backups<Consistency>) return quorum(worker_count(t));
    return consistency::is_synchronous<Consistency> ? worker_count(t) : 1;
  }

  template <class Transport>
  [[nodiscard]] std::optional<std::size_t> worker_index(const Transport& t) const {
    const auto rank = static_cast<std::size_t>(t.rank());
    if (rank < worker_count(t)) return rank;
    return std::nullopt;
  }

  template <class Transport, class Model, class Optimizer>
  void setup(Transport& t, Model& model, Optimizer& optimizer);

  /// Asynchronous, bounded and backup-worker servers hand out the epoch's batches first come, first
  /// served (server 0 decides), so a fast worker trains more of them than a slow one; synchronous
  /// servers need one gradient per worker per step, so workers keep their static shards.
  [[nodiscard]] bool hands_out_batches() const noexcept { return !consistency::is_synchronous<Consistency>; }

  /// Before each epoch of `batches` batches: servers start the epoch's clocks and assignments.
  template <class Transport>
  void begin_epoch(Transport& t, std::size_t batches);

  template <class Transport, class Model, class Optimizer>
  step_outcome step(Transport& t, Model& model, Optimizer& optimizer);

  /// Server 0, which hands out the batches, stops handing them out once `rule.fire` holds for the
  /// batches of this part of the epoch handed out so far; the workers finish the ones they hold.
  /// When the rule samples, each worker also sends server 0 its compute time per step (from the
  /// end of its last step to the start of this one) beside each push, and `batch_coordinator` makes
  /// the samples of them. What a `switch_to` or an `alternate` with a step trigger installs, on
  /// every rank (every consistency that hands out batches: all but `sync`).
  /// @throws usage_error for a rule that samples under a consistency that holds replies back for
  /// the slowest worker (bounded staleness): every worker's replies would then come at its pace.
  void stop_when(stop_rule rule) {
    if (rule.sample_every != 0 && hands_out_batches() && !consistency::has_backups<Consistency> &&
        consistency_.max_lead() != consistency::unbounded) {
      switchyard::detail::raise<usage_error>(
          "parameter_server: a sampling trigger (every > 0) needs asynchronous or backup-worker consistency: under "
          "bounded staleness the replies wait for the slowest worker, so every worker's requests come at its pace");
    }
    sampling_ = rule.sample_every != 0 && hands_out_batches();
    coordinator_.stop_when(std::move(rule));
  }
  /// On server 0, after the rule stopped this part of the epoch: the batches it handed out.
  [[nodiscard]] std::optional<std::size_t> stopped_after() const noexcept { return coordinator_.stopped_after(); }

  /// On a server: applies pushes and answers pulls until every worker said it finished the epoch.
  template <class Transport, class Model, class Optimizer>
  void serve(Transport& t, Model& model, Optimizer& optimizer);

  /// Collective: workers finish a pipelined exchange still on the wire and tell the servers they
  /// are done (a co-located server's thread returns once all did, and what it threw is rethrown
  /// here), then every rank receives every shard.
  template <class Transport, class Model, class Optimizer>
  void end_epoch(Transport& t, Model& model, Optimizer& optimizer);

  /// Collective: every rank's optimizer gets the whole optimizer state, assembled from the
  /// servers' shards (the parameters are on every rank since the last `end_epoch`). What a
  /// strategy switch hands to the next stage, and what `finish` leaves behind.
  template <class Transport, class Model, class Optimizer>
  void hand_over(Transport& t, Model& model, Optimizer& optimizer);

  /// Collective: the whole optimizer state assembled from the servers' shards, returned on every
  /// rank without changing any rank's optimizer (what a checkpoint saves between two epochs).
  template <class Transport, class Optimizer>
  [[nodiscard]] optim::optimizer_state<typename Optimizer::value_type> assembled_state(Transport& t,
                                                                                      const Optimizer& optimizer) const;

  template <class Transport, class Model, class Optimizer>
  void finish(Transport& t, Model& model, Optimizer& optimizer) {
    hand_over(t, model, optimizer);
  }

  /// Collective, before a checkpoint: with compression, every worker sends rank 0 its
  /// error-feedback residual, which `serialize_progress` saves there (rank 0 is a worker).
  template <class Transport>
  void prepare_checkpoint(Transport& t);

  /// Checkpoints: with compression, each worker's error-feedback residual (one float per
  /// parameter); without, nothing. A resumed run's `setup` gives each worker its own.
  template <class Archive>
  void serialize_progress(Archive& archive) {
    if (!compressed()) return;
    serialize_sequence(archive, saved_residuals_);
    if constexpr (Archive::is_loading::value) restore_pending_ = true;
  }

 private:
  // Tags below the collectives' reserved range: pushes (and a worker's empty "done" message, on
  // the same tag so it cannot overtake its last push) and pulls.
  static constexpr int push_tag = 31000;
  static constexpr int pull_tag = 31001;
  static constexpr int assign_tag = 31002;
  static constexpr int compute_tag = 31003;  // a worker's compute time per step, to server 0
  static constexpr int residual_tag = 31004;  // a worker's error-feedback residual, to rank 0
  static constexpr int round_tag = 31005;     // backup workers: the round of a worker's push
  [[nodiscard]] block shard(std::size_t s) const { return block_of(arena_, servers_, s); }
  [[nodiscard]] int server_rank(std::size_t s) const { return static_cast<int>(first_server_ + s); }
  // The shard this rank serves, if it serves one.
  template <class Transport>
  [[nodiscard]] std::optional<std::size_t> served_shard(const Transport& t) const {
    const auto rank = static_cast<std::size_t>(t.rank());
    if (rank < first_server_ || rank - first_server_ >= servers_) return std::nullopt;
    return rank - first_server_;
  }
  // Backup workers: how many fresh gradients of `workers` an update averages, at least one.
  [[nodiscard]] std::size_t quorum(std::size_t workers) const {
    if constexpr (consistency::has_backups<Consistency>) {
      const auto backup = static_cast<std::size_t>(consistency_.backup_workers());
      return backup >= workers ? 1 : workers - backup;
    } else {
      return workers;
    }
  }
  // The clock of the slowest worker still training this epoch.
  [[nodiscard]] std::uint64_t slowest() const {
    std::uint64_t floor = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t w = 0; w < workers_; ++w) {
      if (active_[w]) floor = std::min(floor, completed_[w]);
    }
    return floor;
  }

  // The replies a server has posted, one slot per worker, of the model's elements or of the
  // codec's words, and server 0's hand-outs (the requests may be of different types).
  template <class ValueRequest, class WordsRequest, class AssignRequest>
  struct posted_replies {
    std::vector<std::array<std::int64_t, 2>> handed_out;  // server 0: each worker's last hand-out
    std::vector<ValueRequest> values;
    std::vector<WordsRequest> words;
    // Posted, not sent: a worker that failed with its receive of it posted (a pipelined worker
    // throws between steps) cancels that receive, and a blocking send would hold the thread past
    // `serving_thread::stop`.
    std::vector<AssignRequest> assignments;
  };
  // Posts `shard_parameters` to `worker` as its pull, from that worker's own copy of them (or of
  // their words under compression): the server takes the next push while the reply is on the
  // wire, and its next update cannot change what the reply sends. `encoded` says that the last
  // reply sent these same parameters: replies to several workers between two updates encode once.
  template <class Transport, class Span, class Replies>
  void reply(Transport& t, Span shard_parameters, std::size_t worker, bool encoded, Replies& replies);
  template <class Transport, class T>
  transport::message_status receive_push(Transport& t, std::vector<T>& incoming);
  // A worker: posts the compute report, the hand-out's receive, and a pull from and a push to every
  // server (encoded under compression, from a copy when pipelined); returns the bytes pushed.
  template <class Transport, class T>
  std::size_t post_exchange(Transport& t, std::span<T> parameters, std::span<const T> gradients,
                            std::chrono::steady_clock::time_point started);
  // A worker: waits for the exchange in flight, puts the pulled parameters into the model and
  // returns the batch server 0 handed out with them, if any.
  template <class Transport, class T>
  std::optional<std::size_t> finish_exchange(Transport& t, std::span<T> parameters);
  [[nodiscard]] bool compressed() const noexcept { return compression_ != compression::format::none; }
  template <class Transport, class Span, class Replies>
  void release_waiting(Transport& t, Span shard_parameters, Replies& replies);
  // Applies pushes to `parameters`, this rank's shard, and answers pulls until every worker said it
  // finished the epoch, or until a co-located server's thread is stopped.
  template <class Transport, class Optimizer>
  void serve_shard(Transport& t, std::span<typename Optimizer::value_type> parameters, Optimizer& optimizer);
  // A co-located server: starts this part's serving thread, unless it runs already.
  template <class Transport, class Optimizer>
  void start_serving(Transport& t, Optimizer& optimizer);
  // Posts an empty message to `rank` with `tag` in the element type of pushes and pulls: a
  // worker's "done" on the push tag, or a co-located server's interrupt or alert (below), whose
  // receive fails on its size (or element type). Returns the request, kept alive by the pointer.
  template <class Value, class Transport>
  std::shared_ptr<void> post_empty(Transport& t, int rank, int tag) const {
    const auto keep = [](auto request) { return std::make_shared<decltype(request)>(std::move(request)); };
    if (compressed()) return keep(t.isend(std::span<const std::uint16_t>(), rank, tag));
    return keep(t.isend(std::span<const Value>(), rank, tag));
  }
  // Two posted messages kept alive by one pointer.
  static std::shared_ptr<void> kept_together(std::shared_ptr<void> first, std::shared_ptr<void> second) {
    using pair = std::array<std::shared_ptr<void>, 2>;
    return std::make_shared<pair>(pair{std::move(first), std::move(second)});
  }
  // What a co-located server's control messages go through: a `faulty` transport's inner handle
  // (anything with `inner()`), so that a rank its plan has killed can still end its own thread.
  template <class Transport>
  static auto& control_handle(Transport& t) {
    if constexpr (requires { t.inner(); }) {
      return t.inner();
    } else {
      return t;
    }
  }

  std::size_t servers_;
  bool colocated_ = false;
  Consistency consistency_;
  compression::format compression_;
  pipelining pipeline_ = pipelining::off;
  compression::error_feedback feedback_;  // worker: what its pushes still owe the gradients
  // Each worker's residual: on rank 0 from `prepare_checkpoint` to the next epoch, on every rank
  // from a loaded checkpoint (`restore_pending_`) until `setup` restores them.
  std::vector<std::vector<float>> saved_residuals_;
  bool restore_pending_ = false;
  std::vector<std::uint16_t> sent_words_;      // worker: a push
  std::vector<std::uint16_t> received_words_;  // worker: a pull
  // A worker's buffers of the model's element type.
  template <class T>
  struct worker_buffers {
    std::vector<T> pushed;  // pipelined: the gradient on the wire while the next one is computed
    std::vector<T> pulled;  // pipelined: the parameters on their way while the model trains on the last
    T report{};             // the step's compute time, to server 0 when the stop rule samples
  };
  std::variant<worker_buffers<float>, worker_buffers<double>> worker_buffers_;
  template <class T>
  [[nodiscard]] worker_buffers<T>& worker_buffers_of() {
    return std::get<worker_buffers<T>>(worker_buffers_);
  }
  std::size_t part_batches_ = 0;  // the batches of this part of the epoch, all workers together
  std::size_t workers_ = 0;
  std::size_t first_server_ = 0;  // the rank of server 0: the first after the workers, or 0 co-located
  std::size_t arena_ = 0;
  ps_statistics stats_;
  batch_coordinator coordinator_;         // server 0: which batch to hand out next
  // Worker: what server 0 handed out with its reply, the batch (-1: none) and server 0's round.
  std::array<std::int64_t, 2> handed_{-1, 0};
  // Worker, backup workers: the round its next push belongs to, which it tells every server.
  std::int64_t round_ = 0;
  bool sampling_ = false;                 // the stop rule samples: workers report their compute times
  std::optional<std::chrono::steady_clock::time_point> step_end_;  // worker: the end of its last step this part
  // Server state, sized once in setup.
  std::vector<std::uint64_t> completed_;  // pushes applied per worker this epoch
  std::vector<bool> active_;              // workers that have not finished this epoch
  std::vector<bool> waiting_;             // workers whose reply is held back
  // Synchronous and backup workers: the workers whose gradient of this step the server holds.
  std::vector<bool> accepted_;
  // Backup workers: the server's round (its updates this part), and the round of each worker's
  // push held for a later round (0: none; a held round is always above the current one).
  std::uint64_t server_round_ = 0;
  std::vector<std::uint64_t> held_;
  // A server's buffers, of the model's element type, and its words under compression.
  template <class T>
  struct server_buffers {
    std::vector<T> incoming;               // one push
    std::vector<std::vector<T>> pending;   // synchronous, backups: this step's gradient of each worker
    std::vector<T> shard;                  // co-located: the served parameters, apart from the worker's
    std::vector<std::vector<T>> outgoing;                    // each worker's last reply
    std::vector<std::vector<std::uint16_t>> outgoing_words;  // the same, under compression
    std::size_t last_reply = 0;                              // the worker of the last reply
    std::vector<std::uint16_t> received_words;               // a push
  };
  std::variant<server_buffers<float>, server_buffers<double>> buffers_;
  template <class T>
  [[nodiscard]] server_buffers<T>& buffers() {
    return std::get<server_buffers<T>>(buffers_);
  }
  // Destroyed second, it stops the thread before the state the thread uses goes.
  detail::serving_thread serving_;
  // Last: destroyed first, before the buffers its requests use and before the serving thread
  // stops: under MPI destroying a pending request waits for it, and a pull waits for a reply from
  // every server, this rank's among them.
  detail::exchange_requests requests_;
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::setup(Transport& t, Model& model, Optimizer& optimizer) {
  using value = typename Optimizer::value_type;
  static_assert(std::is_same_v<value, float> || std::is_same_v<value, double>,
                "the parameter server serves float or double parameters (the optimizer's value_type)");
  // What a failed run left behind, if its caller trains again: its exchange's requests, then its
  // serving thread (in this order, as in the destructor).
  requests_.drop();
  serving_.stop();
  const auto ranks = static_cast<std::size_t>(t.size());
  arena_ = as_span(model.parameters()).size();
  if (colocated_) servers_ = ranks;
  // Every rank checks the same values, so every rank refuses the same way before any message.
  if (!colocated_ && (servers_ == 0 || servers_ >= ranks)) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "parameter_server on rank ", t.rank(), ": ", servers_, " servers among ", ranks,
        " ranks; it needs at least 1 server and 1 worker"));
  }
  if (arena_ < servers_) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str("parameter_server on rank ", t.rank(), ": ",
                                                                   servers_, colocated_ ? " co-located" : "",
                                                                   " servers for a model of only ", arena_,
                                                                   " parameters"));
  }
  if constexpr (requires { t.serves_concurrent_threads(); }) {
    if (colocated_ && !t.serves_concurrent_threads()) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          "parameter_server on rank ", t.rank(), ": co-located servers call the transport from a serving thread "
          "while the worker calls it too, and this transport does not allow that (under MPI, initialize the "
          "environment with boost::mpi::threading::multiple)"));
    }
  }
  if (compressed() && !std::is_same_v<value, float>) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "parameter_server on rank ", t.rank(), ": ", compression::name(compression_),
        " compression encodes float parameters; this model's are ", sizeof(value) * 8, "-bit"));
  }
  if (consistency::has_backups<Consistency> && pipelined()) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "parameter_server on rank ", t.rank(), ": backup workers drop every gradient computed on parameters older "
        "than the server's, and a pipelined worker's every gradient is one exchange older: use pipelining::off"));
  }
  workers_ = colocated_ ? ranks : ranks - servers_;
  first_server_ = colocated_ ? 0 : workers_;
  feedback_.reset();
  // A resumed run: each worker continues from its residual in the checkpoint. Resumed on another
  // number of workers, the residuals have no owners, and every worker starts without one.
  if (std::exchange(restore_pending_, false)) {
    for (const std::vector<float>& r : saved_residuals_) {
      if (r.size() != arena_) {
        switchyard::detail::raise<data_error>(switchyard::detail::str(
            "parameter_server on rank ", t.rank(), ": the checkpoint holds an error-feedback residual of ", r.size(),
            " elements for a model of ", arena_, " parameters"));
      }
    }
    const std::optional<std::size_t> w = worker_index(t);
    if (w && saved_residuals_.size() == workers_) feedback_.restore(saved_residuals_[*w]);
  }
  saved_residuals_.clear();
  collective::broadcast(t, as_span(model.parameters()), 0);
  requests_.drop();
  worker_buffers<value> own;
  if (worker_index(t) && compressed()) {
    sent_words_.assign(arena_, 0);
    received_words_.assign(arena_, 0);
  } else if (worker_index(t) && pipelined()) {
    own.pushed.resize(arena_);
    own.pulled.resize(arena_);
  }
  worker_buffers_ = std::move(own);
  const std::optional<std::size_t> served = served_shard(t);
  if (!served) return;
  const block mine = shard(*served);
  optimizer.import_state(optimizer.export_state().slice(mine.offset, mine.size));
  completed_.assign(workers_, 0);
  active_.assign(workers_, true);
  waiting_.assign(workers_, false);
  accepted_.assign(workers_, false);
  held_.assign(workers_, 0);
  server_buffers<value> server;
  server.incoming.resize(mine.size);
  if constexpr (consistency::is_synchronous<Consistency> || consistency::has_backups<Consistency>) {
    server.pending.assign(workers_, std::vector<value>(mine.size));
  }
  if (colocated_) {
    const auto parameters = as_span(model.parameters()).subspan(mine.offset, mine.size);
    server.shard.assign(parameters.begin(), parameters.end());
  }
  if (compressed()) {
    server.outgoing_words.assign(workers_, std::vector<std::uint16_t>(mine.size));
    server.received_words.assign(mine.size, 0);
  } else {
    server.outgoing.assign(workers_, std::vector<value>(mine.size));
  }
  buffers_ = std::move(server);
}

template <class Consistency>
template <class Transport>
void parameter_server<Consistency>::begin_epoch(Transport& t, std::size_t batches) {
  // What a failed part left behind, if its caller trains again, in the destructor's order.
  requests_.drop();
  serving_.stop();
  part_batches_ = batches;
  // Worker w starts the epoch with batch w (and w + W, pipelined); the rest are handed out with
  // the replies.
  coordinator_.begin_epoch(batches, workers_, pipelined() ? 2 : 1);
  saved_residuals_.clear();  // the last checkpoint's, gathered on rank 0, are written by now
  step_end_.reset();
  round_ = 0;
  if (!served_shard(t)) return;
  std::fill(completed_.begin(), completed_.end(), 0);
  for (std::size_t w = 0; w < workers_; ++w) active_[w] = w < batches;
  // Every part starts at round 0, on every server and worker.
  server_round_ = 0;
  std::fill(accepted_.begin(), accepted_.end(), false);
  std::fill(held_.begin(), held_.end(), 0);
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
step_outcome parameter_server<Consistency>::step(Transport& t, Model& model, Optimizer& optimizer) {
  using value = typename Optimizer::value_type;
  if (colocated_) start_serving(t, optimizer);
  const auto started = std::chrono::steady_clock::now();
  const std::span<value> parameters = as_span(model.parameters());
  std::optional<std::size_t> next;
  if (pipelined() && requests_.in_flight()) {
    next = finish_exchange(t, parameters);  // the last step's, while this step's gradient was computed
  } else if (pipelined() && hands_out_batches()) {
    // The part's first step: the worker's second batch was handed out with its first.
    const std::size_t second = static_cast<std::size_t>(t.rank()) + workers_;
    if (second < part_batches_) next = second;
  }
  const std::size_t bytes = post_exchange(t, parameters, std::span<const value>(as_span(model.gradients())), started);
  if (!pipelined()) next = finish_exchange(t, parameters);
  step_end_ = std::chrono::steady_clock::now();
  stats_.worker_wait_seconds += std::chrono::duration<double>(*step_end_ - started).count();
  stats_.bytes_pushed += bytes;
  stats_.bytes_pulled += bytes;
  return step_outcome{bytes, hands_out_batches() ? next : std::nullopt};
}

template <class Consistency>
template <class Transport, class T>
std::size_t parameter_server<Consistency>::post_exchange(Transport& t, std::span<T> parameters,
                                                         std::span<const T> gradients,
                                                         std::chrono::steady_clock::time_point started) {
  using request = decltype(t.isend(std::span<const T>(), 0, 0));
  std::vector<request>& requests = requests_.template of<request>();
  // What was posted before a throw must not stay behind for a later step to wait for.
  struct clear_on_throw {
    std::vector<request>& posted;
    int uncaught = std::uncaught_exceptions();
    ~clear_on_throw() {
      if (std::uncaught_exceptions() > uncaught) posted.clear();
    }
  } guard{requests};
  worker_buffers<T>& mine = worker_buffers_of<T>();
  // Post every pull before any push, so a server's reply always finds its receive waiting. The
  // receives also come first in `requests`, which finish_exchange waits for in order: the alert of
  // a co-located server whose loop threw fails them, while a send to that loop would never
  // complete in process.
  if (hands_out_batches()) requests.push_back(t.irecv(std::span<std::int64_t>(handed_), server_rank(0), assign_tag));
  // One pull from and one push to each server, of the model's elements or of the codec's words.
  // Pipelined, the pull lands beside the model, which trains the next batch meanwhile, and the
  // push goes from a copy, which the next backward pass cannot overwrite.
  const auto post = [&](auto pulled, auto pushed) {
    for (std::size_t s = 0; s < servers_; ++s) {
      const block b = shard(s);
      requests.push_back(t.irecv(pulled.subspan(b.offset, b.size), server_rank(s), pull_tag));
    }
    // The compute time goes before the push: server 0 reads it when it answers the push.
    if (sampling_) {
      mine.report = step_end_ ? std::chrono::duration<T>(started - *step_end_).count() : T{-1};
      requests.push_back(t.isend(std::span<const T>(&mine.report, 1), server_rank(0), compute_tag));
    }
    // With backup workers, each push goes with the round it belongs to, posted first: a server
    // receives it right after the push.
    if constexpr (consistency::has_backups<Consistency>) {
      for (std::size_t s = 0; s < servers_; ++s) {
        requests.push_back(t.isend(std::span<const std::int64_t>(&round_, 1), server_rank(s), round_tag));
      }
    }
    for (std::size_t s = 0; s < servers_; ++s) {
      const block b = shard(s);
      requests.push_back(t.isend(pushed.subspan(b.offset, b.size), server_rank(s), push_tag));
    }
    requests_.set_in_flight(true);
    return pushed.size_bytes();
  };
  if constexpr (std::is_same_v<T, float>) {
    if (compressed()) {
      compression::with_codec(compression_,
                              [&]<class Codec>(Codec) { feedback_.encode<Codec>(gradients, sent_words_); });
      return post(std::span<std::uint16_t>(received_words_), std::span<const std::uint16_t>(sent_words_));
    }
  }
  if (!pipelined()) return post(parameters, gradients);
  std::copy(gradients.begin(), gradients.end(), mine.pushed.begin());
  return post(std::span<T>(mine.pulled), std::span<const T>(mine.pushed));
}

template <class Consistency>
template <class Transport, class T>
std::optional<std::size_t> parameter_server<Consistency>::finish_exchange(Transport& t, std::span<T> parameters) {
  using request = decltype(t.isend(std::span<const T>(), 0, 0));
  std::vector<request>& requests = requests_.template of<request>();
  requests_.set_in_flight(false);
  try {
    for (request& r : requests) r.wait();
  } catch (...) {
    requests.clear();
    // Co-located: a receive that failed because this rank's server failed (its alert) reports the
    // server's failure, the cause.
    if (colocated_ && serving_.failed()) serving_.join();
    throw;
  }
  requests.clear();
  if constexpr (std::is_same_v<T, float>) {
    if (compressed()) {
      compression::with_codec(compression_, [&]<class Codec>(Codec) {
        compression::decode<Codec>(std::span<const std::uint16_t>(received_words_), parameters);
      });
    }
  }
  if (pipelined() && !compressed()) {
    const std::vector<T>& pulled = worker_buffers_of<T>().pulled;
    std::copy(pulled.begin(), pulled.end(), parameters.begin());
  }
  if (!hands_out_batches()) return std::nullopt;
  round_ = handed_[1];
  if (handed_[0] < 0) return std::nullopt;
  return static_cast<std::size_t>(handed_[0]);
}

template <class Consistency>
template <class Transport, class Span, class Replies>
void parameter_server<Consistency>::reply(Transport& t, Span shard_parameters, std::size_t worker, bool encoded,
                                          Replies& replies) {
  using value = typename Span::element_type;
  server_buffers<value>& b = buffers<value>();
  const auto destination = static_cast<int>(worker);
  // The worker received its last reply before it pushed again, so its slot is free: the waits
  // return at once.
  if constexpr (std::is_same_v<value, float>) {
    if (compressed()) {
      replies.words[worker].wait();
      std::vector<std::uint16_t>& words = b.outgoing_words[worker];
      if (encoded) {
        std::copy(b.outgoing_words[b.last_reply].begin(), b.outgoing_words[b.last_reply].end(), words.begin());
      } else {
        compression::with_codec(compression_, [&]<class Codec>(Codec) {
          compression::encode<Codec>(std::span<const float>(shard_parameters), words);
        });
      }
      replies.words[worker] = t.isend(std::span<const std::uint16_t>(words), destination, pull_tag);
    }
  }
  if (!compressed()) {
    replies.values[worker].wait();
    std::vector<value>& copy = b.outgoing[worker];
    std::copy(shard_parameters.begin(), shard_parameters.end(), copy.begin());
    replies.values[worker] = t.isend(std::span<const value>(copy), destination, pull_tag);
  }
  b.last_reply = worker;
  if (hands_out_batches() && t.rank() == server_rank(0)) {
    std::optional<double> compute;
    if (sampling_) {
      typename Span::element_type reported{};
      t.recv(std::span<typename Span::element_type>(&reported, 1), static_cast<int>(worker), compute_tag);
      if (reported >= 0) compute = static_cast<double>(reported);
    }
    const std::optional<std::size_t> next = coordinator_.next(worker, compute);
    // The worker received its last hand-out before it pushed again: the wait returns at once.
    replies.assignments[worker].wait();
    // The batch, and the round the worker's next push belongs to (backup workers).
    std::array<std::int64_t, 2>& handed = replies.handed_out[worker];
    handed = {next ? static_cast<std::int64_t>(*next) : -1, static_cast<std::int64_t>(server_round_)};
    replies.assignments[worker] = t.isend(std::span<const std::int64_t>(handed), destination, assign_tag);
  }
}

// One push (or an empty "done" message) into `incoming`, decoded from words under compression.
template <class Consistency>
template <class Transport, class T>
transport::message_status parameter_server<Consistency>::receive_push(Transport& t, std::vector<T>& incoming) {
  if constexpr (std::is_same_v<T, float>) {
    if (compressed()) {
      std::vector<std::uint16_t>& words = buffers<float>().received_words;
      const transport::message_status pushed = t.recv_any(std::span<std::uint16_t>(words), push_tag);
      if (pushed.count == incoming.size()) {
        compression::with_codec(compression_, [&]<class Codec>(Codec) {
          compression::decode<Codec>(std::span<const std::uint16_t>(words), incoming);
        });
      }
      return pushed;
    }
  }
  return t.recv_any(std::span<T>(incoming), push_tag);
}

template <class Consistency>
template <class Transport, class Span, class Replies>
void parameter_server<Consistency>::release_waiting(Transport& t, Span shard_parameters, Replies& replies) {
  const std::uint64_t floor = slowest();
  bool encoded = false;
  for (std::size_t w = 0; w < workers_; ++w) {
    if (waiting_[w] && completed_[w] - floor <= static_cast<std::size_t>(consistency_.max_lead())) {
      waiting_[w] = false;
      reply(t, shard_parameters, w, encoded, replies);
      encoded = true;
    }
  }
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::serve(Transport& t, Model& model, Optimizer& optimizer) {
  const block mine = shard(static_cast<std::size_t>(t.rank()) - first_server_);
  serve_shard(t, as_span(model.parameters()).subspan(mine.offset, mine.size), optimizer);
}

template <class Consistency>
template <class Transport, class Optimizer>
void parameter_server<Consistency>::start_serving(Transport& t, Optimizer& optimizer) {
  if (serving_.running()) return;
  using value = typename Optimizer::value_type;
  // The thread's own copies of the handle: the worker's may be gone when a failing rank stops it.
  // Interrupt: an empty push to itself, which its wait for the next push takes; on server 0 with
  // sampling also an empty compute report, which fails its wait for its own worker's report if
  // the worker cancelled that report after the server took the push beside it; with backup
  // workers, for the same reason, an empty round. Alert: an empty pull and an empty hand-out to
  // its own worker, whose receives of them then fail.
  serving_.start(
      [this, peer = t, &optimizer]() mutable {
        serve_shard(peer, std::span<value>(buffers<value>().shard), optimizer);
      },
      [this, peer = t]() mutable -> std::shared_ptr<void> {
        auto& control = control_handle(peer);
        auto push = post_empty<value>(control, peer.rank(), push_tag);
        if constexpr (consistency::has_backups<Consistency>) {
          push = kept_together(std::move(push), post_empty<value>(control, peer.rank(), round_tag));
        }
        if (!sampling_ || peer.rank() != server_rank(0)) return push;
        return kept_together(std::move(push), post_empty<value>(control, peer.rank(), compute_tag));
      },
      [this, peer = t]() mutable -> std::shared_ptr<void> {
        auto& control = control_handle(peer);
        auto pull = post_empty<value>(control, peer.rank(), pull_tag);
        if (!hands_out_batches() || peer.rank() != server_rank(0)) return pull;
        return kept_together(std::move(pull), post_empty<value>(control, peer.rank(), assign_tag));
      });
}

template <class Consistency>
template <class Transport, class Optimizer>
void parameter_server<Consistency>::serve_shard(Transport& t, std::span<typename Optimizer::value_type> parameters,
                                                Optimizer& optimizer) {
  const auto started = std::chrono::steady_clock::now();
  const block mine = shard(static_cast<std::size_t>(t.rank()) - first_server_);
  using value = typename Optimizer::value_type;
  std::vector<value>& incoming = buffers<value>().incoming;
  std::vector<std::vector<value>>& pending = buffers<value>().pending;
  posted_replies<decltype(t.isend(std::span<const value>(), 0, 0)),
                 decltype(t.isend(std::span<const std::uint16_t>(), 0, 0)),
                 decltype(t.isend(std::span<const std::int64_t>(), 0, 0))>
      replies;
  if (compressed()) {
    replies.words.resize(workers_);
  } else {
    replies.values.resize(workers_);
  }
  if (hands_out_batches() && t.rank() == server_rank(0)) {
    replies.handed_out.resize(workers_);
    replies.assignments.resize(workers_);
  }
  std::size_t finished = 0;
  std::size_t arrived = 0;  // synchronous, backups: the gradients of this step the server holds
  // How many gradients a step needs: every worker's when synchronous; with backup workers W - B,
  // or every live worker once fewer are left in the part.
  const auto step_quorum = [&] {
    if constexpr (!consistency::has_backups<Consistency>) return workers_;
    const auto live = static_cast<std::size_t>(std::count(active_.begin(), active_.end(), true));
    return std::min(quorum(workers_), live);
  };
  // The average of the gradients the server holds for this step, summed in worker order (runs
  // repeat bit for bit), applied once; then each of their workers gets the new shard.
  const auto update_and_reply = [&] {
    bool first = true;
    for (std::size_t w = 0; w < workers_; ++w) {
      if (!accepted_[w]) continue;
      if (first) {
        std::copy(pending[w].begin(), pending[w].end(), incoming.begin());
      } else {
        for (std::size_t i = 0; i < mine.size; ++i) incoming[i] += pending[w][i];
      }
      first = false;
    }
    for (value& g : incoming) g /= static_cast<value>(arrived);
    optimizer.step(parameters, std::span<const value>(incoming));
    ++stats_.updates;
    ++server_round_;
    arrived = 0;
    bool encoded = false;
    for (std::size_t w = 0; w < workers_; ++w) {
      if (!accepted_[w]) continue;
      accepted_[w] = false;
      reply(t, parameters, w, encoded, replies);
      encoded = true;
    }
  };
  // Backup workers: closes every round that has its quorum, each time taking the pushes held for
  // the round that comes next.
  const auto close_rounds = [&] {
    while (arrived > 0 && arrived >= step_quorum()) {
      update_and_reply();
      for (std::size_t w = 0; w < workers_; ++w) {
        if (held_[w] != server_round_) continue;
        held_[w] = 0;
        accepted_[w] = true;
        ++stats_.staleness[0];
        ++arrived;
      }
    }
  };
  // How far ahead of the slowest live worker a worker's applied push is (its staleness).
  const auto record_lead = [&](std::size_t worker) {
    const std::uint64_t lead = completed_[worker] - slowest();
    ++stats_.staleness[std::min<std::size_t>(lead, stats_.staleness.size() - 1)];
    ++completed_[worker];
  };
  while (finished < workers_) {
    const transport::message_status pushed = receive_push(t, incoming);
    if (serving_.stopping()) return;  // the rank failed; its message released this wait
    const auto worker = static_cast<std::size_t>(pushed.source);
    if (worker >= workers_) {
      switchyard::detail::raise<transport_error>(switchyard::detail::str(
          "parameter_server on rank ", t.rank(), ": a push from rank ", pushed.source, ", which is not a worker"));
    }
    if (pushed.count == 0) {
      // A worker done with the epoch no longer holds the others back.
      ++finished;
      active_[worker] = false;
      if constexpr (consistency::has_backups<Consistency>) {
        close_rounds();
      } else if constexpr (!consistency::is_synchronous<Consistency>) {
        release_waiting(t, parameters, replies);
      }
      continue;
    }
    if (pushed.count != mine.size) {
      switchyard::detail::raise<transport_error>(switchyard::detail::str(
          "parameter_server on rank ", t.rank(), ": worker ", worker, " pushed ", pushed.count,
          " gradient elements, the shard has ", mine.size));
    }
    const auto busy = std::chrono::steady_clock::now();
    if constexpr (consistency::has_backups<Consistency>) {
      // The round the push belongs to, which its worker posted before it.
      std::int64_t tag = -1;
      t.recv(std::span<std::int64_t>(&tag, 1), static_cast<int>(worker), round_tag);
      if (tag < 0) {
        switchyard::detail::raise<transport_error>(switchyard::detail::str(
            "parameter_server on rank ", t.rank(), ": worker ", worker, " tagged its push with round ", tag));
      }
      const auto round = static_cast<std::uint64_t>(tag);
      if (round < server_round_) {
        // A round this server has closed: a backup worker's late gradient. It is dropped, and the
        // worker gets the current shard at once.
        ++stats_.dropped;
        reply(t, parameters, worker, false, replies);
      } else {
        std::copy(incoming.begin(), incoming.end(), pending[worker].begin());
        if (round == server_round_) {
          accepted_[worker] = true;
          ++stats_.staleness[0];
          ++arrived;
          close_rounds();
        } else {
          // Server 0 has closed this server's round already: the push waits for the next.
          held_[worker] = round;
        }
      }
    } else if constexpr (consistency::is_synchronous<Consistency>) {
      record_lead(worker);
      std::copy(incoming.begin(), incoming.end(), pending[worker].begin());
      accepted_[worker] = true;
      if (++arrived == workers_) update_and_reply();
    } else {
      record_lead(worker);
      // A pipelined worker computes a gradient while its exchange is on the wire, so its reply's
      // wait for the optimizer costs it nothing: apply, then answer, and the reply holds its own
      // push. Otherwise answer first, then apply: the worker's pull does not wait for the
      // optimizer, and its next gradient is at most one update staler than it would be otherwise.
      const auto apply = [&] {
        optimizer.step(parameters, std::span<const value>(incoming));
        ++stats_.updates;
      };
      if (pipelined()) apply();
      waiting_[worker] = true;
      release_waiting(t, parameters, replies);
      if (!pipelined()) apply();
    }
    stats_.server_busy_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - busy).count();
  }
  // Every worker received its last reply before it said it was done.
  for (auto& r : replies.values) r.wait();
  for (auto& r : replies.words) r.wait();
  for (auto& r : replies.assignments) r.wait();
  stats_.server_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::hand_over(Transport& t, Model&, Optimizer& optimizer) {
  optimizer.import_state(assembled_state(t, optimizer));
}

template <class Consistency>
template <class Transport>
void parameter_server<Consistency>::prepare_checkpoint(Transport& t) {
  saved_residuals_.clear();
  if (!compressed() || workers_ == 0 || !worker_index(t)) return;  // workers_ is 0 before setup
  // A worker that has not pushed yet owes nothing: zeros encode as no residual does.
  std::vector<float> mine(arena_, 0.0f);
  std::copy(feedback_.residual().begin(), feedback_.residual().end(), mine.begin());
  if (t.rank() != 0) {
    t.send(std::span<const float>(mine), 0, residual_tag);
    return;
  }
  saved_residuals_.resize(workers_);
  saved_residuals_[0] = std::move(mine);
  for (std::size_t w = 1; w < workers_; ++w) {
    saved_residuals_[w].resize(arena_);
    t.recv(std::span<float>(saved_residuals_[w]), static_cast<int>(w), residual_tag);
  }
}

template <class Consistency>
template <class Transport, class Optimizer>
optim::optimizer_state<typename Optimizer::value_type> parameter_server<Consistency>::assembled_state(
    Transport& t, const Optimizer& optimizer) const {
  using value = typename Optimizer::value_type;
  return assemble_sharded_state(t, optim::optimizer_state<value>(optimizer.export_state()), arena_, servers_);
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::end_epoch(Transport& t, Model& model, Optimizer& optimizer) {
  using value = typename Optimizer::value_type;
  if (colocated_) start_serving(t, optimizer);  // a worker without a batch this part serves all the same
  const std::span<value> parameters = as_span(model.parameters());
  if (requests_.in_flight()) {
    // Server 0 hands nothing out once it has handed out nothing, so the batch is none.
    const auto started = std::chrono::steady_clock::now();
    [[maybe_unused]] const std::optional<std::size_t> none = finish_exchange(t, parameters);
    stats_.worker_wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  if (worker_index(t)) {
    // In the pushes' element type: the servers receive every message of that tag as one. A
    // co-located rank tells its own server last, posted: if that server failed, the join below
    // reports why instead of a send that no one takes.
    for (std::size_t s = 0; s < servers_; ++s) {
      if (colocated_ && server_rank(s) == t.rank()) continue;
      if (compressed()) {
        t.send(std::span<const std::uint16_t>(), server_rank(s), push_tag);
      } else {
        t.send(std::span<const value>(), server_rank(s), push_tag);
      }
    }
  }
  if (colocated_) {
    const std::shared_ptr<void> done = post_empty<value>(t, t.rank(), push_tag);
    serving_.join();
    const std::vector<value>& served = buffers<value>().shard;
    const auto offset = static_cast<std::ptrdiff_t>(shard(*served_shard(t)).offset);
    std::copy(served.begin(), served.end(), parameters.begin() + offset);
  }
  for (std::size_t s = 0; s < servers_; ++s) {
    const block b = shard(s);
    collective::broadcast(t, parameters.subspan(b.offset, b.size), server_rank(s));
  }
}

}  // namespace switchyard::strategy

// Parameter-server data parallelism: S server ranks each own one contiguous shard of the
// parameters and its optimizer state; workers push each shard's gradient to its server and pull
// the fresh shard back. How long a worker may run ahead is the Consistency policy. This header
// holds the strategy, which drives its pieces in strategy/parameter_server/: protocol.hpp (the
// tags and the plan both sides share), worker.hpp (a worker's exchange), server.hpp (the servers'
// loop, one function per consistency mode), residuals.hpp (the compressed workers' residuals a
// checkpoint keeps), consistency.hpp (the Consistency policies), statistics.hpp (ps_statistics),
// coordinator.hpp (batch_coordinator: which batch server 0 hands out next), assembly.hpp
// (assemble_sharded_state: the whole optimizer state from the servers' shards),
// serving_thread.hpp (the thread a co-located server serves on) and node_aggregation.hpp (the
// node-aware exchange: a node's workers sum their gradients before one push).
#pragma once

#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/core/buffer.hpp>
#include <switchyard/core/compression.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/optim/optimizer_state.hpp>
#include <switchyard/strategy/parameter_server/assembly.hpp>
#include <switchyard/strategy/parameter_server/consistency.hpp>
#include <switchyard/strategy/parameter_server/coordinator.hpp>
#include <switchyard/strategy/parameter_server/node_aggregation.hpp>
#include <switchyard/strategy/parameter_server/protocol.hpp>
#include <switchyard/strategy/parameter_server/residuals.hpp>
#include <switchyard/strategy/parameter_server/server.hpp>
#include <switchyard/strategy/parameter_server/serving_thread.hpp>
#include <switchyard/strategy/parameter_server/statistics.hpp>
#include <switchyard/strategy/parameter_server/worker.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <algorithm>
#include <any>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

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
/// With `aggregation::node` (by default when the transport's topology has several nodes and more
/// than one rank on some node), the workers of a node send their gradients to the node's local
/// rank 0, which sums them in local-rank order, pushes the sum and pulls for the node, and sends
/// the node's workers the fresh parameters (BytePS): one push and one pull per node, and
/// co-located, one shard per node, served by its local rank 0. Servers weigh each push by the
/// workers it sums, so a synchronous update is still the mean over every worker's gradient and an
/// asynchronous one applies the mean of the node's; server 0 hands out a node's batches a block
/// at a time, and a stop rule that samples compares nodes (the slowest worker of each).
/// Pipelined (`pipelining::one_ahead`), local rank 0 pushes the node's sum and sends the node's
/// workers the parameters its last exchange pulled, so the whole node computes its next batches
/// while the push and pull are on the wire. Not with backup workers (`aggregation::automatic` then
/// stays per rank).
/// Each side is a piece of its own, over one `detail::ps_plan`: `detail::ps_worker` (a worker's
/// exchange), `detail::ps_server` (a server's loop) and `detail::ps_residuals` (the residuals a
/// checkpoint keeps).
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
  /// `aggregate`: whether a node's workers sum their gradients before one push (`aggregation`).
  explicit parameter_server(std::size_t servers, Consistency consistency,
                            compression::format compression = compression::format::none,
                            pipelining pipeline = pipelining::off, aggregation aggregate = aggregation::automatic)
      : plan_(initial_plan(servers, compression, pipeline)), aggregate_(aggregate), server_(consistency) {}
  /// Every rank works and serves one shard (`colocated`).
  explicit parameter_server(colocated_servers, Consistency consistency,
                            compression::format compression = compression::format::none,
                            pipelining pipeline = pipelining::off, aggregation aggregate = aggregation::automatic)
      : plan_(initial_plan(0, compression, pipeline)), colocated_(true), aggregate_(aggregate), server_(consistency) {}
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
    return switchyard::detail::str(name(), "[", compression::name(plan_.compression), "]");
  }
  /// How many ranks serve: as constructed, or with `colocated` servers 0 until `setup` and then
  /// every rank (aggregating by node: every node's local rank 0).
  [[nodiscard]] std::size_t servers() const noexcept { return plan_.servers; }
  /// Whose gradients a push carries, as asked (`aggregation::automatic` decides at `setup`).
  [[nodiscard]] aggregation aggregate() const noexcept { return aggregate_; }
  /// Whether the workers of a node sum their gradients before one push: what `setup` decided.
  [[nodiscard]] bool aggregates_by_node() const noexcept { return by_node_; }
  /// Aggregating by node, the straggler figures compare nodes (`traits::compares_nodes`): a node
  /// pushes once, after its slowest worker, so a slow node counts once, not once per worker.
  [[nodiscard]] bool compares_nodes() const noexcept { return by_node_; }
  /// Whether `setup` over `t` will aggregate by node: `aggregation::node`, or `automatic` over a
  /// hierarchical topology without backup workers.
  template <class Transport>
  [[nodiscard]] bool aggregates_by_node(const Transport& t) const {
    if (aggregate_ == aggregation::node) return true;
    return aggregate_ == aggregation::automatic && transport::topology_of(t).hierarchical() &&
           !consistency::has_backups<Consistency>;
  }
  /// Whether every rank serves, on a thread beside its worker.
  [[nodiscard]] bool colocated() const noexcept { return colocated_; }
  [[nodiscard]] const Consistency& consistency() const noexcept { return server_.consistency(); }
  [[nodiscard]] compression::format compression() const noexcept { return plan_.compression; }
  /// Whether workers overlap their exchange with their next batch's compute (`pipelining::one_ahead`).
  [[nodiscard]] bool pipelined() const noexcept { return plan_.pipelined; }
  /// What this rank measured, added up over every period the stage served since it was built (an
  /// `alternate` enters it again and again).
  [[nodiscard]] const ps_statistics& statistics() const noexcept { return stats_; }

  template <class Transport>
  [[nodiscard]] std::size_t worker_count(const Transport& t) const {
    const auto ranks = static_cast<std::size_t>(t.size());
    return colocated_ ? ranks : ranks - std::min(plan_.servers, ranks);
  }

  /// The batches one server update trains: one per worker when synchronous, W - B with B backup
  /// workers (at least one), else one (aggregating by node: the workers per node, rounded down).
  template <class Transport>
  [[nodiscard]] std::size_t batches_per_update(const Transport& t) const {
    if constexpr (consistency::has_backups<Consistency>) return server_.quorum(worker_count(t));
    if (consistency::is_synchronous<Consistency>) return worker_count(t);
    if (!aggregates_by_node(t)) return 1;
    return std::max<std::size_t>(1, worker_count(t) / static_cast<std::size_t>(transport::topology_of(t).nodes));
  }

  template <class Transport>
  [[nodiscard]] std::optional<std::size_t> worker_index(const Transport& t) const {
    const auto rank = static_cast<std::size_t>(t.rank());
    if (rank < worker_count(t)) return rank;
    return std::nullopt;
  }

  /// Gives every rank rank 0's parameters, then the ranks their roles and the servers their shards.
  template <class Transport, class Model, class Optimizer>
  void setup(Transport& t, Model& model, Optimizer& optimizer) {
    start(t, model, optimizer, true);
  }
  /// `setup` after a switch's hand-over, which left every rank with the same parameters: without
  /// their broadcast.
  template <class Transport, class Model, class Optimizer>
  void enter(Transport& t, Model& model, Optimizer& optimizer) {
    start(t, model, optimizer, false);
  }

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
        consistency().max_lead() != consistency::unbounded) {
      switchyard::detail::raise<usage_error>(
          "parameter_server: a sampling trigger (every > 0) needs asynchronous or backup-worker consistency: under "
          "bounded staleness the replies wait for the slowest worker, so every worker's requests come at its pace");
    }
    plan_.sampling = rule.sample_every != 0 && hands_out_batches();
    server_.coordinator().stop_when(std::move(rule));
  }
  /// On server 0, after the rule stopped this part of the epoch: the batches it handed out.
  [[nodiscard]] std::optional<std::size_t> stopped_after() const noexcept {
    return server_.coordinator().stopped_after();
  }

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
    if (compressed()) residuals_.serialize(archive);
  }


 private:
  // The plan a strategy starts with, before `setup` gives the ranks their roles.
  static detail::ps_plan initial_plan(std::size_t servers, compression::format compression, pipelining pipeline) {
    detail::ps_plan p;
    p.servers = servers;
    p.compression = compression;
    p.pipelined = pipeline == pipelining::one_ahead;
    p.hands_out_batches = !consistency::is_synchronous<Consistency>;
    p.backups = consistency::has_backups<Consistency>;
    return p;
  }
  [[nodiscard]] bool compressed() const noexcept { return plan_.compressed(); }
  // `setup`, and `enter` without the broadcast of the parameters.
  template <class Transport, class Model, class Optimizer>
  void start(Transport& t, Model& model, Optimizer& optimizer, bool broadcast_parameters);
  // Refuses, on every rank alike and before any message, a plan `setup` cannot serve.
  template <class Transport, class Value>
  void check_setup(const Transport& t) const;
  // A worker: waits for the exchange in flight (`ps_worker::finish_exchange`); a co-located rank
  // whose receive failed because its server failed (the server's alert) reports the server's
  // failure, the cause.
  template <class Transport, class T>
  std::optional<std::size_t> finish_exchange(Transport& t, std::span<T> parameters) {
    return worker_.finish_exchange(t, plan_, parameters, [this] {
      if (colocated_ && serving_.failed()) serving_.join();
    });
  }
  // A co-located server: starts this part's serving thread, unless it runs already.
  template <class Transport, class Optimizer>
  void start_serving(Transport& t, Optimizer& optimizer);
  // The exchange with the servers over `pt`, the ranks that push and serve: the whole group, or
  // aggregating by node, the nodes' local ranks 0 and the servers.
  template <class Transport, class Model, class Optimizer>
  void setup_exchange(Transport& pt, Model& model, Optimizer& optimizer);
  template <class Transport>
  void begin_exchange(Transport& pt, std::size_t batches);
  // `second`: pipelined, the batch the pushing rank trains second in a part, which it holds from
  // the part's start.
  template <class Transport, class T>
  step_outcome step_exchange(Transport& pt, std::span<T> parameters, std::span<const T> gradients,
                             double started, std::size_t second);
  template <class Transport, class Model, class Optimizer>
  void end_exchange(Transport& pt, Model& model, Optimizer& optimizer);
  // This rank's index among the workers of `pt`, if it pushes.
  template <class Transport>
  [[nodiscard]] std::optional<std::size_t> pushing_index(const Transport& pt) const {
    const auto rank = static_cast<std::size_t>(pt.rank());
    if (rank < plan_.workers) return rank;
    return std::nullopt;
  }
  // Aggregating by node: the groups `setup` split.
  template <class Transport>
  [[nodiscard]] detail::ps_node_layout<Transport>& layout() const {
    return std::any_cast<detail::ps_node_layout<Transport>&>(layout_);
  }

  detail::ps_plan plan_;
  bool colocated_ = false;
  aggregation aggregate_ = aggregation::automatic;
  bool by_node_ = false;      // what setup decided
  mutable std::any layout_;   // aggregating by node: the ps_node_layout of the transport
  detail::ps_node_exchange node_;
  std::size_t part_batches_ = 0;  // the batches of this part of the epoch, all workers together
  ps_statistics stats_;
  detail::ps_residuals residuals_;
  detail::ps_server<Consistency> server_;
  // Destroyed second, it stops the thread before the state the thread uses goes.
  detail::serving_thread serving_;
  // Last: destroyed first, and with it first its exchange's requests, before the serving thread
  // stops: under MPI destroying a pending request waits for it, and a pull waits for a reply from
  // every server, this rank's among them.
  detail::ps_worker worker_;
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <class Consistency>
template <class Transport, class Value>
void parameter_server<Consistency>::check_setup(const Transport& t) const {
  const std::size_t ranks = static_cast<std::size_t>(t.size());
  if (!colocated_ && (plan_.servers == 0 || plan_.servers >= ranks)) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "parameter_server on rank ", t.rank(), ": ", plan_.servers, " servers among ", ranks,
        " ranks; it needs at least 1 server and 1 worker"));
  }
  if (plan_.arena < plan_.servers) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str("parameter_server on rank ", t.rank(), ": ",
                                                                   plan_.servers, colocated_ ? " co-located" : "",
                                                                   " servers for a model of only ", plan_.arena,
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
  if (compressed() && !std::is_same_v<Value, float>) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "parameter_server on rank ", t.rank(), ": ", compression::name(plan_.compression),
        " compression encodes float parameters; this model's are ", sizeof(Value) * 8, "-bit"));
  }
  if (aggregate_ == aggregation::node && consistency::has_backups<Consistency>) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "parameter_server on rank ", t.rank(), ": aggregation::node sums a node's gradients before one push, which "
        "backup workers (which drop a late push whole, a node's at a time) do not support: use aggregation::rank (or "
        "automatic, which falls back to it)"));
  }
  if (consistency::has_backups<Consistency> && pipelined()) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "parameter_server on rank ", t.rank(), ": backup workers drop every gradient computed on parameters older "
        "than the server's, and a pipelined worker's every gradient is one exchange older: use pipelining::off"));
  }
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::start(Transport& t, Model& model, Optimizer& optimizer,
                                          bool broadcast_parameters) {
  using value = typename Optimizer::value_type;
  static_assert(std::is_same_v<value, float> || std::is_same_v<value, double>,
                "the parameter server serves float or double parameters (the optimizer's value_type)");
  // What a failed run left behind, if its caller trains again: its exchange's requests, then its
  // serving thread (in this order, as in the destructor).
  worker_.drop_exchange();
  serving_.stop();
  const auto ranks = static_cast<std::size_t>(t.size());
  plan_.arena = as_span(model.parameters()).size();
  by_node_ = aggregates_by_node(t);
  if (colocated_) plan_.servers = by_node_ ? static_cast<std::size_t>(transport::topology_of(t).nodes) : ranks;
  check_setup<Transport, value>(t);
  plan_.weights.clear();
  plan_.first_batches.clear();
  server_.coordinator().hand_out_blocks({});
  layout_.reset();
  if (broadcast_parameters) collective::broadcast(t, as_span(model.parameters()), 0);
  if (!by_node_) {
    setup_exchange(t, model, optimizer);
    return;
  }
  detail::ps_node_layout<Transport> groups = detail::split_by_node(t, worker_count(t));
  const bool works = worker_index(t).has_value();
  node_.template setup<value>(plan_.arena, groups.node.size(), works && groups.node.rank() == 0);
  if (groups.member) {
    plan_.weights = groups.sizes;
    plan_.first_batches = groups.first_ranks;
    server_.coordinator().hand_out_blocks(groups.sizes);
    setup_exchange(groups.members, model, optimizer);
  } else {
    residuals_.restore(t.rank(), plan_.arena, 0, std::nullopt, worker_.feedback());  // forgets them
  }
  layout_ = std::move(groups);
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::setup_exchange(Transport& pt, Model& model, Optimizer& optimizer) {
  using value = typename Optimizer::value_type;
  const auto ranks = static_cast<std::size_t>(pt.size());
  plan_.workers = colocated_ ? ranks : ranks - plan_.servers;
  plan_.first_server = colocated_ ? 0 : plan_.workers;
  worker_.feedback().reset();
  // A resumed run: each worker continues from its residual in the checkpoint.
  residuals_.restore(pt.rank(), plan_.arena, plan_.workers, pushing_index(pt), worker_.feedback());
  worker_.template setup<value>(plan_, pushing_index(pt).has_value());
  const std::optional<std::size_t> served = plan_.served_shard(static_cast<std::size_t>(pt.rank()));
  if (!served) return;
  const block mine = plan_.shard(*served);
  optimizer.import_state(optimizer.export_state().slice(mine.offset, mine.size));
  const auto parameters = as_span(model.parameters()).subspan(mine.offset, mine.size);
  server_.template setup<value>(plan_, std::span<const value>(parameters), colocated_);
}

template <class Consistency>
template <class Transport>
void parameter_server<Consistency>::begin_epoch(Transport& t, std::size_t batches) {
  // What a failed part left behind, if its caller trains again, in the destructor's order.
  worker_.drop_exchange();
  serving_.stop();
  part_batches_ = batches;
  residuals_.clear();  // the last checkpoint's, gathered on rank 0, are written by now
  if (!by_node_) {
    begin_exchange(t, batches);
    return;
  }
  node_.begin_part();
  detail::ps_node_layout<Transport>& groups = layout<Transport>();
  if (groups.member) begin_exchange(groups.members, batches);
}

template <class Consistency>
template <class Transport>
void parameter_server<Consistency>::begin_exchange(Transport& pt, std::size_t batches) {
  // Worker w starts the epoch with batch w (and w + W, pipelined); the rest are handed out with
  // the replies.
  server_.coordinator().begin_epoch(batches, plan_.workers, pipelined() ? 2 : 1);
  worker_.begin_part();
  if (!plan_.served_shard(static_cast<std::size_t>(pt.rank()))) return;
  server_.begin_part(plan_, batches);
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
step_outcome parameter_server<Consistency>::step(Transport& t, Model& model, Optimizer& optimizer) {
  using value = typename Optimizer::value_type;
  const double started = transport::seconds_now(t);
  const std::span<value> parameters = as_span(model.parameters());
  const std::span<const value> gradients(as_span(model.gradients()));
  if (!by_node_) {
    if (colocated_) start_serving(t, optimizer);
    return step_exchange(t, parameters, gradients, started, static_cast<std::size_t>(t.rank()) + plan_.workers);
  }
  detail::ps_node_layout<Transport>& groups = layout<Transport>();
  if (!groups.member) {
    // A worker of a node other than its local rank 0: the node's exchange is local rank 0's.
    const std::optional<std::size_t> next =
        node_.exchange(groups.node, gradients, parameters, started, hands_out_batches());
    stats_.worker_wait_seconds += transport::seconds_now(t) - started;
    return step_outcome{gradients.size_bytes(), hands_out_batches() ? next : std::nullopt};
  }
  if (colocated_) start_serving(groups.members, optimizer);
  const double slowest = node_.gather(groups.node, gradients);
  worker_.report_at_least(std::max(slowest, 0.0));
  // Pipelined, the part's first step hands each worker the second batch it holds from the start.
  const bool first_ahead = pipelined() && !worker_.in_flight();
  const std::size_t workers = worker_count(t);
  const step_outcome outcome = step_exchange(groups.members, parameters, node_.template sum<value>(), started,
                                             static_cast<std::size_t>(t.rank()) + workers);
  if (first_ahead) {
    node_.scatter_second(groups.node, std::span<const value>(parameters), std::span<const std::size_t>(groups.node_ranks),
                         workers, part_batches_, hands_out_batches());
  } else {
    node_.scatter(groups.node, std::span<const value>(parameters), outcome.next_batch, part_batches_,
                  hands_out_batches());
  }
  return outcome;
}

template <class Consistency>
template <class Transport, class T>
step_outcome parameter_server<Consistency>::step_exchange(Transport& pt, std::span<T> parameters,
                                                          std::span<const T> gradients,
                                                          double started, std::size_t second) {
  std::optional<std::size_t> next;
  if (pipelined() && worker_.in_flight()) {
    next = finish_exchange(pt, parameters);  // the last step's, while this step's gradient was computed
  } else if (pipelined() && hands_out_batches()) {
    // The part's first step: the worker's second batch was handed out with its first.
    if (second < part_batches_) next = second;
  }
  const std::size_t bytes = worker_.post_exchange(pt, plan_, parameters, gradients, started);
  if (!pipelined()) next = finish_exchange(pt, parameters);
  const double ended = transport::seconds_now(pt);
  worker_.mark_step_end(ended);
  stats_.worker_wait_seconds += ended - started;
  stats_.bytes_pushed += bytes;
  stats_.bytes_pulled += bytes;
  return step_outcome{bytes, hands_out_batches() ? next : std::nullopt};
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::serve(Transport& t, Model& model, Optimizer& optimizer) {
  const auto serve_over = [&](auto& pt) {
    const block mine = plan_.shard(static_cast<std::size_t>(pt.rank()) - plan_.first_server);
    server_.serve(pt, plan_, as_span(model.parameters()).subspan(mine.offset, mine.size), optimizer, stats_,
                  serving_);
  };
  if (by_node_) {
    serve_over(layout<Transport>().members);
  } else {
    serve_over(t);
  }
}

template <class Consistency>
template <class Transport, class Optimizer>
void parameter_server<Consistency>::start_serving(Transport& t, Optimizer& optimizer) {
  if (serving_.running()) return;
  using value = typename Optimizer::value_type;
  // The thread's own copies of the handle: the worker's may be gone when a failing rank stops it.
  serving_.start(
      t, [this, peer = t, &optimizer]() mutable {
        server_.serve(peer, plan_, server_.template served_parameters<value>(), optimizer, stats_, serving_);
      },
      [this, peer = t]() mutable { return detail::colocated_interrupt<value>(peer, plan_); },
      [this, peer = t]() mutable { return detail::colocated_alert<value>(peer, plan_); });
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::hand_over(Transport& t, Model&, Optimizer& optimizer) {
  optimizer.import_state(assembled_state(t, optimizer));
}

template <class Consistency>
template <class Transport>
void parameter_server<Consistency>::prepare_checkpoint(Transport& t) {
  residuals_.clear();
  if (!compressed()) return;
  if (!by_node_) {
    if (plan_.workers == 0 || !worker_index(t)) return;  // workers is 0 before setup
    residuals_.gather(t, worker_.feedback().residual(), plan_.arena, plan_.workers);
    return;
  }
  // Aggregating by node, the nodes' local ranks 0 push, and hold the residuals.
  detail::ps_node_layout<Transport>& groups = layout<Transport>();
  if (!groups.member || !pushing_index(groups.members)) return;
  residuals_.gather(groups.members, worker_.feedback().residual(), plan_.arena, plan_.workers);
}

template <class Consistency>
template <class Transport, class Optimizer>
optim::optimizer_state<typename Optimizer::value_type> parameter_server<Consistency>::assembled_state(
    Transport& t, const Optimizer& optimizer) const {
  using value = typename Optimizer::value_type;
  optim::optimizer_state<value> own(optimizer.export_state());
  if (!by_node_) return assemble_sharded_state(t, own, plan_.arena, plan_.servers);
  detail::ps_node_layout<Transport>& groups = layout<Transport>();
  optim::optimizer_state<value> whole =
      groups.member ? assemble_sharded_state(groups.members, own, plan_.arena, plan_.servers) : std::move(own);
  // The node's other workers take the state from its local rank 0.
  std::array<std::uint64_t, 2> counters{whole.step, whole.clock};
  collective::broadcast(groups.node, counters, 0);
  whole.step = counters[0];
  whole.clock = counters[1];
  whole.size = plan_.arena;
  for (std::vector<value>& slot : whole.slots) {
    slot.resize(plan_.arena);
    collective::broadcast(groups.node, slot, 0);
  }
  return whole;
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::end_epoch(Transport& t, Model& model, Optimizer& optimizer) {
  if (!by_node_) {
    end_exchange(t, model, optimizer);
    return;
  }
  detail::ps_node_layout<Transport>& groups = layout<Transport>();
  const bool works = worker_index(t).has_value();
  if (works && !groups.member) node_.done(groups.node);
  if (works && groups.member) node_.collect_done(groups.node);
  if (groups.member) end_exchange(groups.members, model, optimizer);
  // Every worker of the node gets the parameters its local rank 0 received.
  if (works) collective::broadcast(groups.node, as_span(model.parameters()), 0);
}

template <class Consistency>
template <class Transport, class Model, class Optimizer>
void parameter_server<Consistency>::end_exchange(Transport& pt, Model& model, Optimizer& optimizer) {
  using value = typename Optimizer::value_type;
  if (colocated_) start_serving(pt, optimizer);  // a worker without a batch this part serves all the same
  const std::span<value> parameters = as_span(model.parameters());
  if (worker_.in_flight()) {
    // Server 0 hands nothing out once it has handed out nothing, so the batch is none.
    const double started = transport::seconds_now(pt);
    [[maybe_unused]] const std::optional<std::size_t> none = finish_exchange(pt, parameters);
    stats_.worker_wait_seconds += transport::seconds_now(pt) - started;
  }
  if (pushing_index(pt)) {
    // In the pushes' element type: the servers receive every message of that tag as one. A
    // co-located rank tells its own server last, posted: if that server failed, the join below
    // reports why instead of a send that no one takes.
    for (std::size_t s = 0; s < plan_.servers; ++s) {
      if (colocated_ && plan_.server_rank(s) == pt.rank()) continue;
      if (compressed()) {
        pt.send(std::span<const std::uint16_t>(), plan_.server_rank(s), detail::ps_tags::push);
      } else {
        pt.send(std::span<const value>(), plan_.server_rank(s), detail::ps_tags::push);
      }
    }
  }
  if (colocated_) {
    const std::shared_ptr<void> done =
        detail::post_empty<value>(pt, compressed(), pt.rank(), detail::ps_tags::push);
    serving_.join();
    const std::span<const value> served = server_.template served_parameters<value>();
    const block mine = plan_.shard(*plan_.served_shard(static_cast<std::size_t>(pt.rank())));
    std::copy(served.begin(), served.end(), parameters.begin() + static_cast<std::ptrdiff_t>(mine.offset));
  }
  // Every shard to every rank: one server broadcasts it; several all-gather theirs in rank order,
  // the workers before them giving nothing (from 8 ranks Bruck's: log2 rounds in all, where a
  // broadcast per server takes log2 rounds each).
  if (plan_.servers == 1) {
    collective::broadcast(pt, parameters, plan_.server_rank(0));
    return;
  }
  collective::allgather_blocks(pt, parameters, [&](std::size_t rank) {
    const std::optional<std::size_t> served = plan_.served_shard(rank);
    if (served) return plan_.shard(*served);
    return block{rank < plan_.first_server ? 0 : parameters.size(), 0};
  });
}

}  // namespace switchyard::strategy

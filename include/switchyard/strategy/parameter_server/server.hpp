// A parameter server's server side: the loop that applies the workers' pushes to the shard a rank
// serves and answers their pulls, one function per consistency mode, and server 0's hand-out of
// the batches with its replies.
#pragma once

#include <switchyard/core/compression.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/strategy/parameter_server/consistency.hpp>
#include <switchyard/strategy/parameter_server/coordinator.hpp>
#include <switchyard/strategy/parameter_server/protocol.hpp>
#include <switchyard/strategy/parameter_server/serving_thread.hpp>
#include <switchyard/strategy/parameter_server/statistics.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/transport/transport.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace switchyard::strategy::detail {

/// @brief A parameter server's state on a rank that serves a shard, and its loop: `serve` applies
/// pushes to the shard and answers pulls until every worker said it finished the part of the
/// epoch, as `Consistency` says (`serve_async`, `serve_bounded`, `serve_sync`, `serve_backups`).
/// Server 0 also hands out the batches (`coordinator()`, which every rank keeps alike).
///
/// Each reply goes from that worker's own copy of the shard (or of its words under compression),
/// so the server takes the next push while the reply is on the wire, and its next update cannot
/// change what the reply sends.
/// @code
/// ps_server<consistency::async> server{consistency::async{}};
/// server.setup<float>(plan, shard_parameters, false);
/// server.begin_part(plan, batches);
/// server.serve(t, plan, shard_parameters, optimizer, statistics, serving);
/// @endcode
template <class Consistency>
class ps_server {
 public:
  explicit ps_server(Consistency consistency) : consistency_(consistency) {}

  [[nodiscard]] const Consistency& consistency() const noexcept { return consistency_; }
  /// Server 0's hand-out of the batches.
  [[nodiscard]] batch_coordinator& coordinator() noexcept { return coordinator_; }
  [[nodiscard]] const batch_coordinator& coordinator() const noexcept { return coordinator_; }

  /// Backup workers: how many fresh gradients of `workers` an update averages, at least one.
  [[nodiscard]] std::size_t quorum(std::size_t workers) const {
    if constexpr (consistency::has_backups<Consistency>) {
      const auto backup = static_cast<std::size_t>(consistency_.backup_workers());
      return backup >= workers ? 1 : workers - backup;
    } else {
      return workers;
    }
  }

  /// Sizes the state of a server of `plan` whose shard holds `shard_parameters`, which a
  /// `colocated` server copies: it serves its own copy, apart from its worker's.
  template <class T>
  void setup(const ps_plan& plan, std::span<const T> shard_parameters, bool colocated);

  /// A new part of an epoch of `batches` batches: every worker with a batch is live, at round 0.
  void begin_part(const ps_plan& plan, std::size_t batches);

  /// A co-located server's own copy of its shard's parameters.
  template <class T>
  [[nodiscard]] std::span<T> served_parameters() {
    return std::span<T>(buffers<T>().shard);
  }

  /// Applies pushes to `parameters`, this rank's shard, and answers pulls until every worker said it
  /// finished the part, or until `serving` (a co-located server's thread) is stopping.
  template <class Transport, class Optimizer>
  void serve(Transport& t, const ps_plan& plan, std::span<typename Optimizer::value_type> parameters,
             Optimizer& optimizer, ps_statistics& statistics, const serving_thread& serving);

 private:
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
  template <class T>
  [[nodiscard]] server_buffers<T>& buffers() {
    return std::get<server_buffers<T>>(buffers_);
  }

  // One call of `serve`: where it serves, and what it posted and counted so far.
  template <class Transport, class Optimizer>
  struct session {
    using value = typename Optimizer::value_type;
    template <class E>
    using request = decltype(std::declval<Transport&>().isend(std::span<const E>(), 0, 0));

    session(Transport& transport, const ps_plan& p, std::span<value> shard, Optimizer& o, ps_statistics& s,
            const serving_thread& thread)
        : t(transport), plan(p), parameters(shard), optimizer(o), stats(s), serving(thread) {}

    Transport& t;
    const ps_plan& plan;
    std::span<value> parameters;
    Optimizer& optimizer;
    ps_statistics& stats;
    const serving_thread& serving;
    // The replies posted, one slot per worker, and server 0's hand-outs.
    std::vector<std::array<std::int64_t, 2>> handed_out;  // server 0: each worker's last hand-out
    std::vector<request<value>> values;
    std::vector<request<std::uint16_t>> words;
    // Posted, not sent: a worker that failed with its receive of it posted (a pipelined worker
    // throws between steps) cancels that receive, and a blocking send would hold the thread past
    // `serving_thread::stop`.
    std::vector<request<std::int64_t>> assignments;
    std::size_t finished = 0;  // workers done with the part
    std::size_t arrived = 0;   // synchronous, backups: the gradients of this step the server holds
  };

  // The loop of every mode: `on_push(worker)` for each push, whose gradient is then in the incoming
  // buffer, and `on_done()` after each worker's "done"; true once every worker is done, false when
  // the serving thread is stopping (the rank failed, and its message released the wait).
  template <class Session, class OnPush, class OnDone>
  bool serve_until_done(Session& s, OnPush&& on_push, OnDone&& on_done);
  // No waiting (consistency::async): a push is answered at once.
  template <class Session>
  bool serve_async(Session& s);
  // Bounded staleness: a worker's reply waits while it leads the slowest live worker by more than
  // max_lead() steps.
  template <class Session>
  bool serve_bounded(Session& s);
  // Synchronous: one update per step, of every worker's gradient.
  template <class Session>
  bool serve_sync(Session& s);
  // Backup workers: one update per round, of its first W - B pushes.
  template <class Session>
  bool serve_backups(Session& s);

  // One push (or an empty "done" message) into the incoming buffer, decoded from words under
  // compression.
  template <class Session>
  transport::message_status receive_push(Session& s);
  // Applies the push of `worker` in the incoming buffer: the mean of the gradients it sums.
  template <class Session>
  void apply(Session& s, std::size_t worker);
  // Records how far ahead of the slowest live worker the worker's applied push is (its staleness).
  template <class Session>
  void record_lead(Session& s, std::size_t worker);
  // Synchronous, backups: the average of the gradients the server holds for this step, summed in
  // worker order (runs repeat bit for bit) and divided by the workers they sum (`ps_plan::weight`),
  // applied once; then each of their workers gets the new
  // shard.
  template <class Session>
  void update_and_reply(Session& s);
  // Backup workers: closes every round that has its quorum, each time taking the pushes held for
  // the round that comes next.
  template <class Session>
  void close_rounds(Session& s);
  // Replies to each waiting worker that no longer leads the slowest by more than max_lead().
  template <class Session>
  void release_waiting(Session& s);
  // Posts the shard to `worker` as its pull; server 0 also posts the next batch it hands out.
  // `encoded` says that the last reply sent these same parameters: replies to several workers
  // between two updates encode once.
  template <class Session>
  void reply(Session& s, std::size_t worker, bool encoded);
  // The clock of the slowest worker still training this part.
  [[nodiscard]] std::uint64_t slowest() const {
    std::uint64_t floor = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t w = 0; w < active_.size(); ++w) {
      if (active_[w]) floor = std::min(floor, completed_[w]);
    }
    return floor;
  }

  Consistency consistency_;
  batch_coordinator coordinator_;  // server 0: which batch to hand out next
  std::vector<std::uint64_t> completed_;  // pushes applied per worker this epoch
  std::vector<bool> active_;              // workers that have not finished this epoch
  std::vector<bool> waiting_;             // workers whose reply is held back
  // Synchronous and backup workers: the workers whose gradient of this step the server holds.
  std::vector<bool> accepted_;
  // Backup workers: the server's round (its updates this part), and the round of each worker's
  // push held for a later round (0: none; a held round is always above the current one).
  std::uint64_t server_round_ = 0;
  std::vector<std::uint64_t> held_;
  std::variant<server_buffers<float>, server_buffers<double>> buffers_;
};

/// @brief A co-located server's interrupt, posted to its own rank through `peer` (a copy of its
/// handle): an empty push, which its wait for the next push takes; on server 0 with sampling also
/// an empty compute report, which fails its wait for its own worker's report if the worker
/// cancelled that report after the server took the push beside it; with backup workers, for the
/// same reason, an empty round. Returns what keeps the messages alive.
template <class Value, class Transport>
[[nodiscard]] std::shared_ptr<void> colocated_interrupt(Transport& peer, const ps_plan& plan) {
  auto& control = control_handle(peer);
  auto push = post_empty<Value>(control, plan.compressed(), peer.rank(), ps_tags::push);
  if (plan.backups) {
    push = kept_together(std::move(push), post_empty<Value>(control, plan.compressed(), peer.rank(), ps_tags::round));
  }
  if (!plan.sampling || peer.rank() != plan.server_rank(0)) return push;
  return kept_together(std::move(push), post_empty<Value>(control, plan.compressed(), peer.rank(), ps_tags::compute));
}

/// @brief A co-located server's alert, posted to its own rank's worker through `peer`: an empty
/// pull and, from server 0, an empty hand-out, whose receives then fail. Returns what keeps the
/// messages alive.
template <class Value, class Transport>
[[nodiscard]] std::shared_ptr<void> colocated_alert(Transport& peer, const ps_plan& plan) {
  auto& control = control_handle(peer);
  auto pull = post_empty<Value>(control, plan.compressed(), peer.rank(), ps_tags::pull);
  if (!plan.hands_out_batches || peer.rank() != plan.server_rank(0)) return pull;
  return kept_together(std::move(pull), post_empty<Value>(control, plan.compressed(), peer.rank(), ps_tags::assign));
}

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <class Consistency>
template <class T>
void ps_server<Consistency>::setup(const ps_plan& plan, std::span<const T> shard_parameters, bool colocated) {
  const std::size_t workers = plan.workers;
  const std::size_t size = shard_parameters.size();
  completed_.assign(workers, 0);
  active_.assign(workers, true);
  waiting_.assign(workers, false);
  accepted_.assign(workers, false);
  held_.assign(workers, 0);
  server_buffers<T> server;
  server.incoming.resize(size);
  if constexpr (consistency::is_synchronous<Consistency> || consistency::has_backups<Consistency>) {
    server.pending.assign(workers, std::vector<T>(size));
  }
  if (colocated) server.shard.assign(shard_parameters.begin(), shard_parameters.end());
  if (plan.compressed()) {
    server.outgoing_words.assign(workers, std::vector<std::uint16_t>(size));
    server.received_words.assign(size, 0);
  } else {
    server.outgoing.assign(workers, std::vector<T>(size));
  }
  buffers_ = std::move(server);
}

template <class Consistency>
void ps_server<Consistency>::begin_part(const ps_plan& plan, std::size_t batches) {
  std::fill(completed_.begin(), completed_.end(), 0);
  for (std::size_t w = 0; w < plan.workers; ++w) active_[w] = plan.first_batch(w) < batches;
  // Every part starts at round 0, on every server and worker.
  server_round_ = 0;
  std::fill(accepted_.begin(), accepted_.end(), false);
  std::fill(held_.begin(), held_.end(), 0);
}

template <class Consistency>
template <class Transport, class Optimizer>
void ps_server<Consistency>::serve(Transport& t, const ps_plan& plan,
                                   std::span<typename Optimizer::value_type> parameters, Optimizer& optimizer,
                                   ps_statistics& statistics, const serving_thread& serving) {
  const double started = transport::seconds_now(t);
  session<Transport, Optimizer> s(t, plan, parameters, optimizer, statistics, serving);
  if (plan.compressed()) {
    s.words.resize(plan.workers);
  } else {
    s.values.resize(plan.workers);
  }
  if (plan.hands_out_batches && t.rank() == plan.server_rank(0)) {
    s.handed_out.resize(plan.workers);
    s.assignments.resize(plan.workers);
  }
  bool done = false;
  if constexpr (consistency::has_backups<Consistency>) {
    done = serve_backups(s);
  } else if constexpr (consistency::is_synchronous<Consistency>) {
    done = serve_sync(s);
  } else if (static_cast<std::size_t>(consistency_.max_lead()) == consistency::unbounded) {
    done = serve_async(s);
  } else {
    done = serve_bounded(s);
  }
  if (!done) return;
  // Every worker received its last reply before it said it was done.
  for (auto& r : s.values) r.wait();
  for (auto& r : s.words) r.wait();
  for (auto& r : s.assignments) r.wait();
  statistics.server_seconds += transport::seconds_now(t) - started;
}

template <class Consistency>
template <class Session, class OnPush, class OnDone>
bool ps_server<Consistency>::serve_until_done(Session& s, OnPush&& on_push, OnDone&& on_done) {
  const std::size_t shard_size = s.parameters.size();
  while (s.finished < s.plan.workers) {
    const transport::message_status pushed = receive_push(s);
    if (s.serving.stopping()) return false;
    const auto worker = static_cast<std::size_t>(pushed.source);
    if (worker >= s.plan.workers) {
      switchyard::detail::raise<transport_error>(switchyard::detail::str(
          "parameter_server on rank ", s.t.rank(), ": a push from rank ", pushed.source, ", which is not a worker"));
    }
    if (pushed.count == 0) {
      // A worker done with the epoch no longer holds the others back.
      ++s.finished;
      active_[worker] = false;
      on_done();
      continue;
    }
    if (pushed.count != shard_size) {
      switchyard::detail::raise<transport_error>(switchyard::detail::str(
          "parameter_server on rank ", s.t.rank(), ": worker ", worker, " pushed ", pushed.count,
          " gradient elements, the shard has ", shard_size));
    }
    ++s.stats.pushes;
    const double busy = transport::seconds_now(s.t);
    on_push(worker);
    s.stats.server_busy_seconds += transport::seconds_now(s.t) - busy;
  }
  return true;
}

// A pipelined worker computes a gradient while its exchange is on the wire, so its reply's wait
// for the optimizer costs it nothing: apply, then answer, and the reply holds its own push.
// Otherwise answer first, then apply: the worker's pull does not wait for the optimizer, and its
// next gradient is at most one update staler than it would be otherwise.
template <class Consistency>
template <class Session>
bool ps_server<Consistency>::serve_async(Session& s) {
  const auto on_push = [&](std::size_t worker) {
    record_lead(s, worker);
    if (s.plan.pipelined) apply(s, worker);
    reply(s, worker, false);
    if (!s.plan.pipelined) apply(s, worker);
  };
  // No reply waits, so a worker's "done" releases none.
  return serve_until_done(s, on_push, [] {});
}

template <class Consistency>
template <class Session>
bool ps_server<Consistency>::serve_bounded(Session& s) {
  const auto on_push = [&](std::size_t worker) {
    record_lead(s, worker);
    if (s.plan.pipelined) apply(s, worker);  // in the order serve_async's comment gives
    waiting_[worker] = true;
    release_waiting(s);
    if (!s.plan.pipelined) apply(s, worker);
  };
  // A worker done with the part may have been the slowest.
  return serve_until_done(s, on_push, [&] { release_waiting(s); });
}

template <class Consistency>
template <class Session>
bool ps_server<Consistency>::serve_sync(Session& s) {
  using value = typename Session::value;
  const std::vector<value>& incoming = buffers<value>().incoming;
  std::vector<std::vector<value>>& pending = buffers<value>().pending;
  const auto on_push = [&](std::size_t worker) {
    record_lead(s, worker);
    std::copy(incoming.begin(), incoming.end(), pending[worker].begin());
    accepted_[worker] = true;
    if (++s.arrived == s.plan.workers) update_and_reply(s);
  };
  return serve_until_done(s, on_push, [] {});
}

template <class Consistency>
template <class Session>
bool ps_server<Consistency>::serve_backups(Session& s) {
  using value = typename Session::value;
  const std::vector<value>& incoming = buffers<value>().incoming;
  std::vector<std::vector<value>>& pending = buffers<value>().pending;
  const auto on_push = [&](std::size_t worker) {
    // The round the push belongs to, which its worker posted before it.
    std::int64_t tag = -1;
    s.t.recv(std::span<std::int64_t>(&tag, 1), static_cast<int>(worker), ps_tags::round);
    if (tag < 0) {
      switchyard::detail::raise<transport_error>(switchyard::detail::str(
          "parameter_server on rank ", s.t.rank(), ": worker ", worker, " tagged its push with round ", tag));
    }
    const auto round = static_cast<std::uint64_t>(tag);
    if (round < server_round_) {
      // A round this server has closed: a backup worker's late gradient. It is dropped, and the
      // worker gets the current shard at once.
      ++s.stats.dropped;
      reply(s, worker, false);
      return;
    }
    std::copy(incoming.begin(), incoming.end(), pending[worker].begin());
    if (round == server_round_) {
      accepted_[worker] = true;
      ++s.stats.staleness[0];
      ++s.arrived;
      close_rounds(s);
    } else {
      // Server 0 has closed this server's round already: the push waits for the next.
      held_[worker] = round;
    }
  };
  // Once fewer live workers are left than a quorum, a round waits only for them.
  return serve_until_done(s, on_push, [&] { close_rounds(s); });
}

template <class Consistency>
template <class Session>
transport::message_status ps_server<Consistency>::receive_push(Session& s) {
  using value = typename Session::value;
  std::vector<value>& incoming = buffers<value>().incoming;
  if constexpr (std::is_same_v<value, float>) {
    if (s.plan.compressed()) {
      std::vector<std::uint16_t>& words = buffers<float>().received_words;
      const transport::message_status pushed = s.t.recv_any(std::span<std::uint16_t>(words), ps_tags::push);
      if (pushed.count == incoming.size()) {
        compression::with_codec(s.plan.compression, [&]<class Codec>(Codec) {
          compression::decode<Codec>(std::span<const std::uint16_t>(words), incoming);
        });
      }
      return pushed;
    }
  }
  return s.t.recv_any(std::span<value>(incoming), ps_tags::push);
}

template <class Consistency>
template <class Session>
void ps_server<Consistency>::apply(Session& s, std::size_t worker) {
  using value = typename Session::value;
  std::vector<value>& incoming = buffers<value>().incoming;
  if (const std::size_t weight = s.plan.weight(worker); weight != 1) {
    for (value& g : incoming) g /= static_cast<value>(weight);
  }
  s.optimizer.step(s.parameters, std::span<const value>(incoming));
  ++s.stats.updates;
}

template <class Consistency>
template <class Session>
void ps_server<Consistency>::record_lead(Session& s, std::size_t worker) {
  const std::uint64_t lead = completed_[worker] - slowest();
  ++s.stats.staleness[std::min<std::size_t>(lead, s.stats.staleness.size() - 1)];
  ++completed_[worker];
}

template <class Consistency>
template <class Session>
void ps_server<Consistency>::update_and_reply(Session& s) {
  using value = typename Session::value;
  std::vector<value>& incoming = buffers<value>().incoming;
  const std::vector<std::vector<value>>& pending = buffers<value>().pending;
  bool first = true;
  std::size_t summed = 0;  // the workers whose gradients the pushes held sum
  for (std::size_t w = 0; w < s.plan.workers; ++w) {
    if (!accepted_[w]) continue;
    summed += s.plan.weight(w);
    if (first) {
      std::copy(pending[w].begin(), pending[w].end(), incoming.begin());
    } else {
      for (std::size_t i = 0; i < incoming.size(); ++i) incoming[i] += pending[w][i];
    }
    first = false;
  }
  for (value& g : incoming) g /= static_cast<value>(summed);
  s.optimizer.step(s.parameters, std::span<const value>(incoming));
  ++s.stats.updates;
  ++server_round_;
  s.arrived = 0;
  bool encoded = false;
  for (std::size_t w = 0; w < s.plan.workers; ++w) {
    if (!accepted_[w]) continue;
    accepted_[w] = false;
    reply(s, w, encoded);
    encoded = true;
  }
}

template <class Consistency>
template <class Session>
void ps_server<Consistency>::close_rounds(Session& s) {
  // How many gradients a round needs: W - B, or every live worker once fewer are left in the part.
  const auto live = static_cast<std::size_t>(std::count(active_.begin(), active_.end(), true));
  const std::size_t needed = std::min(quorum(s.plan.workers), live);
  while (s.arrived > 0 && s.arrived >= needed) {
    update_and_reply(s);
    for (std::size_t w = 0; w < s.plan.workers; ++w) {
      if (held_[w] != server_round_) continue;
      held_[w] = 0;
      accepted_[w] = true;
      ++s.stats.staleness[0];
      ++s.arrived;
    }
  }
}

template <class Consistency>
template <class Session>
void ps_server<Consistency>::release_waiting(Session& s) {
  const std::uint64_t floor = slowest();
  bool encoded = false;
  for (std::size_t w = 0; w < s.plan.workers; ++w) {
    if (waiting_[w] && completed_[w] - floor <= static_cast<std::size_t>(consistency_.max_lead())) {
      waiting_[w] = false;
      reply(s, w, encoded);
      encoded = true;
    }
  }
}

template <class Consistency>
template <class Session>
void ps_server<Consistency>::reply(Session& s, std::size_t worker, bool encoded) {
  using value = typename Session::value;
  server_buffers<value>& b = buffers<value>();
  const auto destination = static_cast<int>(worker);
  // The worker received its last reply before it pushed again, so its slot is free: the waits
  // return at once.
  if constexpr (std::is_same_v<value, float>) {
    if (s.plan.compressed()) {
      s.words[worker].wait();
      std::vector<std::uint16_t>& words = b.outgoing_words[worker];
      if (encoded) {
        std::copy(b.outgoing_words[b.last_reply].begin(), b.outgoing_words[b.last_reply].end(), words.begin());
      } else {
        compression::with_codec(s.plan.compression, [&]<class Codec>(Codec) {
          compression::encode<Codec>(std::span<const float>(s.parameters), words);
        });
      }
      s.words[worker] = s.t.isend(std::span<const std::uint16_t>(words), destination, ps_tags::pull);
    }
  }
  if (!s.plan.compressed()) {
    s.values[worker].wait();
    std::vector<value>& copy = b.outgoing[worker];
    std::copy(s.parameters.begin(), s.parameters.end(), copy.begin());
    s.values[worker] = s.t.isend(std::span<const value>(copy), destination, ps_tags::pull);
  }
  b.last_reply = worker;
  if (!s.plan.hands_out_batches || s.t.rank() != s.plan.server_rank(0)) return;
  std::optional<double> compute;
  if (s.plan.sampling) {
    value reported{};
    s.t.recv(std::span<value>(&reported, 1), destination, ps_tags::compute);
    if (reported >= 0) compute = static_cast<double>(reported);
  }
  const std::optional<std::size_t> next = coordinator_.next(worker, compute, transport::seconds_now(s.t));
  // The worker received its last hand-out before it pushed again: the wait returns at once.
  s.assignments[worker].wait();
  // The batch, and the round the worker's next push belongs to (backup workers).
  std::array<std::int64_t, 2>& handed = s.handed_out[worker];
  handed = {next ? static_cast<std::int64_t>(*next) : -1, static_cast<std::int64_t>(server_round_)};
  s.assignments[worker] = s.t.isend(std::span<const std::int64_t>(handed), destination, ps_tags::assign);
}

}  // namespace switchyard::strategy::detail

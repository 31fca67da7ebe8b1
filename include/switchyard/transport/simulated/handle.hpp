// One rank's handle on a simulated world: point-to-point messages through SimGrid mailboxes with
// the tag and source matching done here, a barrier and split, and the native all-reduce and
// reduce-scatter, which fold every rank's block in rank order as the in-process ones do.
#pragma once

#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/core/operations.hpp>
#include <switchyard/core/partition.hpp>
#include <switchyard/transport/simulated/activity.hpp>
#include <switchyard/transport/simulated/fabric.hpp>
#include <switchyard/transport/simulated/request.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::transport {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief One rank's handle on a simulated world (or a group split from it): the rank is a
/// SimGrid actor on a simulated host, and its messages cost their size on the simulated links.
///
/// A small value: copies refer to the same rank of the same group. Made by
/// `simulated_world::run`; using a handle after `run` returned throws `usage_error`.
/// @code
/// switchyard::transport::simulated_options options;
/// options.platform.hosts = 16;
/// switchyard::transport::run_simulated(options, [](switchyard::transport::simulated& t) {
///   std::vector<float> grad(1000, float(t.rank()));
///   switchyard::collective::allreduce(t, grad, switchyard::ops::sum{});
///   double seconds = t.now();   // simulated time since the run began
/// });
/// @endcode
class simulated {
 public:
  using request = simulated_request;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return group_->size; }

  template <arithmetic T>
  void send(std::span<const T> data, int destination, int tag) {
    isend(data, destination, tag).wait();
  }
  template <arithmetic T>
  void recv(std::span<T> data, int source, int tag) {
    irecv(data, source, tag).wait();
  }
  template <arithmetic T>
  [[nodiscard]] simulated_request isend(std::span<const T> data, int destination, int tag);
  template <arithmetic T>
  [[nodiscard]] simulated_request irecv(std::span<T> data, int source, int tag);
  /// Receives the next message with `tag` (or any tag, with `any_tag`) from any rank; it may hold
  /// fewer elements than `data`, never more.
  template <arithmetic T>
  message_status recv_any(std::span<T> data, int tag);

  /// A dissemination barrier of empty messages: ceil(log2(n)) rounds of the network's latency.
  void barrier();
  /// Collective over the group: ranks that pass the same `color` (>= 0) form a new group, ranked
  /// by (`key`, old rank).
  [[nodiscard]] simulated split(int color, int key);

  /// Native all-reduce: every rank sends block b of its buffer to rank b, which folds the blocks
  /// in rank order (the in-process transport's order, so the same bits) and sends the result to
  /// every rank. Empty blocks are not sent, and a rank has at most `detail::native_window` sends
  /// and as many receives under way (see `simulated_options::native_collectives`).
  template <arithmetic T, class Op>
  void native_allreduce(std::span<T> data, Op op);
  /// Native reduce-scatter: the first half of the native all-reduce; returns this rank's block.
  template <arithmetic T, class Op>
  std::span<T> native_reduce_scatter(std::span<T> data, Op op);
  /// Native all-gather: every rank sends `mine` to every other rank directly, in the native
  /// all-reduce's steps and window: (p - 1) / 32 route latencies where the ring pays p - 1.
  template <arithmetic T>
  void native_allgather(std::span<const T> mine, std::span<T> all);
  /// Whether `algorithm::automatic` takes the native collectives in this group
  /// (`simulated_options::native_collectives` and `native_max_ranks`).
  [[nodiscard]] bool prefers_native() const noexcept {
    const simulated_options& o = group_->fabric->options;
    return o.native_collectives && size() <= o.native_max_ranks;
  }

  /// The ranks are actors that take turns on one thread (see transport::ranks_share_a_thread):
  /// a rank's concurrent activities are actors too (`spawn`), never threads.
  static constexpr bool ranks_share_a_thread = true;
  /// True: the activities a rank spawned may call its transport, beside the rank itself.
  [[nodiscard]] static bool serves_other_threads() noexcept { return true; }

  /// The concurrency hook (transport/concurrency.hpp): `spawn(f)` runs `f` as an actor on this
  /// rank's host, with a library state of its own and this activity's floating-point mode; waits
  /// on these are SimGrid's, so they block in simulated time and let the other actors run.
  using mutex_type = simulated_mutex;
  using condition_variable_type = simulated_condition_variable;
  template <class F>
  [[nodiscard]] simulated_activity spawn(F&& f);

  /// This rank's collective checks on this group.
  [[nodiscard]] collective_check_state& collective_checks() noexcept {
    return group_->checks[static_cast<std::size_t>(rank_)];
  }

  /// Simulated seconds since the world's run began, on this rank's clock (the clock hook of
  /// transport/concurrency.hpp); the compute the calling activity did since its last transport
  /// call runs on the host first (`compute_model::measured`).
  [[nodiscard]] double now() const;
  /// Runs `seconds` of this machine's CPU time on this rank's host (taking 1/f of it on a host of
  /// speed factor f, sharing the host's cores with its other ranks), on top of what the compute
  /// model measures: how a program charges its compute under `compute_model::calibrated`.
  /// Free under `compute_model::none`; `usage_error` for a negative or non-finite time.
  void compute(double seconds);
  /// The index of the simulated host this rank runs on.
  [[nodiscard]] int host() const noexcept { return group_->rank(rank_).host_index; }
  /// This rank's node: the ranks of the group on one simulated host form a node
  /// (`simulated_options::ranks_per_host` of them, placed in blocks), numbered in the order of
  /// their lowest rank. `algorithm::automatic` takes the hierarchical all-reduce on several hosts
  /// with more than one rank on some host, and `strategy::aggregation::node` aggregates per host.
  [[nodiscard]] node_topology topology() const noexcept { return group_->topology[static_cast<std::size_t>(rank_)]; }
  /// What the collectives keep between calls on this group (see transport/topology.hpp), a fresh
  /// one for each group made by `split`.
  [[nodiscard]] transport::group_cache& group_cache() noexcept {
    return group_->caches[static_cast<std::size_t>(rank_)];
  }

 private:
  friend class simulated_world;
  simulated(std::shared_ptr<detail::sim_group> group, int rank, double start)
      : group_(std::move(group)), rank_(rank), start_(start) {}

  [[nodiscard]] detail::sim_rank& self() const { return group_->rank(rank_); }
  template <arithmetic T>
  simulated_request post_send(std::span<const T> data, int destination, int tag);
  template <arithmetic T>
  simulated_request post_receive(std::span<T> data, int source, int tag, bool exact);
  template <arithmetic T, class Op>
  switchyard::block fold_blocks(std::span<T> data, Op op);
  template <class Send, class Receive>
  void exchange_with_all(Send send_to, Receive receive_from);

  std::shared_ptr<detail::sim_group> group_;
  int rank_;
  double start_;
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <arithmetic T>
simulated_request simulated::post_send(std::span<const T> data, int destination, int tag) {
  detail::sim_fabric& fabric = *group_->fabric;
  detail::sim_message* m = detail::new_message(fabric, group_->id, rank_, tag, data.size_bytes());
  m->element_size = sizeof(T);
  m->element_type = &detail::element_type_tag<T>;
  if (!data.empty()) std::memcpy(m->data(), data.data(), data.size_bytes());
  detail::sim_rank& me = self();
  const int to = group_->world_ranks[static_cast<std::size_t>(destination)];
  m->remote = fabric.rank(to).host != me.host;
  const bool remote = m->remote;
  simgrid::s4u::CommPtr comm = detail::blocking(me, [&] { return detail::post(fabric, m, to); });
  detail::charge_bytes(fabric, me, data.size_bytes(), remote);
  return simulated_request(group_, rank_, std::move(comm),
                           {detail::sim_operation::kind::send, data.size(), destination, tag});
}

template <arithmetic T>
simulated_request simulated::post_receive(std::span<T> data, int source, int tag, bool exact) {
  auto r = std::make_unique<detail::sim_receive>();
  r->group = group_->id;
  r->source = source;
  r->tag = tag;
  r->data = reinterpret_cast<std::byte*>(data.data());
  r->bytes = data.size_bytes();
  r->element_size = sizeof(T);
  r->element_type = &detail::element_type_tag<T>;
  r->exact = exact;
  detail::sim_rank& me = self();
  auto& waiting = me.unexpected;
  const auto match = std::find_if(waiting.begin(), waiting.end(), [&r](const detail::sim_message* m) { return detail::accepts(*r, *m); });
  if (match != waiting.end()) {
    detail::sim_message* m = *match;
    waiting.erase(match);
    detail::complete(*r, *m, me.world_rank);
    group_->fabric->message_pool.release(m);
  } else {
    me.posted.push_back(r.get());
  }
  return simulated_request(group_, rank_, std::move(r), {detail::sim_operation::kind::receive, data.size(), source, tag});
}

template <arithmetic T>
simulated_request simulated::isend(std::span<const T> data, int destination, int tag) {
  detail::enter_call(*group_->fabric, self(), "send");
  detail::check_peer(*group_, rank_, destination, "send", false);
  return post_send(data, destination, tag);
}

template <arithmetic T>
simulated_request simulated::irecv(std::span<T> data, int source, int tag) {
  detail::enter_call(*group_->fabric, self(), "receive");
  detail::check_peer(*group_, rank_, source, "receive", true);
  return post_receive(data, source, tag, true);
}

template <arithmetic T>
message_status simulated::recv_any(std::span<T> data, int tag) {
  detail::enter_call(*group_->fabric, self(), "receive from any rank");
  simulated_request r = post_receive(data, any_source, tag, false);
  r.wait();
  return r.status();
}

inline void simulated::barrier() {
  detail::enter_call(*group_->fabric, self(), "barrier");
  const int n = size();
  const std::span<const char> nothing;
  const std::span<char> into;
  for (int distance = 1; distance < n; distance *= 2) {
    simulated_request out = post_send(nothing, (rank_ + distance) % n, detail::barrier_tag);
    simulated_request in = post_receive(into, (rank_ - distance + n) % n, detail::barrier_tag, true);
    in.wait();
    out.wait();
  }
}

inline simulated simulated::split(int color, int key) {
  detail::enter_call(*group_->fabric, self(), "split");
  if (color < 0) {
    detail::raise<usage_error>(detail::str("rank ", rank_, ": split color must be >= 0, got ", color));
  }
  // The ranks take turns on one thread, so the group's tables need no lock: the barriers order
  // the writes and reads, and cost what a real split's exchange would.
  detail::sim_group& g = *group_;
  g.splits[static_cast<std::size_t>(rank_)] = {color, key};
  barrier();
  bool leader = true;
  for (int r = 0; r < rank_; ++r) {
    if (g.splits[static_cast<std::size_t>(r)].color == color) leader = false;
  }
  if (leader) {
    std::vector<int> members;
    for (int r = 0; r < g.size; ++r) {
      if (g.splits[static_cast<std::size_t>(r)].color == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(), [&g](int a, int b) {
      return g.splits[static_cast<std::size_t>(a)].key < g.splits[static_cast<std::size_t>(b)].key;
    });
    std::vector<int> world;
    world.reserve(members.size());
    for (int m : members) world.push_back(g.world_ranks[static_cast<std::size_t>(m)]);
    auto child = std::make_shared<detail::sim_group>(g.fabric, g.fabric->next_group++, std::move(world));
    for (std::size_t i = 0; i < members.size(); ++i) {
      g.split_results[static_cast<std::size_t>(members[i])] = {child, static_cast<int>(i)};
    }
  }
  barrier();
  auto [child, child_rank] = std::move(g.split_results[static_cast<std::size_t>(rank_)]);
  return simulated(std::move(child), child_rank, start_);
}

template <class Send, class Receive>
void simulated::exchange_with_all(Send send_to, Receive receive_from) {
  const int n = size();
  detail::request_window sends;
  detail::request_window receives;
  // At step j a rank sends to the j-th rank after it and receives from the j-th before it, which
  // sends to it at its own step j: messages come in the order their receives are posted, and a
  // rank that waits for the receive of step j waits for a send its peer posts without waiting
  // for any receive after step j - native_window, so the windows cannot deadlock.
  for (int j = 1; j < n; ++j) {
    sends.push([&] { return send_to((rank_ + j) % n); });
    receives.push([&] { return receive_from((rank_ - j + n) % n); });
  }
  receives.wait_all();
  sends.wait_all();
}

template <arithmetic T, class Op>
switchyard::block simulated::fold_blocks(std::span<T> data, Op op) {
  const int n = size();
  const auto parts = static_cast<std::size_t>(n);
  const auto block = [&](int r) { return switchyard::block_of(data.size(), parts, static_cast<std::size_t>(r)); };
  const switchyard::block mine = block(rank_);
  // Every rank's copy of my block, by rank.
  std::vector<std::byte>& storage = self().native_scratch;
  storage.resize(std::max(storage.size(), mine.size * parts * sizeof(T)));
  const std::span<T> others(reinterpret_cast<T*>(storage.data()), mine.size * parts);
  // An empty block goes nowhere: a buffer of k < n elements costs k messages a rank, not n - 1.
  exchange_with_all(
      [&](int r) {
        const switchyard::block theirs = block(r);
        return theirs.size == 0 ? simulated_request()
                                : post_send(std::span<const T>(data.subspan(theirs.offset, theirs.size)), r,
                                            detail::native_reduce_tag);
      },
      [&](int r) {
        return mine.size == 0 ? simulated_request()
                              : post_receive(others.subspan(static_cast<std::size_t>(r) * mine.size, mine.size), r,
                                             detail::native_reduce_tag, true);
      });
  const std::span<T> own = data.subspan(mine.offset, mine.size);
  std::copy(own.begin(), own.end(), others.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(rank_) * mine.size));
  for (std::size_t i = 0; i < mine.size; ++i) {
    T acc = others[i];
    for (std::size_t r = 1; r < parts; ++r) acc = op(acc, others[r * mine.size + i]);
    own[i] = acc;
  }
  finalize_all<Op>(own, n);
  return mine;
}

template <arithmetic T, class Op>
void simulated::native_allreduce(std::span<T> data, Op op) {
  detail::enter_call(*group_->fabric, self(), "allreduce");
  const int n = size();
  if (n == 1) {
    finalize_all<Op>(data, 1);
    return;
  }
  const auto block = [&](int r) { return switchyard::block_of(data.size(), static_cast<std::size_t>(n), static_cast<std::size_t>(r)); };
  const switchyard::block mine = fold_blocks(data, op);
  exchange_with_all(
      [&](int r) {
        return mine.size == 0 ? simulated_request()
                              : post_send(std::span<const T>(data.subspan(mine.offset, mine.size)), r,
                                          detail::native_gather_tag);
      },
      [&](int r) {
        const switchyard::block theirs = block(r);
        return theirs.size == 0 ? simulated_request()
                                : post_receive(data.subspan(theirs.offset, theirs.size), r, detail::native_gather_tag, true);
      });
}

template <arithmetic T, class Op>
std::span<T> simulated::native_reduce_scatter(std::span<T> data, Op op) {
  detail::enter_call(*group_->fabric, self(), "reduce_scatter");
  if (size() == 1) {
    finalize_all<Op>(data, 1);
    return data;
  }
  const switchyard::block mine = fold_blocks(data, op);
  return data.subspan(mine.offset, mine.size);
}

template <arithmetic T>
void simulated::native_allgather(std::span<const T> mine, std::span<T> all) {
  detail::enter_call(*group_->fabric, self(), "allgather");
  const std::size_t each = mine.size();
  const auto slot = [&](int r) { return all.subspan(static_cast<std::size_t>(r) * each, each); };
  std::copy(mine.begin(), mine.end(), slot(rank_).begin());
  if (size() == 1 || each == 0) return;
  exchange_with_all([&](int r) { return post_send(mine, r, detail::native_gather_tag); },
                    [&](int r) { return post_receive(slot(r), r, detail::native_gather_tag, true); });
}

template <class F>
simulated_activity simulated::spawn(F&& f) {
  detail::sim_rank& me = self();
  detail::enter_call(*group_->fabric, me, "spawn");
  auto spawned = std::make_shared<detail::sim_spawned>();
  spawned->activity = {&me, &spawned->context, 0};
  spawned->context.floating_point_mode = switchyard::detail::read_fp_control();
  const std::string name = detail::str("rank-", me.world_rank, "-activity-", me.spawned++);
  auto body = [spawned, fabric = group_->fabric, run = std::forward<F>(f)]() mutable {
    detail::start_activity(spawned->activity);
    try {
      run();
    } catch (const simgrid::ForcefulKillException&) {
      throw;  // SimGrid ends a deadlocked run this way
    } catch (const std::exception& e) {
      detail::abort_world(*fabric, spawned->activity.rank->world_rank, std::current_exception(), e.what(), true);
    } catch (...) {
      detail::abort_world(*fabric, spawned->activity.rank->world_rank, std::current_exception(),
                          "an exception not derived from std::exception", true);
    }
  };
  simgrid::s4u::ActorPtr actor =
      detail::blocking(me, [&] { return simgrid::s4u::Actor::create(name, me.host, std::move(body)); });
  return simulated_activity(std::move(actor), me);
}

inline double simulated::now() const {
  // The compute this activity did since its last transport call runs first: a rank's clock
  // includes its work (compute_model::measured).
  detail::enter_call(*group_->fabric, self(), "now");
  return simgrid::s4u::Engine::get_clock() - start_;
}

inline void simulated::compute(double seconds) {
  detail::enter_call(*group_->fabric, self(), "compute");
  if (!(seconds >= 0) || !std::isfinite(seconds)) {
    detail::raise<usage_error>(
        detail::str("rank ", rank_, ": compute(", seconds, "): a simulated compute time must be finite and not negative"));
  }
  if (group_->fabric->options.compute != compute_model::none) detail::charge(self(), seconds);
}

}  // namespace switchyard::transport

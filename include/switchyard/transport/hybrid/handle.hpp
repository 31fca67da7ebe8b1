// One rank's handle on a hybrid world: a thread of one process, which talks to the threads of its
// own process over the in-process fabric and to those of other processes over MPI.
#pragma once

#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/transport/hybrid/group.hpp>
#include <switchyard/transport/hybrid/process.hpp>
#include <switchyard/transport/hybrid/request.hpp>
#include <switchyard/transport/inproc/handle.hpp>
#include <switchyard/transport/mpi/errors.hpp>
#include <switchyard/transport/mpi/site.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings
#include <boost/mpi/datatype.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace switchyard::transport {

class hybrid_world;

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief One rank's handle on a hybrid world: the ranks of a node are threads of one process,
/// which exchange messages over the in-process fabric (one copy, no MPI), and the nodes are the
/// processes of an MPI job.
///
/// A small value: copies refer to the same rank of the same group. Made by `hybrid_world::run`
/// (or `run_hybrid`), which calls a function on every thread of every process. Ranks are numbered
/// process by process: with C threads on every process, thread t of process p is rank p * C + t.
/// Processes may run different numbers of threads (1, 3 and 2: ranks 0, 1-3 and 4-5).
/// `topology()` reports each process as a node, of its threads (uneven nodes as they are), so
/// `algorithm::automatic` takes the hierarchical all-reduce once there are several processes and
/// one of them has several threads.
///
/// Each thread of a process receives from other processes on a communicator of its own (a
/// duplicate of the world's made for its thread slot when the world starts): thread s of every
/// process receives on duplicate s, a sender uses the duplicate of the receiver's slot, and the
/// MPI tag carries the group, the sender's slot and the caller's tag (0 to 32767). Receives of two
/// threads never take each other's messages, and no thread relays another's. It needs MPI
/// initialized with `MPI_THREAD_MULTIPLE`. A receive from any rank probes each other process's
/// senders and posts an in-process receive; it must name a tag when the group spans processes.
/// @code
/// boost::mpi::environment env(argc, argv, boost::mpi::threading::multiple);
/// switchyard::transport::run_hybrid(4, [](switchyard::transport::hybrid& t) {
///   std::vector<float> grad(1000, float(t.rank()));
///   switchyard::collective::allreduce(t, grad, switchyard::ops::sum{});
/// });
/// @endcode
class hybrid {
 public:
  using request = hybrid_request;

  [[nodiscard]] int rank() const noexcept { return group_->rank; }
  [[nodiscard]] int size() const noexcept { return group_->size(); }

  template <arithmetic T>
  void send(std::span<const T> data, int destination, int tag) {
    isend(data, destination, tag).wait();
  }
  template <arithmetic T>
  void recv(std::span<T> data, int source, int tag) {
    irecv(data, source, tag).wait();
  }
  template <arithmetic T>
  [[nodiscard]] hybrid_request isend(std::span<const T> data, int destination, int tag) {
    check_peer(destination, "send", false);
    check_tag(tag, "send", false);
    return post_send(data, destination, tag);
  }
  template <arithmetic T>
  [[nodiscard]] hybrid_request irecv(std::span<T> data, int source, int tag) {
    check_peer(source, "receive", true);
    check_tag(tag, "receive", true);
    return post_receive(data, source, tag, true);
  }
  /// Receives the next message with `tag` from any rank; it may hold fewer elements than `data`,
  /// never more.
  template <arithmetic T>
  message_status recv_any(std::span<T> data, int tag) {
    check_tag(tag, "receive", true);
    hybrid_request r = post_receive(data, any_source, tag, false);
    r.wait();
    return r.status();
  }

  void barrier();
  /// Collective over the group: ranks that pass the same `color` (>= 0) form a new group, ranked
  /// by (`key`, old rank). The members of a new group that share a process keep talking over the
  /// in-process fabric.
  [[nodiscard]] hybrid split(int color, int key);

  /// This rank's node, which is its process: the threads of one process share a node.
  [[nodiscard]] node_topology topology() const noexcept { return group_->topology; }
  /// What the collectives keep between calls on this group (see transport/topology.hpp).
  [[nodiscard]] transport::group_cache& group_cache() noexcept { return group_->cache; }
  /// This rank's collective checks on this group, on when `hybrid_options::check_collectives` is.
  [[nodiscard]] collective_check_state& collective_checks() noexcept { return group_->checks; }
  /// The ranks of this group on this rank's process, as an in-process group.
  [[nodiscard]] inproc& local() noexcept { return group_->local; }

 private:
  friend class hybrid_world;
  explicit hybrid(std::shared_ptr<detail::hybrid_group> group) : group_(std::move(group)) {}

  void check_peer(int peer, const char* what, bool allow_any) const;
  void check_tag(int tag, const char* what, bool allow_any) const;
  template <arithmetic T>
  hybrid_request post_send(std::span<const T> data, int destination, int tag);
  template <arithmetic T>
  hybrid_request post_receive(std::span<T> data, int source, int tag, bool exact);

  std::shared_ptr<detail::hybrid_group> group_;
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

inline void hybrid::check_peer(int peer, const char* what, bool allow_any) const {
  if ((peer < 0 || peer >= size()) && !(allow_any && peer == any_source)) {
    detail::raise<usage_error>(
        detail::str("rank ", rank(), ": ", what, " names rank ", peer, " but the group has ranks 0 to ", size() - 1));
  }
}

inline void hybrid::check_tag(int tag, const char* what, bool allow_any) const {
  if ((tag < 0 || tag >= detail::hybrid_user_tags) && !(allow_any && tag == any_tag)) {
    detail::raise<usage_error>(detail::str("rank ", rank(), ": ", what, " with tag ", tag,
                                           ": tags of transport::hybrid run from 0 to ",
                                           detail::hybrid_user_tags - 1));
  }
}

template <arithmetic T>
hybrid_request hybrid::post_send(std::span<const T> data, int destination, int tag) {
  detail::hybrid_group& g = *group_;
  const detail::hybrid_member& to = g.members[static_cast<std::size_t>(destination)];
  hybrid_request r;
  r.group_ = group_;
  r.site_ = {"send", destination, tag, data.size(), g.size()};
  if (to.local >= 0) {
    r.local_ = g.local.isend(data, to.local, tag);
    r.kind_ = hybrid_request::kind::local;
    return r;
  }
  detail::mpi_check(MPI_Isend(data.data(), detail::mpi_count(data.size(), g.rank), boost::mpi::get_mpi_datatype<T>(),
                              to.process, g.process->layout.encode(g.context, g.me().slot, tag), g.comm_of(to.slot),
                              &r.remote_),
                    g.rank, "MPI_Isend", r.site_);
  r.kind_ = hybrid_request::kind::remote;
  return r;
}

template <arithmetic T>
hybrid_request hybrid::post_receive(std::span<T> data, int source, int tag, bool exact) {
  detail::hybrid_group& g = *group_;
  hybrid_request r;
  r.group_ = group_;
  r.site_ = {"receive", source, tag, data.size(), g.size()};
  r.receive_ = true;
  r.exact_ = exact;
  r.element_ = boost::mpi::get_mpi_datatype<T>();
  const bool from_any = source == any_source;
  const bool remote = from_any ? !g.remote_slots.empty() : g.members[static_cast<std::size_t>(source)].local < 0;
  if (remote && tag == any_tag) {
    detail::raise<usage_error>(detail::str("rank ", g.rank, ": a receive from ",
                                           from_any ? std::string("any rank") : detail::str("rank ", source),
                                           " with any tag: transport::hybrid needs a tag for messages from another "
                                           "process"));
  }
  if (from_any) {
    r.local_ = exact ? g.local.irecv(data, any_source, tag) : g.local.irecv_any(data, tag);
    r.buffer_ = data.data();
    r.kind_ = remote ? hybrid_request::kind::any : hybrid_request::kind::local;
    return r;
  }
  const detail::hybrid_member& from = g.members[static_cast<std::size_t>(source)];
  if (!remote) {
    r.local_ = g.local.irecv(data, from.local, tag);
    r.kind_ = hybrid_request::kind::local;
    return r;
  }
  detail::mpi_check(MPI_Irecv(data.data(), detail::mpi_count(data.size(), g.rank), r.element_, from.process,
                              g.process->layout.encode(g.context, from.slot, tag), g.comm_of(g.me().slot),
                              &r.remote_),
                    g.rank, "MPI_Irecv", r.site_);
  r.kind_ = hybrid_request::kind::remote;
  return r;
}

inline void hybrid::barrier() {
  // Dissemination: in round k every rank signals rank + 2^k and hears from rank - 2^k.
  const int n = size();
  const std::span<const std::int64_t> nothing;
  const std::span<std::int64_t> none;
  for (int distance = 1; distance < n; distance *= 2) {
    hybrid_request signal = post_send(nothing, (rank() + distance) % n, detail::hybrid_barrier_tag);
    post_receive(none, (rank() - distance + n) % n, detail::hybrid_barrier_tag, true).wait();
    signal.wait();
  }
}

inline hybrid hybrid::split(int color, int key) {
  if (color < 0) detail::raise<usage_error>(detail::str("rank ", rank(), ": split color must be >= 0, got ", color));
  detail::hybrid_group& g = *group_;
  detail::hybrid_process& process = *g.process;
  // Every rank learns every rank's color, key, place and next free context, through rank 0.
  constexpr std::size_t fields = 5;
  const auto n = static_cast<std::size_t>(size());
  const int slot = g.me().slot;
  std::vector<std::int64_t> all(n * fields);
  const std::int64_t mine[fields] = {color, key, g.me().process, slot,
                                     process.next_context[static_cast<std::size_t>(slot)]};
  if (rank() == 0) {
    std::copy(std::begin(mine), std::end(mine), all.begin());
    for (std::size_t r = 1; r < n; ++r) {
      post_receive(std::span<std::int64_t>(all).subspan(r * fields, fields), static_cast<int>(r),
                   detail::hybrid_split_tag, true)
          .wait();
    }
    std::vector<hybrid_request> sends;
    for (std::size_t r = 1; r < n; ++r) {
      sends.push_back(post_send(std::span<const std::int64_t>(all), static_cast<int>(r), detail::hybrid_split_tag));
    }
    for (hybrid_request& s : sends) s.wait();
  } else {
    post_send(std::span<const std::int64_t>(mine), 0, detail::hybrid_split_tag).wait();
    post_receive(std::span<std::int64_t>(all), 0, detail::hybrid_split_tag, true).wait();
  }
  const auto field = [&all](std::size_t r, std::size_t f) { return all[r * fields + f]; };

  // One context for all the new groups: they are disjoint, so no thread receives for two of them,
  // and it exceeds every context a member's thread has given a group before.
  std::int64_t context = 0;
  for (std::size_t r = 0; r < n; ++r) context = std::max(context, field(r, 4));
  if (context >= process.layout.contexts()) {
    detail::raise<usage_error>(detail::str("rank ", rank(), ": transport::hybrid has given out all its ",
                                           process.layout.contexts(),
                                           " group contexts (MPI's tag space): split fewer groups"));
  }
  process.next_context[static_cast<std::size_t>(slot)] = static_cast<int>(context) + 1;

  std::vector<int> ranks;
  for (std::size_t r = 0; r < n; ++r) {
    if (field(r, 0) == color) ranks.push_back(static_cast<int>(r));
  }
  std::stable_sort(ranks.begin(), ranks.end(), [&field](int a, int b) {
    return field(static_cast<std::size_t>(a), 1) < field(static_cast<std::size_t>(b), 1);
  });
  std::vector<detail::hybrid_member> members;
  int locals = 0;
  int new_rank = 0;
  for (const int r : ranks) {
    const auto at = static_cast<std::size_t>(r);
    const int on = static_cast<int>(field(at, 2));
    if (r == rank()) new_rank = static_cast<int>(members.size());
    members.push_back({on, static_cast<int>(field(at, 3)), on == g.me().process ? locals++ : -1});
  }
  // The members on this process, ranked by (key, old rank) as above.
  inproc local = g.local.split(color, key);
  if (local.size() != locals || local.rank() != members[static_cast<std::size_t>(new_rank)].local) {
    detail::raise<transport_error>(detail::str("rank ", rank(), ": split made an in-process group of ", local.size(),
                                               " (rank ", local.rank(), ") for ", locals, " members on this process"));
  }
  return hybrid(std::make_shared<detail::hybrid_group>(g.process, std::move(local), std::move(members), new_rank,
                                                       static_cast<int>(context), g.checks.enabled));
}

}  // namespace switchyard::transport

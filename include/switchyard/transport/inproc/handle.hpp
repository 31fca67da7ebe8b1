// One rank's handle on an in-process world: a group and a rank in it. Point-to-point messages,
// barrier and split; the native collectives are in collectives.hpp.
#pragma once

#include <switchyard/core/buffer.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/transport/inproc/collectives.hpp>
#include <switchyard/transport/inproc/group.hpp>
#include <switchyard/transport/inproc/mailbox.hpp>
#include <switchyard/transport/inproc/request.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace switchyard::transport {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief One rank's handle on an in-process world (or a group split from it).
///
/// A small value: copies refer to the same rank of the same group. Made by `inproc_world::run`,
/// which calls a function on every rank; using a handle after `run` returned throws
/// `usage_error`.
/// @code
/// switchyard::transport::run_inproc(4, [](switchyard::transport::inproc& t) {
///   std::vector<float> grad(1000, float(t.rank()));
///   switchyard::collective::allreduce(t, grad, switchyard::ops::sum{});
/// });
/// @endcode
class inproc {
 public:
  using request = inproc_request;

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
  [[nodiscard]] inproc_request isend(std::span<const T> data, int destination, int tag);
  template <arithmetic T>
  [[nodiscard]] inproc_request irecv(std::span<T> data, int source, int tag);
  /// Receives the next message with `tag` (or any tag, with `any_tag`) from any rank; it may hold
  /// fewer elements than `data`, never more.
  template <arithmetic T>
  message_status recv_any(std::span<T> data, int tag);
  /// The non-blocking `recv_any`: a receive from any rank of a message that may hold fewer
  /// elements than `data`; its request's `status()` says how many it got.
  template <arithmetic T>
  [[nodiscard]] inproc_request irecv_any(std::span<T> data, int tag);

  void barrier();
  /// Collective over the group: ranks that pass the same `color` (>= 0) form a new group, ranked
  /// by (`key`, old rank).
  [[nodiscard]] inproc split(int color, int key);

  // Native collectives: every rank reads its peers' buffers directly (see collective/native.hpp and
  // transport/inproc/collectives.hpp).
  template <arithmetic T, class Op>
  void native_allreduce(std::span<T> data, Op op);
  template <arithmetic T>
  void native_broadcast(std::span<T> data, int root);
  template <arithmetic T>
  void native_allgather(std::span<const T> mine, std::span<T> all);
  template <arithmetic T, class Op>
  std::span<T> native_reduce_scatter(std::span<T> data, Op op);

  /// This rank's collective checks on this group, on when `inproc_options::check_collectives` is.
  [[nodiscard]] collective_check_state& collective_checks() noexcept {
    return group_->checks[static_cast<std::size_t>(rank_)];
  }

  /// This rank's virtual node (`inproc_options::node_sizes`; one node for the whole world by
  /// default). A group made by `split` keeps its ranks' nodes: two of its ranks share a node when
  /// they did in the world.
  [[nodiscard]] node_topology topology() const noexcept { return group_->topology[static_cast<std::size_t>(rank_)]; }

  /// What the collectives keep between calls on this group (see transport/topology.hpp).
  [[nodiscard]] transport::group_cache& group_cache() noexcept {
    return group_->caches[static_cast<std::size_t>(rank_)];
  }

 private:
  friend class inproc_world;
  inproc(std::shared_ptr<detail::inproc_group> group, int rank) : group_(std::move(group)), rank_(rank) {}

  std::shared_ptr<detail::inproc_group> group_;
  int rank_;
};

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <arithmetic T>
inproc_request inproc::isend(std::span<const T> data, int destination, int tag) {
  detail::check_peer(*group_, rank_, destination, "send", false);
  return inproc_request(group_, rank_, inproc_request::kind::send, nullptr,
                        reinterpret_cast<const std::byte*>(data.data()), data.size_bytes(), sizeof(T),
                        &detail::type_identity_tag<T>, destination, tag, true);
}

template <arithmetic T>
inproc_request inproc::irecv(std::span<T> data, int source, int tag) {
  detail::check_peer(*group_, rank_, source, "receive", true);
  return inproc_request(group_, rank_, inproc_request::kind::recv, reinterpret_cast<std::byte*>(data.data()),
                        nullptr, data.size_bytes(), sizeof(T), &detail::type_identity_tag<T>, source, tag,
                        true);
}

template <arithmetic T>
message_status inproc::recv_any(std::span<T> data, int tag) {
  inproc_request r = irecv_any(data, tag);
  r.wait();
  return r.status();
}

template <arithmetic T>
inproc_request inproc::irecv_any(std::span<T> data, int tag) {
  detail::check_usable(*group_, rank_, "receive from any rank");
  return inproc_request(group_, rank_, inproc_request::kind::recv, reinterpret_cast<std::byte*>(data.data()), nullptr,
                        data.size_bytes(), sizeof(T), &detail::type_identity_tag<T>, any_source, tag, false);
}

inline void inproc::barrier() { detail::barrier(*group_, rank_); }

inline inproc inproc::split(int color, int key) {
  detail::check_usable(*group_, rank_, "split");
  if (color < 0) {
    detail::raise<usage_error>(detail::str("rank ", rank_, ": split color must be >= 0, got ", color));
  }
  detail::inproc_group& g = *group_;
  g.splits[static_cast<std::size_t>(rank_)] = {color, key};
  barrier();
  // The lowest rank of each color builds that color's group; everyone then picks up their own.
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
    auto child = std::make_shared<detail::inproc_group>(g.fabric, std::move(world));
    for (std::size_t i = 0; i < members.size(); ++i) {
      g.split_results[static_cast<std::size_t>(members[i])] = {child, static_cast<int>(i)};
    }
  }
  barrier();
  auto [child, child_rank] = std::move(g.split_results[static_cast<std::size_t>(rank_)]);
  barrier();
  return inproc(std::move(child), child_rank);
}

template <arithmetic T, class Op>
void inproc::native_allreduce(std::span<T> data, Op op) {
  detail::native_allreduce(*group_, rank_, data, op);
}

template <arithmetic T>
void inproc::native_broadcast(std::span<T> data, int root) {
  detail::native_broadcast(*group_, rank_, data, root);
}

template <arithmetic T>
void inproc::native_allgather(std::span<const T> mine, std::span<T> all) {
  detail::native_allgather(*group_, rank_, mine, all);
}

template <arithmetic T, class Op>
std::span<T> inproc::native_reduce_scatter(std::span<T> data, Op op) {
  return detail::native_reduce_scatter(*group_, rank_, data, op);
}

}  // namespace switchyard::transport

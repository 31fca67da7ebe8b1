// The communicators of a two-level topology, split once from a transport: the group of this rank's
// node, and the cross-node groups of the slices this rank owns in the hierarchical all-reduce.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <any>
#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace switchyard::collective {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief The per-level groups of a transport's topology (`transport::topology_of`), made by
/// `split` once: the group of this rank's node, and for each slice this rank owns, the group of
/// that slice's owners, one rank per node.
///
/// A buffer is cut into `slices()` slices, as many as the largest node has ranks
/// (`switchyard::block_of(count, slices(), s)`). On a node of `m` ranks, slice `s` belongs to local
/// rank `s % m`: on the largest nodes every rank owns one slice, on a smaller node some own
/// several (nodes of 3, 1 and 2 ranks: 3 slices; the rank alone on its node owns all three, local
/// rank 0 of the 2-rank node owns slices 0 and 2). Slices are split in rounds of as many slices as
/// the smallest node has ranks, so that no rank owns two slices of one round: nodes of equal size
/// need one split for all slices.
///
/// Building one is collective over `t` (every rank, the same order of calls). The hierarchical
/// all-reduce keeps the one of each group in the transport's `group_cache`, so it splits once.
/// @tparam Transport a `transport::transport`.
/// @code
/// switchyard::collective::node_groups groups(t);
/// auto& node = groups.node();                 // this rank's node
/// for (std::size_t i = 0; i < groups.owned_slices().size(); ++i) {
///   auto& across = groups.across(i);          // the owners of slice owned_slices()[i], by node
/// }
/// @endcode
template <transport::transport Transport>
class node_groups {
 public:
  /// Splits `t` along its topology; throws `usage_error` when the transport's `topology()`
  /// disagrees with the groups `split` made from it.
  explicit node_groups(Transport& t);

  /// The topology of the group this was built from.
  [[nodiscard]] const transport::node_topology& topology() const noexcept { return topology_; }
  /// How many slices a buffer is cut into: the size of the largest node.
  [[nodiscard]] int slices() const noexcept { return topology_.largest_node; }
  /// The ranks of this rank's node, ranked by their local rank.
  [[nodiscard]] Transport& node() noexcept { return node_; }
  /// The slices this rank owns, in increasing order.
  [[nodiscard]] std::span<const int> owned_slices() const noexcept { return owned_; }
  /// The owners of slice `owned_slices()[i]`, one per node, ranked by node.
  [[nodiscard]] Transport& across(std::size_t i) { return across_[i]; }

 private:
  transport::node_topology topology_;
  Transport node_;
  std::vector<int> owned_;
  std::vector<Transport> across_;
};

/// @brief Calls `f(node_groups<Transport>&)` with the groups of `t`: those kept in `t.group_cache()`
/// (built on the first call), or, for a transport without that hook, groups built for this call.
template <class Transport, class F>
decltype(auto) with_node_groups(Transport& t, F&& f);

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <transport::transport Transport>
node_groups<Transport>::node_groups(Transport& t)
    : topology_(transport::topology_of(t)), node_(t.split(topology_.node, t.rank())) {
  using switchyard::detail::raise;
  using switchyard::detail::str;
  if (node_.rank() != topology_.local_rank || node_.size() != topology_.local_size) {
    raise<usage_error>(str("rank ", t.rank(), ": the transport's topology() puts it at local rank ",
                           topology_.local_rank, " of ", topology_.local_size, " on node ", topology_.node,
                           ", but splitting by node gave rank ", node_.rank(), " of ", node_.size()));
  }
  const int slices = topology_.largest_node;
  const int round = topology_.smallest_node;
  for (int first = 0; first < slices; first += round) {
    // The slice of [first, first + round) this rank owns, if any: at most one, as round <= local_size.
    const int m = topology_.local_size;
    const int mine = first + ((topology_.local_rank - first) % m + m) % m;
    const bool owns = mine < first + round && mine < slices;
    Transport group = t.split(owns ? mine : slices, topology_.node);
    if (owns) {
      owned_.push_back(mine);
      across_.push_back(std::move(group));
    }
  }
}

template <class Transport, class F>
decltype(auto) with_node_groups(Transport& t, F&& f) {
  if constexpr (transport::has_group_cache<Transport>) {
    std::any& slot = t.group_cache().node_groups;
    if (auto* kept = std::any_cast<node_groups<Transport>>(&slot)) return std::forward<F>(f)(*kept);
    // Built aside and kept only once complete: a split that fails leaves the slot empty.
    node_groups<Transport> built(t);
    return std::forward<F>(f)(slot.template emplace<node_groups<Transport>>(std::move(built)));
  } else {
    node_groups<Transport> built(t);
    return std::forward<F>(f)(built);
  }
}

}  // namespace switchyard::collective

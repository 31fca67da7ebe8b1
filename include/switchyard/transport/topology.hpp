// Which ranks of a group share a node: the optional topology hook of a transport, its default, and
// the per-group storage where the collectives keep the groups they split along it.
#pragma once

#include <algorithm>
#include <any>
#include <concepts>
#include <cstddef>
#include <vector>

namespace switchyard::transport {

/// @brief Where one rank of a group sits: its node, its place on the node, and the shape of the
/// group's nodes. The same `nodes`, `largest_node` and `smallest_node` on every rank of a group.
///
/// Nodes are numbered 0 to `nodes - 1` in the order of their lowest rank, and the ranks of a node
/// have local ranks 0 to `local_size - 1` in the order of their ranks in the group.
/// @code
/// // 6 ranks on nodes of 3, 1 and 2 ranks: rank 4 is
/// node_topology{.node = 2, .local_rank = 0, .local_size = 2, .nodes = 3, .largest_node = 3, .smallest_node = 1};
/// @endcode
struct node_topology {
  int node = 0;
  int local_rank = 0;
  int local_size = 1;
  int nodes = 1;
  int largest_node = 1;   // the most ranks any node of the group has
  int smallest_node = 1;  // the fewest ranks any node of the group has

  /// Whether the group has levels to exploit: several nodes, and more than one rank on some node.
  [[nodiscard]] constexpr bool hierarchical() const noexcept { return nodes > 1 && largest_node > 1; }

  friend constexpr bool operator==(const node_topology&, const node_topology&) = default;
};

/// @brief The optional topology hook: `node_topology ct.topology()`, computed by the transport
/// without communication (`algorithm::automatic` asks it before every large all-reduce).
/// `inproc` has it (virtual nodes, `inproc_options::node_sizes`), `mpi` has it (the ranks that share
/// memory), and `faulty<T>` forwards it.
template <class T>
concept has_node_topology = requires(const T& ct) {
  { ct.topology() } -> std::convertible_to<node_topology>;
};

/// @brief The topology of `t`'s group: the transport's answer, or, for a transport without the hook,
/// every rank on a node of its own.
///
/// A transport that says nothing about locality gives no ground to assume that two of its ranks
/// share memory, and with one rank per node `algorithm::automatic` chooses as it did before
/// topologies existed: the flat algorithms.
template <class Transport>
[[nodiscard]] constexpr node_topology topology_of(const Transport& t) {
  if constexpr (has_node_topology<Transport>) {
    return t.topology();
  } else {
    return {t.rank(), 0, 1, t.size(), 1, 1};
  }
}

/// @brief What the collectives keep between calls on one rank of one group: the groups that
/// `algorithm::hierarchical` split along the topology (`collective::node_groups`), built on the
/// first call.
struct group_cache {
  std::any node_groups;
};

/// @brief The optional hook that keeps `group_cache& t.group_cache()`, the same for every copy of a
/// handle and a fresh one for each group made by `split`. Without it, each hierarchical all-reduce
/// splits its groups again. `inproc` and `mpi` have it, and `faulty<T>` forwards it.
template <class T>
concept has_group_cache = requires(T& t) {
  { t.group_cache() } -> std::same_as<group_cache&>;
};

namespace detail {

// The topology of each rank of a group whose ranks are the world ranks `members`, from the node
// of each world rank (a virtual node in process, a simulated host): nodes numbered by their lowest rank in the group, local ranks in group
// order.
inline std::vector<node_topology> topologies(const std::vector<int>& members, const std::vector<int>& node_of) {
  const std::size_t n = members.size();
  std::vector<int> node(n);   // group rank -> node index in the group
  std::vector<int> local(n);  // group rank -> local rank
  std::vector<int> sizes;     // node index -> ranks on it
  std::vector<int> ids;       // node index -> node of the world
  for (std::size_t r = 0; r < n; ++r) {
    const int id = node_of[static_cast<std::size_t>(members[r])];
    const auto found = std::find(ids.begin(), ids.end(), id);
    const auto index = static_cast<std::size_t>(found - ids.begin());
    if (found == ids.end()) {
      ids.push_back(id);
      sizes.push_back(0);
    }
    node[r] = static_cast<int>(index);
    local[r] = sizes[index]++;
  }
  const int largest = sizes.empty() ? 1 : *std::max_element(sizes.begin(), sizes.end());
  const int smallest = sizes.empty() ? 1 : *std::min_element(sizes.begin(), sizes.end());
  std::vector<node_topology> out(n);
  for (std::size_t r = 0; r < n; ++r) {
    out[r] = {node[r], local[r], sizes[static_cast<std::size_t>(node[r])], static_cast<int>(sizes.size()), largest,
              smallest};
  }
  return out;
}

}  // namespace detail

}  // namespace switchyard::transport

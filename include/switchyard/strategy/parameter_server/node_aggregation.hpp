// A node-aware parameter server's side inside a node (BytePS's "sum inside the machine before one
// push"): how the ranks split into nodes, and the messages between a node's workers and its local
// rank 0, which sums their gradients, pushes and pulls for all of them and sends them the result.
#pragma once

#include <switchyard/collective/allgather.hpp>
#include <switchyard/core/error.hpp>
#include <switchyard/strategy/parameter_server/protocol.hpp>
#include <switchyard/transport/concurrency.hpp>
#include <switchyard/transport/topology.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

namespace switchyard::strategy {

/// @brief Whose gradients a parameter server's push carries.
enum class aggregation {
  /// `node` when the transport's topology has several nodes and more than one rank on some node
  /// (`transport::topology_of(t).hierarchical()`) and the parameter server supports it there (no
  /// backup workers); else `rank` (the default).
  automatic,
  /// The workers of a node sum their gradients at the node's local rank 0, which alone pushes and
  /// pulls, and sends the node's workers the fresh parameters: one push and one pull per node.
  /// Co-located, the node's local rank 0 serves one shard per node. Pipelined, local rank 0 sends
  /// them the parameters its last exchange pulled while this step's push is on the wire.
  node,
  /// Every worker pushes its own gradient and pulls its own copy; co-located, every rank serves.
  rank,
};

}  // namespace switchyard::strategy

namespace switchyard::strategy::detail {

/// @brief How a node-aware parameter server's ranks group: the workers of each node, and the group
/// of the ranks that talk to the servers (each node's local rank 0, then the dedicated servers).
template <class Transport>
struct ps_node_layout {
  Transport node;     ///< the workers of this rank's node, ranked as in the whole group (a server: itself)
  Transport members;  ///< the nodes' local ranks 0 and the servers, in rank order; others: unused
  bool member = false;
  /// The rank in the whole group of each of the node's workers, by local rank.
  std::vector<std::size_t> node_ranks;
  /// On members: for each node, in the order of its local rank 0, its workers and the rank of its
  /// local rank 0 in the whole group (its first batch of a part).
  std::vector<std::size_t> sizes;
  std::vector<std::size_t> first_ranks;
};

/// @brief Collective over `t`: splits the ranks along `transport::topology_of(t)`, the workers
/// (ranks 0 to `workers - 1`) by node and each other rank (a dedicated server) alone.
/// @throws usage_error when the transport's topology disagrees with the groups its `split` made.
template <class Transport>
[[nodiscard]] ps_node_layout<Transport> split_by_node(Transport& t, std::size_t workers) {
  const transport::node_topology where = transport::topology_of(t);
  const auto rank = static_cast<std::size_t>(t.rank());
  const bool works = rank < workers;
  const int color = works ? where.node : where.nodes + static_cast<int>(rank - workers);
  Transport node = t.split(color, t.rank());
  if (workers == static_cast<std::size_t>(t.size()) &&
      (node.rank() != where.local_rank || node.size() != where.local_size)) {
    switchyard::detail::raise<usage_error>(switchyard::detail::str(
        "parameter_server on rank ", t.rank(), ": the transport's topology() puts it at local rank ", where.local_rank,
        " of ", where.local_size, " on node ", where.node, ", but splitting by node gave rank ", node.rank(), " of ",
        node.size()));
  }
  const std::array<std::int64_t, 1> own{t.rank()};
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(node.size()));
  collective::allgather(node, own, ranks);
  const bool member = !works || node.rank() == 0;
  Transport members = t.split(member ? 0 : 1, t.rank());
  ps_node_layout<Transport> layout{std::move(node), std::move(members), member, {}, {}, {}};
  layout.node_ranks.assign(ranks.begin(), ranks.end());
  if (!member) return layout;
  const std::array<std::int64_t, 2> mine{works ? layout.node.size() : 0, t.rank()};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(layout.members.size()));
  collective::allgather(layout.members, mine, all);
  for (std::size_t m = 0; m < all.size(); m += 2) {
    if (all[m] == 0) continue;  // a server
    layout.sizes.push_back(static_cast<std::size_t>(all[m]));
    layout.first_ranks.push_back(static_cast<std::size_t>(all[m + 1]));
  }
  return layout;
}

/// @brief The exchange inside one node of a node-aware parameter server.
///
/// Each step, every worker but the node's local rank 0 sends it a header (a gradient follows, or
/// the worker is done with the part; its compute time) and its gradient. Local rank 0 adds the
/// gradients to its own in local-rank order (`gather`), pushes the sum and pulls for the node, and
/// sends each live worker the fresh parameters and, when the servers hand out the batches, the
/// next batch of the node's block (`scatter`). A worker without a batch says it is done at the end
/// of the part (`done`), and local rank 0 waits for each such word before the part ends
/// (`collect_done`).
/// @code
/// exchange.setup<float>(arena, node.size(), node.rank() == 0);
/// // local rank 0:                                  // the others:
/// double slowest = exchange.gather(node, grads);    // exchange.exchange(node, grads, params, report, handed);
/// /* push exchange.sum<float>(), pull params */
/// exchange.scatter(node, params, first, batches, handed);
/// @endcode
class ps_node_exchange {
 public:
  /// Sizes the buffers of one rank of a node of `local_size` workers; local rank 0 (`leader`) sums.
  template <class T>
  void setup(std::size_t arena, int local_size, bool leader) {
    buffers<T> own;
    if (leader) {
      own.sum.resize(arena);
      own.incoming.resize(arena);
    }
    buffers_ = std::move(own);
    done_.assign(static_cast<std::size_t>(local_size), false);
    step_end_.reset();
  }

  /// A new part of an epoch: every worker of the node is live, and no step ended yet.
  void begin_part() {
    std::fill(done_.begin(), done_.end(), false);
    step_end_.reset();
  }

  /// Local rank 0: its `own` gradient plus every live worker's, in local-rank order, into `sum()`;
  /// returns the slowest compute time the workers reported (negative: none reported).
  template <class Transport, class T>
  double gather(Transport& node, std::span<const T> own) {
    buffers<T>& b = buffers_of<T>();
    std::copy(own.begin(), own.end(), b.sum.begin());
    double slowest = -1.0;
    for (int r = 1; r < node.size(); ++r) {
      if (done_[static_cast<std::size_t>(r)]) continue;
      std::array<double, 2> header{};
      node.recv(std::span<double>(header), r, ps_tags::node_header);
      if (header[0] == 0.0) {
        done_[static_cast<std::size_t>(r)] = true;
        continue;
      }
      slowest = std::max(slowest, header[1]);
      node.recv(std::span<T>(b.incoming), r, ps_tags::node_gradient);
      for (std::size_t i = 0; i < b.sum.size(); ++i) b.sum[i] += b.incoming[i];
    }
    return slowest;
  }

  /// Local rank 0's sum of the node's gradients, after `gather`.
  template <class T>
  [[nodiscard]] std::span<const T> sum() {
    return std::span<const T>(buffers_of<T>().sum);
  }

  /// Local rank 0: sends every live worker the node's fresh `parameters` and, when `handed_out`,
  /// its next batch: the node's block starts at `first` (local rank 0's own), the k-th live worker
  /// after it gets `first + k` while the block of at most `node.size()` batches below `batches`
  /// lasts, the others none.
  template <class Transport, class T>
  void scatter(Transport& node, std::span<const T> parameters, std::optional<std::size_t> first,
               std::size_t batches, bool handed_out) {
    scatter(node, parameters, handed_out, [&](int, std::size_t k) -> std::optional<std::size_t> {
      if (first && k < static_cast<std::size_t>(node.size()) && *first + k < batches) return *first + k;
      return std::nullopt;
    });
  }

  /// Local rank 0 of a pipelined node, at the first step of a part: sends every live worker the
  /// node's `parameters` and, when `handed_out`, the second batch it starts the part with, its
  /// rank in the whole group (`node_ranks`) plus the `workers` of the whole group, if below `batches`.
  template <class Transport, class T>
  void scatter_second(Transport& node, std::span<const T> parameters, std::span<const std::size_t> node_ranks,
                      std::size_t workers, std::size_t batches, bool handed_out) {
    scatter(node, parameters, handed_out, [&](int r, std::size_t) -> std::optional<std::size_t> {
      const std::size_t second = node_ranks[static_cast<std::size_t>(r)] + workers;
      if (second < batches) return second;
      return std::nullopt;
    });
  }

  /// Local rank 0, at the end of a part: waits for the "done" of every worker still live.
  template <class Transport>
  void collect_done(Transport& node) {
    for (int r = 1; r < node.size(); ++r) {
      if (done_[static_cast<std::size_t>(r)]) continue;
      std::array<double, 2> header{};
      node.recv(std::span<double>(header), r, ps_tags::node_header);
      if (header[0] != 0.0) {
        switchyard::detail::raise<transport_error>(switchyard::detail::str(
            "parameter_server: local rank ", r, " of a node sent a gradient after its node's local rank 0 finished "
            "the part"));
      }
      done_[static_cast<std::size_t>(r)] = true;
    }
  }

  /// A worker other than local rank 0: sends its `gradients` with its compute time since its last
  /// step (`started`), receives the node's fresh `parameters`, and returns its next batch when the
  /// servers hand them out.
  template <class Transport, class T>
  std::optional<std::size_t> exchange(Transport& node, std::span<const T> gradients, std::span<T> parameters,
                                      double started, bool handed_out) {
    const double compute = step_end_ ? started - *step_end_ : -1.0;
    const std::array<double, 2> header{1.0, compute};
    node.send(std::span<const double>(header), 0, ps_tags::node_header);
    node.send(gradients, 0, ps_tags::node_gradient);
    node.recv(parameters, 0, ps_tags::node_parameters);
    std::optional<std::size_t> next;
    if (handed_out) {
      std::int64_t batch = -1;
      node.recv(std::span<std::int64_t>(&batch, 1), 0, ps_tags::node_assign);
      if (batch >= 0) next = static_cast<std::size_t>(batch);
    }
    step_end_ = transport::seconds_now(node);
    return next;
  }

  /// A worker other than local rank 0, at the end of a part: tells local rank 0 it is done.
  template <class Transport>
  void done(Transport& node) {
    const std::array<double, 2> header{0.0, -1.0};
    node.send(std::span<const double>(header), 0, ps_tags::node_header);
  }

 private:
  // Sends every live worker `parameters` and, when `handed_out`, `assign(r, k)` for the k-th live
  // worker r after local rank 0 (none: -1).
  template <class Transport, class T, class Assign>
  void scatter(Transport& node, std::span<const T> parameters, bool handed_out, Assign assign) {
    std::vector<decltype(node.isend(std::span<const T>(), 0, 0))> sent;
    std::vector<decltype(node.isend(std::span<const std::int64_t>(), 0, 0))> handed;
    assigned_.assign(static_cast<std::size_t>(node.size()), -1);
    std::size_t k = 0;
    for (int r = 1; r < node.size(); ++r) {
      if (done_[static_cast<std::size_t>(r)]) continue;
      ++k;
      sent.push_back(node.isend(parameters, r, ps_tags::node_parameters));
      if (!handed_out) continue;
      std::int64_t& batch = assigned_[static_cast<std::size_t>(r)];
      if (const std::optional<std::size_t> b = assign(r, k)) batch = static_cast<std::int64_t>(*b);
      handed.push_back(node.isend(std::span<const std::int64_t>(&batch, 1), r, ps_tags::node_assign));
    }
    for (auto& r : sent) r.wait();
    for (auto& r : handed) r.wait();
  }

  template <class T>
  struct buffers {
    std::vector<T> sum;       // local rank 0: the node's gradient
    std::vector<T> incoming;  // local rank 0: one worker's gradient
  };
  template <class T>
  [[nodiscard]] buffers<T>& buffers_of() {
    return std::get<buffers<T>>(buffers_);
  }

  std::variant<buffers<float>, buffers<double>> buffers_;
  std::vector<bool> done_;                 // local rank 0: the workers done with the part
  std::vector<std::int64_t> assigned_;     // local rank 0: the batch sent to each, alive until sent
  std::optional<double> step_end_;  // the others: their last step's end, on the transport's clock
};

}  // namespace switchyard::strategy::detail

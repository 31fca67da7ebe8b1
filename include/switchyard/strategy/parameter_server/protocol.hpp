// What both sides of a parameter server's exchange agree on: the messages' tags, which ranks work
// and which rank serves which shard, and how pushes and pulls travel.
#pragma once

#include <switchyard/core/compression.hpp>
#include <switchyard/core/partition.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace switchyard::strategy::detail {

/// @brief The tags of a parameter server's messages, below the collectives' reserved range.
struct ps_tags {
  /// Pushes, and a worker's empty "done" message, on the same tag so it cannot overtake its last push.
  static constexpr int push = 31000;
  static constexpr int pull = 31001;
  static constexpr int assign = 31002;    ///< server 0's hand-out: a batch and a round
  static constexpr int compute = 31003;   ///< a worker's compute time per step, to server 0
  static constexpr int residual = 31004;  ///< a worker's error-feedback residual, to rank 0
  static constexpr int round = 31005;     ///< backup workers: the round of a worker's push
  /// Node aggregation, inside a node: a worker's header (a gradient follows, or it is done; its
  /// compute time), its gradient, the node's fresh parameters and the worker's next batch.
  static constexpr int node_header = 31006;
  static constexpr int node_gradient = 31007;
  static constexpr int node_parameters = 31008;
  static constexpr int node_assign = 31009;
};

/// @brief A parameter server's plan, the same on every rank: which ranks work, which rank serves
/// which shard, and how the messages travel. The strategy sets the wire settings when it is built
/// (`sampling` when a stop rule is installed) and the ranks' roles in `setup`.
/// @code
/// ps_plan plan{.servers = 2, .workers = 3, .first_server = 3, .arena = 10};
/// plan.shard(1);         // {5, 5}: server 1 owns parameters 5 to 9
/// plan.server_rank(1);   // 4
/// plan.served_shard(3);  // 0
/// @endcode
struct ps_plan {
  std::size_t servers = 0;
  std::size_t workers = 0;
  std::size_t first_server = 0;  ///< the rank of server 0: the first after the workers, or 0 co-located
  std::size_t arena = 0;         ///< the parameters, every shard together
  compression::format compression = compression::format::none;
  bool pipelined = false;          ///< workers overlap their exchange with their next batch's compute
  bool hands_out_batches = false;  ///< server 0 hands out the batches with its replies
  bool backups = false;            ///< backup workers: each push goes with its round
  bool sampling = false;           ///< the stop rule samples: workers report their compute times
  /// Node aggregation: for each worker (a node's local rank 0), the workers whose gradients its push
  /// sums (its node's), and the first batch of a part it trains (its rank in the whole group).
  /// Empty: every push is one worker's, and worker w starts with batch w.
  std::vector<std::size_t> weights{};
  std::vector<std::size_t> first_batches{};

  [[nodiscard]] bool compressed() const noexcept { return compression != compression::format::none; }
  /// The workers whose gradients worker `w`'s push sums.
  [[nodiscard]] std::size_t weight(std::size_t w) const noexcept { return weights.empty() ? 1 : weights[w]; }
  /// The first batch of a part worker `w` trains.
  [[nodiscard]] std::size_t first_batch(std::size_t w) const noexcept {
    return first_batches.empty() ? w : first_batches[w];
  }
  /// The parameters server `s` owns.
  [[nodiscard]] block shard(std::size_t s) const noexcept { return block_of(arena, servers, s); }
  [[nodiscard]] int server_rank(std::size_t s) const noexcept { return static_cast<int>(first_server + s); }
  /// The shard `rank` serves, if it serves one.
  [[nodiscard]] std::optional<std::size_t> served_shard(std::size_t rank) const noexcept {
    if (rank < first_server || rank - first_server >= servers) return std::nullopt;
    return rank - first_server;
  }
};

/// @brief Posts an empty message to `rank` with `tag` in the element type of pushes and pulls
/// (`Value`, or the codec's words when `compressed`): a worker's "done" on the push tag, or a
/// co-located server's interrupt or alert, whose receive fails on its size (or element type).
/// Returns the request, kept alive by the pointer.
template <class Value, class Transport>
[[nodiscard]] std::shared_ptr<void> post_empty(Transport& t, bool compressed, int rank, int tag) {
  const auto keep = [](auto request) { return std::make_shared<decltype(request)>(std::move(request)); };
  if (compressed) return keep(t.isend(std::span<const std::uint16_t>(), rank, tag));
  return keep(t.isend(std::span<const Value>(), rank, tag));
}

/// @brief Two posted messages kept alive by one pointer.
[[nodiscard]] inline std::shared_ptr<void> kept_together(std::shared_ptr<void> first, std::shared_ptr<void> second) {
  using pair = std::array<std::shared_ptr<void>, 2>;
  return std::make_shared<pair>(pair{std::move(first), std::move(second)});
}

/// @brief What a co-located server's control messages go through: a `faulty` transport's inner
/// handle (anything with `inner()`), so that a rank its plan has killed can still end its own thread.
template <class Transport>
[[nodiscard]] auto& control_handle(Transport& t) {
  if constexpr (requires { t.inner(); }) {
    return t.inner();
  } else {
    return t;
  }
}

}  // namespace switchyard::strategy::detail

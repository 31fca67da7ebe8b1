// The in-process launcher: runs a function on every rank of a new world, one thread per rank,
// and rethrows the first failure after releasing the other ranks.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/inproc/fabric.hpp>
#include <switchyard/transport/inproc/group.hpp>
#include <switchyard/transport/inproc/handle.hpp>
#include <switchyard/transport/inproc/options.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::transport {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief An in-process world of `ranks` ranks: `run(f)` calls `f(inproc&)` on every rank, each on
/// its own thread (rank 0 on the caller's), joins them, and rethrows the first exception any rank
/// raised; the other ranks are released from their waits with a `transport_error`.
/// Returns nothing if `f` returns nothing, else a `std::vector` of the results by rank.
class inproc_world {
 public:
  explicit inproc_world(int ranks, inproc_options options = {});

  template <class F>
  auto run(F&& f);

  [[nodiscard]] int size() const noexcept { return ranks_; }

 private:
  int ranks_;
  inproc_options options_;
};

/// @brief Shorthand for `inproc_world(ranks, options).run(f)`.
template <class F>
auto run_inproc(int ranks, F&& f, inproc_options options = {}) {
  return inproc_world(ranks, std::move(options)).run(std::forward<F>(f));
}

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

inline inproc_world::inproc_world(int ranks, inproc_options options) : ranks_(ranks), options_(std::move(options)) {
  if (ranks < 1) {
    detail::raise<usage_error>(detail::str("an in-process world needs at least 1 rank, got ", ranks));
  }
  const std::vector<int>& nodes = options_.node_sizes;
  if (!nodes.empty()) {
    std::string sizes;
    long long total = 0;
    for (const int size : nodes) {
      sizes += detail::str(sizes.empty() ? "" : ", ", size);
      total += size;
    }
    const bool positive = std::all_of(nodes.begin(), nodes.end(), [](int size) { return size > 0; });
    if (!positive || total != ranks) {
      detail::raise<usage_error>(detail::str("inproc_options::node_sizes {", sizes,
                                             "} must be positive and add up to the ", ranks, " ranks of the world",
                                             positive ? detail::str(", not ", total) : ""));
    }
  }
  if (options_.timeout <= std::chrono::milliseconds::zero()) {
    detail::raise<usage_error>(detail::str("inproc_options::timeout must be positive, got ", options_.timeout.count(),
                                           " ms (std::chrono::milliseconds::max() waits forever)"));
  }
}

template <class F>
auto inproc_world::run(F&& f) {
  using result = std::invoke_result_t<F&, inproc&>;
  auto fabric = std::make_shared<detail::inproc_fabric>(ranks_, options_);
  std::vector<int> members(static_cast<std::size_t>(ranks_));
  for (int r = 0; r < ranks_; ++r) members[static_cast<std::size_t>(r)] = r;
  auto world = std::make_shared<detail::inproc_group>(fabric, std::move(members));

  constexpr bool returns_value = !std::is_void_v<result>;
  using stored = std::conditional_t<returns_value, result, char>;
  std::vector<std::optional<stored>> results(static_cast<std::size_t>(ranks_));

  auto play = [&](int rank) {
    inproc handle(world, rank);
    try {
      if constexpr (returns_value) {
        results[static_cast<std::size_t>(rank)].emplace(std::invoke(f, handle));
      } else {
        std::invoke(f, handle);
      }
    } catch (const std::exception& e) {
      fabric->abort(rank, std::current_exception(), e.what());
    } catch (...) {
      fabric->abort(rank, std::current_exception(), "an exception not derived from std::exception");
    }
  };

  {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(ranks_ - 1));
    for (int r = 1; r < ranks_; ++r) threads.emplace_back(play, r);
    play(0);
  }
  fabric->ended.store(true, std::memory_order_release);
  if (fabric->first_failure) std::rethrow_exception(fabric->first_failure);
  if constexpr (returns_value) {
    std::vector<result> out;
    out.reserve(results.size());
    for (auto& r : results) out.push_back(std::move(*r));
    return out;
  }
}

}  // namespace switchyard::transport

// What a parameter-server rank measures: staleness, updates, bytes and time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace switchyard::strategy {

/// @brief What a parameter-server rank measured (each rank its own side: servers the updates and
/// staleness, workers the waiting).
struct ps_statistics {
  /// `staleness[s]`: gradients applied while their worker was `s` steps ahead of the slowest
  /// worker (the last bucket also counts everything beyond it).
  std::vector<std::uint64_t> staleness = std::vector<std::uint64_t>(33, 0);
  std::uint64_t updates = 0;         ///< optimizer steps a server applied
  std::uint64_t dropped = 0;         ///< late gradients a server dropped (backup workers)
  std::uint64_t pushes = 0;          ///< gradients a server received (with node aggregation, one per node)
  std::uint64_t bytes_pushed = 0;    ///< gradient bytes a worker sent
  std::uint64_t bytes_pulled = 0;    ///< parameter bytes a worker received
  double worker_wait_seconds = 0.0;  ///< a worker's time from its first push to its last pull
  double server_busy_seconds = 0.0;  ///< a server's time applying gradients
  double server_seconds = 0.0;       ///< a server's time serving (busy or waiting for pushes)

  /// The largest staleness recorded.
  [[nodiscard]] std::size_t max_staleness() const noexcept {
    for (std::size_t s = staleness.size(); s > 0; --s) {
      if (staleness[s - 1] != 0) return s - 1;
    }
    return 0;
  }
};

}  // namespace switchyard::strategy

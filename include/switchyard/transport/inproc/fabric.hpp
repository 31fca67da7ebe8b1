// What the rank threads of an in-process world share, whichever group they talk in: one alarm
// clock per thread, the options, the virtual node of each rank, and the fate of the run.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/inproc/options.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace switchyard::transport::detail {

using switchyard::detail::raise;
using switchyard::detail::str;

// One rank thread's alarm clock: every wait of that thread sleeps on it.
struct alignas(64) waker {
  std::mutex mutex;
  std::condition_variable cv;

  void notify() {
    { std::lock_guard lock(mutex); }
    cv.notify_all();
  }
};

// What a world and all groups split from it share: the threads' wakers, the options, and the
// fate of the run (aborted by a failing rank, ended when the launcher returned).
struct inproc_fabric {
  inproc_fabric(int ranks, inproc_options opts)
      : wakers(std::make_unique<waker[]>(static_cast<std::size_t>(ranks))),
        size(ranks),
        options(std::move(opts)),
        node_of(static_cast<std::size_t>(ranks), 0) {
    const std::vector<int>& sizes = options.node_sizes;
    if (options.round_robin_nodes && !sizes.empty()) {
      std::vector<int> room = sizes;
      std::size_t node = 0;
      for (int& of : node_of) {
        while (room[node] == 0) node = (node + 1) % room.size();
        of = static_cast<int>(node);
        --room[node];
        node = (node + 1) % room.size();
      }
      return;
    }
    std::size_t rank = 0;
    for (std::size_t node = 0; node < sizes.size(); ++node) {
      for (int i = 0; i < sizes[node] && rank < node_of.size(); ++i) node_of[rank++] = static_cast<int>(node);
    }
  }

  std::unique_ptr<waker[]> wakers;
  int size;
  inproc_options options;
  std::vector<int> node_of;  // world rank -> virtual node (inproc_options::node_sizes)
  std::atomic<bool> aborted{false};
  std::atomic<bool> ended{false};
  std::mutex failure_mutex;
  std::exception_ptr first_failure;
  std::string failure_summary;

  // Records the first failure and releases every rank that waits.
  void abort(int world_rank, std::exception_ptr failure, const std::string& what) {
    {
      std::lock_guard lock(failure_mutex);
      if (first_failure) return;
      first_failure = std::move(failure);
      failure_summary = detail::str("rank ", world_rank, " failed: ", what);
      aborted.store(true, std::memory_order_release);
    }
    for (int r = 0; r < size; ++r) wakers[static_cast<std::size_t>(r)].notify();
  }

  std::string summary() {
    std::lock_guard lock(failure_mutex);
    return failure_summary;
  }
};

}  // namespace switchyard::transport::detail

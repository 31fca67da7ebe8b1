// A group of in-process ranks that talk to each other (the world, or one result of split): their
// mailboxes, barrier and collective window, its ranks' virtual nodes, and how a rank of the group
// waits.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/inproc/fabric.hpp>
#include <switchyard/transport/inproc/mailbox.hpp>
#include <switchyard/transport/topology.hpp>
#include <switchyard/transport/transport.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace switchyard::transport::detail {

// What a rank shows its peers during a native collective.
struct alignas(64) window_slot {
  std::byte* data = nullptr;
  const std::byte* input = nullptr;
  std::size_t count = 0;
  const void* element_type = nullptr;
  int root = 0;
  const char* operation = "";  // "allreduce", "broadcast", ...
  std::uint64_t stamp = 0;     // the barrier it was published for (see arrive)
};

struct split_request {
  int color = 0;
  int key = 0;
};

// A group of ranks that talk to each other: the world, or one result of split().
struct inproc_group {
  inproc_group(std::shared_ptr<inproc_fabric> fab, std::vector<int> members)
      : fabric(std::move(fab)),
        world_ranks(std::move(members)),
        size(static_cast<int>(world_ranks.size())),
        mailboxes(std::make_unique<mailbox[]>(world_ranks.size())),
        arrivals(std::make_unique<std::atomic<std::uint64_t>[]>(world_ranks.size())),
        window(world_ranks.size()),
        splits(world_ranks.size()),
        split_results(world_ranks.size()),
        checks(world_ranks.size(), collective_check_state{fabric->options.check_collectives, 0}),
        topology(topologies(world_ranks, fabric->node_of)),
        caches(world_ranks.size()) {}

  std::shared_ptr<inproc_fabric> fabric;
  std::vector<int> world_ranks;  // group rank -> world rank (the thread that plays it)
  int size;
  std::unique_ptr<mailbox[]> mailboxes;

  std::mutex barrier_mutex;
  int barrier_count = 0;
  bool barrier_failed = false;  // whether a rank arrived at the open barrier with a failure
  std::atomic<std::uint64_t> barrier_generation{0};
  // Whether a rank arrived failed at the last barrier that ended: a rank reads it after that
  // barrier, and the next one cannot end before that rank arrives there.
  std::atomic<bool> barrier_outcome{false};
  std::unique_ptr<std::atomic<std::uint64_t>[]> arrivals;  // last generation each rank reached

  std::vector<window_slot> window;
  std::vector<split_request> splits;
  std::vector<std::pair<std::shared_ptr<inproc_group>, int>> split_results;
  std::vector<collective_check_state> checks;  // each rank's, touched by its thread only
  std::vector<node_topology> topology;         // each rank's
  std::vector<group_cache> caches;             // each rank's, touched by its thread only

  waker& waker_of(int rank) const { return fabric->wakers[static_cast<std::size_t>(world_ranks[static_cast<std::size_t>(rank)])]; }
};

// Blocks `rank` of `group` until `done()`; `describe()` names what it waits for in the errors
// raised when the world aborts or the timeout passes. With `give_up` false it raises neither and
// waits as long as it takes: only for what is sure to come.
template <class Done, class Describe>
void wait_until(const inproc_group& group, int rank, Done done, Describe describe, bool give_up = true) {
  inproc_fabric& fabric = *group.fabric;
  for (int i = 0; i < fabric.options.spin; ++i) {
    if (done()) return;
    std::this_thread::yield();
  }
  waker& w = group.waker_of(rank);
  std::unique_lock lock(w.mutex);
  if (!give_up) {
    w.cv.wait(lock, done);
    return;
  }
  const auto deadline = deadline_after(fabric.options.timeout);
  while (!done()) {
    if (fabric.aborted.load(std::memory_order_acquire)) {
      lock.unlock();
      raise<transport_error>(detail::str("rank ", rank, ": ", describe(), " abandoned because ", fabric.summary()));
    }
    if (w.cv.wait_until(lock, deadline) == std::cv_status::timeout && !done()) {
      lock.unlock();
      raise<timeout_error>(detail::str("rank ", rank, ": ", describe(), " did not complete within ",
                               fabric.options.timeout.count(), " ms (inproc_options::timeout)"));
    }
  }
}

// Refuses `what` once the launcher of the group's world has returned.
inline void check_usable(const inproc_group& group, int rank, const char* what) {
  if (group.fabric->ended.load(std::memory_order_acquire)) {
    detail::raise<usage_error>(detail::str("rank ", rank, ": ", what, " on an in-process transport whose world has ended"));
  }
}

// Refuses a peer outside the group (`any_source` only where `allow_any`).
inline void check_peer(const inproc_group& group, int rank, int peer, const char* what, bool allow_any) {
  check_usable(group, rank, what);
  if ((peer < 0 || peer >= group.size) && !(allow_any && peer == any_source)) {
    detail::raise<usage_error>(
        detail::str("rank ", rank, ": ", what, " names rank ", peer, " but the group has ranks 0 to ", group.size - 1));
  }
}

// Counts `rank` in at the open barrier of `g`, with `failed` if it arrives with a failure (see
// closing_barrier). A rank `publishing` a native collective's arguments stamps its window slot
// with the barrier, so that the others can tell its slot from one of an earlier call (a rank that
// called barrier() or split() there instead). Returns the generation the barrier ends in, and
// whether this arrival ended it.
struct arrival {
  std::uint64_t generation;
  bool last;
};
inline arrival arrive(inproc_group& g, int rank, bool failed, bool publishing = false) {
  std::lock_guard lock(g.barrier_mutex);
  const std::uint64_t generation = g.barrier_generation.load(std::memory_order_relaxed);
  g.arrivals[static_cast<std::size_t>(rank)].store(generation + 1, std::memory_order_relaxed);
  if (publishing) g.window[static_cast<std::size_t>(rank)].stamp = generation + 1;
  g.barrier_failed = g.barrier_failed || failed;
  if (++g.barrier_count < g.size) return {generation + 1, false};
  g.barrier_count = 0;
  g.barrier_outcome.store(g.barrier_failed, std::memory_order_relaxed);
  g.barrier_failed = false;
  g.barrier_generation.store(generation + 1, std::memory_order_release);
  for (int r = 0; r < g.size; ++r) {
    if (r != rank) g.waker_of(r).notify();
  }
  return {generation + 1, true};
}

// Blocks `rank` until the barrier that ends in `generation` has ended.
inline void await_barrier(const inproc_group& g, int rank, std::uint64_t generation, bool give_up) {
  detail::wait_until(
      g, rank, [&g, generation] { return g.barrier_generation.load(std::memory_order_acquire) >= generation; },
      [&g, generation] {
        std::string missing;
        for (int r = 0; r < g.size; ++r) {
          if (g.arrivals[static_cast<std::size_t>(r)].load(std::memory_order_relaxed) < generation) {
            missing += (missing.empty() ? "" : ", ") + std::to_string(r);
          }
        }
        return detail::str("barrier of ", g.size, " ranks (waiting for rank ", missing, ")");
      },
      give_up);
}

// Returns once every rank of `g` has called it (`publishing`: see arrive). A rank that arrives
// after the world has aborted is refused, and a rank whose wait ends in an abort or a timeout
// takes its arrival back: the others cannot pass without it, so none goes on to read the buffers
// of a rank that has given up. (An abort that lands as the last rank arrives lets every rank
// through or none.)
inline void barrier(inproc_group& g, int rank, bool publishing = false) {
  check_usable(g, rank, "barrier");
  if (g.fabric->aborted.load(std::memory_order_acquire)) {
    raise<transport_error>(detail::str("rank ", rank, ": barrier of ", g.size, " ranks abandoned because ",
                                       g.fabric->summary()));
  }
  const arrival a = arrive(g, rank, false, publishing);
  if (a.last) return;
  try {
    await_barrier(g, rank, a.generation, true);
  } catch (...) {
    std::lock_guard lock(g.barrier_mutex);
    if (g.barrier_generation.load(std::memory_order_relaxed) >= a.generation) return;  // it ended as the wait gave up
    --g.barrier_count;
    g.arrivals[static_cast<std::size_t>(rank)].store(a.generation - 1, std::memory_order_relaxed);
    throw;
  }
}

// The barrier that ends a native collective, which every rank of the group reaches once it has
// passed the collective's first barrier: it waits through aborts and timeouts, because until it
// ends other ranks may still read and write this rank's buffers. Returns whether any rank arrived
// with `failed`.
inline bool closing_barrier(inproc_group& g, int rank, bool failed) {
  const arrival a = arrive(g, rank, failed);
  if (!a.last) await_barrier(g, rank, a.generation, false);
  return g.barrier_outcome.load(std::memory_order_relaxed);
}

}  // namespace switchyard::transport::detail

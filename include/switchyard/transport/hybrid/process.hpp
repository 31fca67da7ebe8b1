// What the threads of one process of a hybrid world share: the MPI communicators, one per thread
// slot, the layout of the MPI tags that carry a group, a sender and a tag, and the fate of the run.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/hybrid/options.hpp>
#include <switchyard/transport/mpi/errors.hpp>
#include <switchyard/transport/mpi/site.hpp>
#include <switchyard/transport/transport.hpp>

#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace switchyard::transport::detail {

/// Tags below this value are the caller's (MPI guarantees 32767 at least); the hybrid transport's
/// own messages (split, barrier) use the few above.
inline constexpr int hybrid_user_tags = 32768;
inline constexpr int hybrid_split_tag = hybrid_user_tags;
inline constexpr int hybrid_barrier_tag = hybrid_user_tags + 1;
inline constexpr int hybrid_tag_bits = 16;

// An MPI tag carries, from the high bits down: the group's context (a number every member of the
// group agrees on, unique among the groups its receiving thread belongs to), the thread slot of
// the sender on its process, and the tag the caller gave.
struct hybrid_tag_layout {
  int slot_bits = 0;
  int context_bits = 0;

  [[nodiscard]] int encode(int context, int slot, int tag) const noexcept {
    return (((context << slot_bits) | slot) << hybrid_tag_bits) | tag;
  }
  [[nodiscard]] int slot_of(int mpi_tag) const noexcept {
    return (mpi_tag >> hybrid_tag_bits) & ((1 << slot_bits) - 1);
  }
  [[nodiscard]] int contexts() const noexcept { return 1 << context_bits; }
};

// The layout for `slots` threads per process under MPI's largest tag `tag_ub`, or a usage_error
// when the tag space holds too few groups.
inline hybrid_tag_layout hybrid_layout(int slots, int tag_ub) {
  hybrid_tag_layout layout;
  layout.slot_bits = static_cast<int>(std::bit_width(static_cast<unsigned>(std::max(slots, 1) - 1)));
  const int tag_bits = static_cast<int>(std::bit_width(static_cast<unsigned>(tag_ub)));
  layout.context_bits = std::min(20, tag_bits - hybrid_tag_bits - layout.slot_bits);
  if (layout.context_bits < 4) {
    raise<usage_error>(str("transport::hybrid: MPI's largest tag is ", tag_ub, ", too small for ", slots,
                           " threads per process and the groups split from them (it needs ",
                           hybrid_tag_bits + layout.slot_bits + 4, " bits)"));
  }
  return layout;
}

// The process of a hybrid world: its place among the processes, the threads of each, one
// duplicate of the world's communicator per thread slot (thread s of every process receives on
// slot s only, so no two threads ever take each other's messages), and whether a thread failed.
struct hybrid_process {
  int process = 0;
  int processes = 1;
  std::vector<int> threads;  // process -> threads
  std::vector<int> offsets;  // process -> world rank of its thread 0
  std::vector<MPI_Comm> slots;
  std::vector<int> next_context;  // slot -> the next context its thread may give a group
  hybrid_tag_layout layout;
  hybrid_options options;
  std::atomic<bool> aborted{false};
  std::mutex failure_mutex;
  std::string failure;

  hybrid_process() = default;
  hybrid_process(const hybrid_process&) = delete;
  hybrid_process& operator=(const hybrid_process&) = delete;
  ~hybrid_process() {
    for (MPI_Comm& comm : slots) MPI_Comm_free(&comm);
  }

  void abort(int world_rank, const std::string& what) {
    {
      std::lock_guard lock(failure_mutex);
      if (!failure.empty()) return;
      failure = str("rank ", world_rank, " failed: ", what);
    }
    aborted.store(true, std::memory_order_release);
  }
  std::string summary() {
    std::lock_guard lock(failure_mutex);
    return failure;
  }
};

// Polls `done()` until it holds, yielding or sleeping as `hybrid_options::wait` says, and raises
// when a thread of the process failed or the timeout passed; `describe()` names the wait.
template <class Done, class Describe>
void hybrid_wait(hybrid_process& process, int rank, Done done, Describe describe) {
  if (done()) return;
  const auto deadline = deadline_after(process.options.timeout);
  std::chrono::microseconds pause{20};
  for (;;) {
    if (done()) return;
    if (process.aborted.load(std::memory_order_acquire)) {
      raise<transport_error>(str("rank ", rank, ": ", describe(), " abandoned because ", process.summary()));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      raise<timeout_error>(str("rank ", rank, ": ", describe(), " did not complete within ",
                               process.options.timeout.count(), " ms (hybrid_options::timeout)"));
    }
    if (process.options.wait == mpi_wait::passive) {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds{200});
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace switchyard::transport::detail

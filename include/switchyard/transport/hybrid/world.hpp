// The hybrid launcher: on every process of an MPI job, runs a function on each of the process's
// threads, which together form one world of ranks (threads inside a process, MPI between).
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/transport/hybrid/group.hpp>
#include <switchyard/transport/hybrid/handle.hpp>
#include <switchyard/transport/hybrid/options.hpp>
#include <switchyard/transport/hybrid/process.hpp>
#include <switchyard/transport/inproc/world.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/config.hpp>  // <mpi.h>, without Open MPI's deprecated C++ bindings

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::transport {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief A hybrid world over the processes of an MPI communicator: each process brings `threads`
/// ranks, which are its threads (transport::hybrid); the counts may differ between processes.
/// Constructing one is collective over the communicator; it duplicates the communicator once per
/// thread slot (as many as the most threads of any process).
///
/// `run(f)` calls `f(hybrid&)` on every thread of this process (thread 0 on the caller's), joins
/// them, and returns nothing if `f` returns nothing, else a `std::vector` of this process's results
/// by thread. A thread that throws releases the other threads of its process, and `run` rethrows
/// the first failure; threads of other processes that wait for this one wait until the job ends,
/// so a program ends the job (`MPI_Abort`) after a failure, as with `transport::mpi`.
/// @throws usage_error when MPI is not initialized with `MPI_THREAD_MULTIPLE`, when a process
/// asks for fewer than 1 thread (on every process), or for options out of range.
/// @code
/// boost::mpi::environment env(argc, argv, boost::mpi::threading::multiple);
/// switchyard::transport::hybrid_world world(4);   // 4 threads on this process
/// world.run([](switchyard::transport::hybrid& t) { /* rank t.rank() of world.size() */ });
/// @endcode
class hybrid_world {
 public:
  explicit hybrid_world(int threads, hybrid_options options = {},
                        const boost::mpi::communicator& communicator = boost::mpi::communicator());

  template <class F>
  auto run(F&& f);

  /// Ranks in the world: the threads of every process.
  [[nodiscard]] int size() const noexcept { return process_->offsets.back() + process_->threads.back(); }
  /// This process's threads.
  [[nodiscard]] int threads() const noexcept { return process_->threads[static_cast<std::size_t>(process_->process)]; }
  /// This process's place among the processes: its node.
  [[nodiscard]] int process() const noexcept { return process_->process; }
  [[nodiscard]] int processes() const noexcept { return process_->processes; }

 private:
  std::shared_ptr<detail::hybrid_process> process_;
};

/// @brief Shorthand for `hybrid_world(threads, options).run(f)` over `MPI_COMM_WORLD`.
template <class F>
auto run_hybrid(int threads, F&& f, hybrid_options options = {}) {
  return hybrid_world(threads, std::move(options)).run(std::forward<F>(f));
}

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

namespace detail {

inline const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace detail

inline hybrid_world::hybrid_world(int threads, hybrid_options options, const boost::mpi::communicator& communicator)
    : process_(std::make_shared<detail::hybrid_process>()) {
  using detail::raise;
  using detail::str;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) {
    raise<usage_error>("transport::hybrid needs MPI initialized with MPI_THREAD_MULTIPLE: construct "
                       "boost::mpi::environment(argc, argv, boost::mpi::threading::multiple) first");
  }
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE) {
    raise<usage_error>(str("transport::hybrid needs MPI_THREAD_MULTIPLE (the threads of a process receive from other "
                           "processes at the same time), but MPI was initialized with ",
                           detail::thread_level_name(level),
                           ": use boost::mpi::environment(argc, argv, boost::mpi::threading::multiple)"));
  }
  if (options.timeout <= std::chrono::milliseconds::zero()) {
    raise<usage_error>(str("hybrid_options::timeout must be positive, got ", options.timeout.count(),
                           " ms (std::chrono::milliseconds::max() waits forever)"));
  }
  if (options.spin < 0) raise<usage_error>(str("hybrid_options::spin must be >= 0, got ", options.spin));
  detail::hybrid_process& p = *process_;
  p.options = options;
  const auto comm = static_cast<MPI_Comm>(communicator);
  MPI_Comm_rank(comm, &p.process);
  MPI_Comm_size(comm, &p.processes);
  // Every process learns every thread count before any refuses one, so that all refuse together.
  p.threads.resize(static_cast<std::size_t>(p.processes));
  detail::mpi_check(MPI_Allgather(&threads, 1, MPI_INT, p.threads.data(), 1, MPI_INT, comm), p.process,
                    "MPI_Allgather", {"allgather", detail::no_peer, any_tag, 1, p.processes});
  for (int q = 0; q < p.processes; ++q) {
    if (p.threads[static_cast<std::size_t>(q)] < 1) {
      raise<usage_error>(str("transport::hybrid: process ", q, " asks for ", p.threads[static_cast<std::size_t>(q)],
                             " threads; every process needs at least 1"));
    }
  }
  p.offsets.resize(p.threads.size());
  int total = 0;
  for (std::size_t q = 0; q < p.threads.size(); ++q) {
    p.offsets[q] = total;
    total += p.threads[q];
  }
  const int slots = *std::max_element(p.threads.begin(), p.threads.end());
  int* tag_ub = nullptr;
  int has_tag_ub = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &has_tag_ub);
  p.layout = detail::hybrid_layout(slots, has_tag_ub != 0 ? *tag_ub : 32767);
  p.next_context.assign(static_cast<std::size_t>(slots), 1);
  for (int s = 0; s < slots; ++s) {
    MPI_Comm dup = MPI_COMM_NULL;
    detail::mpi_check(MPI_Comm_dup(comm, &dup), p.process, "MPI_Comm_dup",
                      {"split", detail::no_peer, any_tag, 0, p.processes});
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    p.slots.push_back(dup);
  }
}

template <class F>
auto hybrid_world::run(F&& f) {
  std::shared_ptr<detail::hybrid_process> process = process_;
  std::vector<detail::hybrid_member> members;
  for (int q = 0; q < process->processes; ++q) {
    for (int s = 0; s < process->threads[static_cast<std::size_t>(q)]; ++s) {
      members.push_back({q, s, q == process->process ? s : -1});
    }
  }
  inproc_options local;
  local.timeout = process->options.timeout;
  local.spin = process->options.spin;
  local.check_collectives = false;  // the collectives check the hybrid groups, not the in-process ones
  const int offset = process->offsets[static_cast<std::size_t>(process->process)];
  return run_inproc(
      threads(),
      [&](inproc& thread) {
        const int rank = offset + thread.rank();
        hybrid handle(std::make_shared<detail::hybrid_group>(process, thread, members, rank, 0,
                                                             process->options.check_collectives));
        try {
          return std::invoke(f, handle);
        } catch (const std::exception& e) {
          process->abort(rank, e.what());
          throw;
        } catch (...) {
          process->abort(rank, "an exception not derived from std::exception");
          throw;
        }
      },
      local);
}

}  // namespace switchyard::transport

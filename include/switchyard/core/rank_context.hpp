// The state the library keeps per rank: the collectives' scratch buffers, the stage label, the
// sequence budget of loads, and the floating-point mode. A rank is usually one thread and its state
// that thread's; a transport that runs many ranks on one thread (the simulated one, whose actors
// take turns on it) gives each rank its own and reinstalls it whenever a rank resumes.
#pragma once

#include <switchyard/core/floating_point.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace switchyard {

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

/// @brief One rank's library state: what would otherwise be `thread_local`.
///
/// Every thread has one of its own, current unless a `rank_context_scope` installs another; code
/// reaches the current one through `current_rank_context()`. Not copyable: scratch spans point
/// into it.
/// @code
/// switchyard::rank_context mine;                 // one per simulated rank
/// {
///   switchyard::rank_context_scope in_rank{mine};
///   switchyard::collective::allreduce(t, grad);   // scratch and stage label come from `mine`
/// }
/// @endcode
class rank_context {
 public:
  rank_context() = default;
  rank_context(const rank_context&) = delete;
  rank_context& operator=(const rank_context&) = delete;

  /// Scratch space of `count` elements of `T`, grown on first use and kept (a hot loop of
  /// collectives must not allocate); `slot` 0 or 1 keeps apart two buffers used at once.
  template <class T>
  [[nodiscard]] std::span<T> scratch(std::size_t count, std::size_t slot = 0);

  /// The label of the innermost live `collective::stage_scope` of this rank.
  std::string stage_label;
  /// The most elements one sequence loaded on this rank may claim (`sequence_budget()`).
  std::uint64_t sequence_budget = std::numeric_limits<std::uint64_t>::max();
  /// The checked collectives' table of every rank's fingerprint.
  std::vector<std::uint64_t> fingerprints;

  /// Saves the calling thread's floating-point mode into this rank before it gives the thread to
  /// another rank, and puts it back when it resumes (`suspend` and `resume` below).
  detail::fp_control floating_point_mode = detail::read_fp_control();

 private:
  struct scratch_base {
    virtual ~scratch_base() = default;
  };
  template <class T>
  struct typed_scratch final : scratch_base {
    std::vector<T> buffers[2];
  };
  template <class T>
  static constexpr char type_key = 0;

  std::vector<std::pair<const void*, std::unique_ptr<scratch_base>>> scratch_;
};

/// @brief The rank context of the calling thread's current rank: the thread's own unless a
/// `rank_context_scope` installed another.
[[nodiscard]] rank_context& current_rank_context() noexcept;

/// @brief Makes `context` the calling thread's current rank context for its lifetime, then puts
/// back the previous one.
class rank_context_scope {
 public:
  explicit rank_context_scope(rank_context& context) noexcept;
  ~rank_context_scope();
  rank_context_scope(const rank_context_scope&) = delete;
  rank_context_scope& operator=(const rank_context_scope&) = delete;

 private:
  rank_context* previous_;
};

namespace detail {

inline rank_context*& current_rank_context_pointer() noexcept {
  thread_local rank_context own;
  thread_local rank_context* current = &own;
  return current;
}

/// A rank that is about to give its thread to another rank (a simulated actor that blocks)
/// keeps its floating-point mode.
inline void suspend(rank_context& context) noexcept { context.floating_point_mode = read_fp_control(); }

/// A rank that gets its thread back makes its context current and its floating-point mode the
/// thread's again.
inline void resume(rank_context& context) noexcept {
  current_rank_context_pointer() = &context;
  write_fp_control(context.floating_point_mode);
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <class T>
std::span<T> rank_context::scratch(std::size_t count, std::size_t slot) {
  typed_scratch<T>* typed = nullptr;
  for (auto& [key, store] : scratch_) {
    if (key == &type_key<T>) typed = static_cast<typed_scratch<T>*>(store.get());
  }
  if (typed == nullptr) {
    auto fresh = std::make_unique<typed_scratch<T>>();
    typed = fresh.get();
    scratch_.emplace_back(&type_key<T>, std::move(fresh));
  }
  std::vector<T>& buffer = typed->buffers[slot];
  if (buffer.size() < count) buffer.resize(count);
  return {buffer.data(), count};
}

inline rank_context& current_rank_context() noexcept { return *detail::current_rank_context_pointer(); }

inline rank_context_scope::rank_context_scope(rank_context& context) noexcept
    : previous_(std::exchange(detail::current_rank_context_pointer(), &context)) {}

inline rank_context_scope::~rank_context_scope() { detail::current_rank_context_pointer() = previous_; }

}  // namespace switchyard

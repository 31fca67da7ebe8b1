// The stage label of the calling rank: part of every collective's fingerprint when collectives
// are checked, so that ranks in different stages of a program are told so by name.
#pragma once

#include <switchyard/core/rank_context.hpp>

#include <string>
#include <string_view>
#include <utility>

namespace switchyard::collective {

namespace detail {

inline std::string& stage_label() { return current_rank_context().stage_label; }

}  // namespace detail

/// @brief The label set by the innermost live `stage_scope` of this rank; empty outside any.
[[nodiscard]] inline std::string_view current_stage() noexcept { return detail::stage_label(); }

/// @brief Labels the collectives this rank calls while it lives; the previous label comes back
/// when it ends.
///
/// With checked collectives on (docs/collectives.md#checked-collectives), the label is part of
/// each collective's fingerprint: ranks that call a collective under different labels get a
/// `usage_error` that prints both. Labels are per rank (core/rank_context.hpp: an in-process rank
/// is a thread, an MPI rank a process's one thread, a simulated rank an actor with a context of
/// its own); `strategy::switch_to` sets the active strategy's name.
/// @code
/// switchyard::collective::stage_scope stage{"warm-up"};
/// switchyard::collective::allreduce(t, grad);   // fingerprinted with stage "warm-up"
/// @endcode
class stage_scope {
 public:
  explicit stage_scope(std::string_view label) : previous_(std::exchange(detail::stage_label(), std::string(label))) {}
  ~stage_scope() { detail::stage_label() = std::move(previous_); }
  stage_scope(const stage_scope&) = delete;
  stage_scope& operator=(const stage_scope&) = delete;

 private:
  std::string previous_;
};

}  // namespace switchyard::collective

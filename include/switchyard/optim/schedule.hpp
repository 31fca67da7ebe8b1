// The learning-rate Schedule role: a pure function of the step number, so that a rank that
// imports an optimizer state (with its step counter) continues the schedule where it was.
#pragma once

#include <concepts>
#include <cstdint>

namespace switchyard::optim {

/// @brief A Schedule: the learning rate of update number `step` (0 for the first update).
///
/// Required expressions, for `const S& s` and `std::uint64_t step`:
/// @code
/// double rate = s.lr(step);   // convertible to double; depends on `step` only
/// @endcode
/// Because the rate is a function of the step alone, schedules carry no state of their own and
/// are not part of `optimizer_state`. Shipped: `constant`, `step_decay`, `cosine`, and
/// `warmup<Schedule>` which prefixes any of them with a linear warm-up.
template <class S>
concept schedule = std::copy_constructible<S> && requires(const S& s, std::uint64_t step) {
  { s.lr(step) } -> std::convertible_to<double>;
};

}  // namespace switchyard::optim

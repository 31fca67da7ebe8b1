// The Trigger role: decides, from the progress every rank agrees on, when a strategy switch fires.
#pragma once

#include <switchyard/train/history.hpp>

#include <concepts>

namespace switchyard::trigger {

/// @brief A Trigger: `t.fire(record)` is called once after every epoch of the first stage with
/// the epoch record all ranks share, and says whether to switch now.
///
/// Required expression, for `T& t` and `const train::epoch_record& record`:
/// @code
/// bool now = t.fire(record);   // may keep state (a smoothed loss, a running step count)
/// @endcode
/// Every rank sees the same records in the same order, so a deterministic trigger fires on every
/// rank at the same epoch with no message of its own.
template <class T>
concept trigger = std::copy_constructible<T> && requires(T& t, const train::epoch_record& record) {
  { t.fire(record) } -> std::convertible_to<bool>;
};

}  // namespace switchyard::trigger

// The Trigger role: decides, from the progress every rank agrees on, when a strategy switch fires.
#pragma once

#include <switchyard/core/history.hpp>

#include <concepts>
#include <cstdint>

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

/// @brief Progress inside an epoch, for triggers that can fire between two steps.
struct progress {
  /// Batches (worker steps, all workers together) trained since the first stage began.
  std::uint64_t batches = 0;
};

/// @brief A Trigger that may also fire inside an epoch: `t.fire_at(p)` is asked after every
/// step of the first stage, and a switch then happens at that step instead of at the epoch's end.
///
/// Required expression, besides `fire(record)`, for `const progress& p`:
/// @code
/// bool now = t.fire_at(p);   // must depend on p alone: the rank that asks is not always the same
/// @endcode
/// Who asks, so that every rank switches after the same batch: in a synchronous stage every
/// worker asks after each step with the same count, and they agree without a message; in an
/// asynchronous stage the coordinator (parameter server 0, which hands out the batches) asks
/// before it hands out each batch, stops handing them out when it fires, and the others learn it
/// at the end of that part of the epoch. `after_steps` is one; `any_of` and `all_of` are when
/// their parts are.
template <class T>
concept within_epoch = trigger<T> && requires(T& t, const progress& p) {
  { t.fire_at(p) } -> std::convertible_to<bool>;
};

}  // namespace switchyard::trigger

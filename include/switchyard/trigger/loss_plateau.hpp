// Switch when the training loss has stopped improving.
#pragma once

#include <switchyard/core/sequence.hpp>
#include <switchyard/core/history.hpp>

#include <cmath>
#include <cstddef>

namespace switchyard::trigger {

/// @brief Fires when the model has stabilized: the smoothed training loss changed by less than
/// `epsilon` (relative) at each of `window` consecutive epochs.
///
/// The rule, per epoch with mean training loss L: the smoothed loss is S = L at the first epoch,
/// then S' = alpha * L + (1 - alpha) * S; the epoch counts as flat when |S' - S| <= epsilon * |S|,
/// and the trigger fires at the `window`-th flat epoch in a row (a change above epsilon resets
/// the count).
/// @code
/// switchyard::trigger::loss_plateau plateau{0.02, 2};   // 2 epochs in a row under 2%
/// @endcode
struct loss_plateau {
  double epsilon = 0.01;
  std::size_t window = 2;
  double alpha = 0.5;

  double smoothed = 0.0;
  std::size_t flat = 0;
  bool started = false;

  bool fire(const train::epoch_record& record) noexcept {
    if (!started) {
      started = true;
      smoothed = record.train_loss;
      return false;
    }
    const double next = alpha * record.train_loss + (1.0 - alpha) * smoothed;
    flat = std::abs(next - smoothed) <= epsilon * std::abs(smoothed) ? flat + 1 : 0;
    smoothed = next;
    return flat >= window;
  }
};

/// Checkpoints (Boost.Serialization, by argument-dependent lookup): the smoothed loss and the run
/// of flat epochs; epsilon, window and alpha are configuration and come from the resumed run.
template <class Archive>
void serialize(Archive& archive, loss_plateau& t, const unsigned int /*version*/) {
  archive & t.smoothed;
  archive & t.flat;
  serialize_flag(archive, t.started);
}

}  // namespace switchyard::trigger

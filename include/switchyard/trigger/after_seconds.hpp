// Switch after an amount of wall time.
#pragma once

#include <switchyard/core/history.hpp>

namespace switchyard::trigger {

/// @brief Fires at the end of the first epoch that ends `seconds` or more after training started
/// (the slowest rank's clock, agreed in the epoch record).
struct after_seconds {
  double seconds = 0.0;
  [[nodiscard]] bool fire(const train::epoch_record& record) const noexcept { return record.wall_seconds >= seconds; }
};

/// Checkpoints: no state (a resumed run's records continue the wall clock of the checkpoint).
template <class Archive>
void serialize(Archive&, after_seconds&, const unsigned int /*version*/) {}

}  // namespace switchyard::trigger

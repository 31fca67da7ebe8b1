// Switch after a number of epochs.
#pragma once

#include <switchyard/train/history.hpp>

#include <cstddef>

namespace switchyard::trigger {

/// @brief Fires at the end of epoch N (counted from the start of training).
/// `after_epochs<3>{}` and `after_epochs{3}` say the same.
template <std::size_t N = 1>
struct after_epochs {
  std::size_t epochs = N;
  constexpr after_epochs() = default;
  constexpr explicit after_epochs(std::size_t n) : epochs(n) {}
  [[nodiscard]] constexpr bool fire(const train::epoch_record& record) const noexcept { return record.epoch >= epochs; }
};
after_epochs(std::size_t) -> after_epochs<1>;

/// Checkpoints (Boost.Serialization, by argument-dependent lookup): the trigger keeps no state,
/// its threshold is configuration and comes from the resumed run.
template <class Archive, std::size_t N>
void serialize(Archive&, after_epochs<N>&, const unsigned int /*version*/) {}

}  // namespace switchyard::trigger

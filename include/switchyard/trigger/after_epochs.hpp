// Switch after a number of epochs.
#pragma once

#include <switchyard/core/threshold.hpp>
#include <switchyard/core/history.hpp>

#include <cstddef>

namespace switchyard::trigger {

/// @brief Fires at the end of epoch N (counted from the start of training).
///
/// `after_epochs<3>{}` fixes the epoch in the type; `after_epochs{n}` takes it at run time and is
/// an `after_epochs<dynamic_threshold>` (see `switchyard::threshold`).
/// @code
/// switchyard::trigger::after_epochs<3> fixed;        // fires after epoch 3
/// switchyard::trigger::after_epochs chosen{epochs};  // after_epochs<dynamic_threshold>
/// @endcode
template <std::size_t N = dynamic_threshold>
struct after_epochs : threshold<N> {
  using threshold<N>::threshold;
  [[nodiscard]] constexpr bool fire(const train::epoch_record& record) const noexcept {
    return record.epoch >= this->value();
  }
};
after_epochs(std::size_t) -> after_epochs<dynamic_threshold>;

/// Checkpoints (Boost.Serialization, by argument-dependent lookup): the trigger keeps no state,
/// its threshold is configuration and comes from the resumed run.
template <class Archive, std::size_t N>
void serialize(Archive&, after_epochs<N>&, const unsigned int /*version*/) {}

}  // namespace switchyard::trigger

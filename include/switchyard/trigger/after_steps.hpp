// Switch after a number of worker steps.
#pragma once

#include <switchyard/core/threshold.hpp>
#include <switchyard/core/history.hpp>
#include <switchyard/trigger/trigger.hpp>

#include <cstddef>

namespace switchyard::trigger {

/// @brief Fires once the workers together have taken at least N steps (trained N batches): inside
/// the epoch, at the first step boundary where the count reaches N (`fire_at`), so a switch lands
/// there; `fire`, at the end of an epoch, fires if it has been reached by then.
///
/// In a synchronous stage of W workers the count moves W batches per step, so the switch lands on
/// the first multiple of W at or above N. In an asynchronous stage the coordinator stops handing
/// out batches at N, but the first batch of each worker in an epoch is handed out before any
/// step, so an N below that is reached only after those.
///
/// `after_steps<500>{}` fixes the count in the type; `after_steps{n}` takes it at run time and is
/// an `after_steps<dynamic_threshold>` (see `switchyard::threshold`).
template <std::size_t N = dynamic_threshold>
struct after_steps : threshold<N> {
  using threshold<N>::threshold;
  std::size_t taken = 0;  ///< steps counted at the ends of epochs so far
  constexpr bool fire(const train::epoch_record& record) noexcept {
    taken += record.steps;
    return taken >= this->value();
  }
  [[nodiscard]] constexpr bool fire_at(const progress& p) const noexcept { return p.batches >= this->value(); }
};
after_steps(std::size_t) -> after_steps<dynamic_threshold>;

/// Checkpoints (Boost.Serialization, by argument-dependent lookup): the steps counted so far; the
/// threshold is configuration and comes from the resumed run.
template <class Archive, std::size_t N>
void serialize(Archive& archive, after_steps<N>& t, const unsigned int /*version*/) {
  archive & t.taken;
}

}  // namespace switchyard::trigger

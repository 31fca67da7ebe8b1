// The state an optimizer carries between steps, as plain data: a step counter and per-element
// buffers aligned with the parameters, so it can be sliced into parameter-server shards,
// reassembled, checkpointed and handed from one rank to another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/core/sequence.hpp"

namespace switchyard::optim {

/// @brief An optimizer's state over `size` parameters: the number of steps taken, the position of
/// its learning-rate schedule, and its slots, each one value per parameter (none for SGD; the
/// velocity for momentum; m then v for Adam).
///
/// Element `i` of every slot belongs to parameter `i`, so the state of a contiguous shard of the
/// parameters is the same range of every slot (`slice`), and shards put back in order give the
/// whole (`assemble`). Stepping each shard with its sliced state is then exactly (bitwise)
/// stepping the whole, which is what a parameter server rank does for the shard it owns.
///
/// Serialization: it is plain data (integers and nested `std::vector`s). The free `serialize`
/// below makes it Boost.Serialization-ready without this header including Boost: any archive
/// (`oa << state`); the slots go through `serialize_sequence`, which refuses impossible counts.
/// @tparam T element type of the slots (default `float`), the optimizer's `value_type`.
/// @code
/// auto whole = optimizer.export_state();                       // copy of the full state
/// auto shard = whole.slice(first, count);                      // what server k owns
/// server_optimizer.import_state(std::move(shard));
/// auto back = optim::optimizer_state<float>::assemble(shards); // shards in order of `first`
/// @endcode
template <class T = float>
struct optimizer_state {
  std::uint64_t step = 0;                // updates applied so far
  std::uint64_t size = 0;                // parameters covered; every slot has this many values
  std::vector<std::vector<T>> slots;     // per-parameter buffers, in the optimizer's order
  std::uint64_t clock = 0;               // the schedule's position: batches trained so far

  /// The state of parameters [first, first + count): same step and clock, each slot's range.
  [[nodiscard]] optimizer_state slice(std::size_t first, std::size_t count) const {
    if (first > size || count > size - first) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          "optim::optimizer_state::slice: range [", first, ", ", first + count,
          ") exceeds the ", size, " parameters of the state"));
    }
    optimizer_state part{step, count, {}, clock};
    part.slots.reserve(slots.size());
    for (const std::vector<T>& slot : slots) {
      const auto begin = slot.begin() + static_cast<std::ptrdiff_t>(first);
      part.slots.emplace_back(begin, begin + static_cast<std::ptrdiff_t>(count));
    }
    return part;
  }

  /// The state of the concatenation of `shards` (in parameter order). All shards must have the
  /// same step, clock and slot count: they are slices of one optimizer's state stepped in lockstep.
  [[nodiscard]] static optimizer_state assemble(std::span<const optimizer_state> shards) {
    if (shards.empty()) {
      switchyard::detail::raise<usage_error>("optim::optimizer_state::assemble: no shards");
    }
    optimizer_state whole{shards.front().step, 0, std::vector<std::vector<T>>(shards.front().slots.size()),
                          shards.front().clock};
    for (std::size_t k = 0; k < shards.size(); ++k) {
      const optimizer_state& shard = shards[k];
      if (shard.step != whole.step || shard.clock != whole.clock || shard.slots.size() != whole.slots.size()) {
        switchyard::detail::raise<usage_error>(switchyard::detail::str(
            "optim::optimizer_state::assemble: shard ", k, " has step ", shard.step, ", clock ", shard.clock,
            " and ", shard.slots.size(), " slots, shard 0 has step ", whole.step, ", clock ", whole.clock,
            " and ", whole.slots.size(), " slots"));
      }
      whole.size += shard.size;
    }
    for (std::size_t s = 0; s < whole.slots.size(); ++s) {
      whole.slots[s].reserve(whole.size);
      for (const optimizer_state& shard : shards) {
        whole.slots[s].insert(whole.slots[s].end(), shard.slots[s].begin(), shard.slots[s].end());
      }
    }
    return whole;
  }

  friend bool operator==(const optimizer_state&, const optimizer_state&) = default;
};

/// Boost.Serialization hook (found by argument-dependent lookup).
template <class Archive, class T>
void serialize(Archive& archive, optimizer_state<T>& state, const unsigned int /*version*/) {
  archive & state.step;
  archive & state.size;
  serialize_sequence(archive, state.slots);
  archive & state.clock;
}

}  // namespace switchyard::optim

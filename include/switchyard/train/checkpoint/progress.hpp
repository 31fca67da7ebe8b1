// A strategy's progress in a checkpoint: the bytes its optional serialize_progress writes, and
// their decoding back into a strategy, refusing bytes of another strategy.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/strategy/traits.hpp>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <concepts>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace switchyard::train {

/// The strategy's progress as bytes (empty for a strategy without `serialize_progress`).
template <class Strategy>
[[nodiscard]] std::vector<std::uint8_t> encode_progress(Strategy& strategy);

/// Restores the strategy's progress from `bytes`; raises `data_error` (naming `name`) when they do
/// not fit this strategy (another chain of stages, or another strategy altogether), and then leaves
/// a copyable strategy as it was.
template <class Strategy>
void decode_progress(Strategy& strategy, std::span<const std::uint8_t> bytes, std::string_view name);

// ---------------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------------

template <class Strategy>
std::vector<std::uint8_t> encode_progress(Strategy& strategy) {
  if constexpr (switchyard::strategy::traits::keeps_progress<Strategy, boost::archive::binary_oarchive>()) {
    std::ostringstream out(std::ios::binary);
    {
      boost::archive::binary_oarchive archive(out, boost::archive::no_header);
      strategy.serialize_progress(archive);
    }
    const std::string bytes = std::move(out).str();
    return {bytes.begin(), bytes.end()};
  } else {
    return {};
  }
}

template <class Strategy>
void decode_progress(Strategy& strategy, std::span<const std::uint8_t> bytes, std::string_view name) {
  if constexpr (switchyard::strategy::traits::keeps_progress<Strategy, boost::archive::binary_iarchive>()) {
    // Decoded into a copy when the strategy can be copied, so that bytes that fail partway leave
    // it as it was; a move-only strategy is decoded in place.
    constexpr bool in_copy = std::copy_constructible<Strategy> && std::is_move_assignable_v<Strategy>;
    std::optional<Strategy> copy;
    if constexpr (in_copy) copy.emplace(strategy);
    Strategy& target = copy ? *copy : strategy;
    std::istringstream in(std::string(bytes.begin(), bytes.end()), std::ios::binary);
    try {
      const sequence_budget_scope budget{bytes.size()};
      boost::archive::binary_iarchive archive(in, boost::archive::no_header);
      target.serialize_progress(archive);
    } catch (const std::exception& e) {
      detail::raise<data_error>(detail::str("checkpoint ", name, " does not hold this strategy's progress (",
                                            bytes.size(), " bytes that do not decode: ", e.what(),
                                            "); was it written by another strategy?"));
    }
    if (in.peek() != std::char_traits<char>::eof()) {
      detail::raise<data_error>(detail::str("checkpoint ", name,
                                            " holds more strategy progress than this strategy has; was it "
                                            "written by another chain of stages?"));
    }
    if constexpr (in_copy) strategy = std::move(*copy);
  } else if (!bytes.empty()) {
    detail::raise<data_error>(detail::str("checkpoint ", name, " holds ", bytes.size(),
                                          " bytes of strategy progress, this "
                                          "strategy keeps none; was it written by a strategy switch?"));
  }
}

}  // namespace switchyard::train

// Serializing sequences (std::vector, std::string) and flags through any Boost.Serialization-style
// archive without trusting what is loaded: a count is checked against a budget before anything is
// allocated, so a corrupt or hostile file cannot make a reader allocate gigabytes, and a flag must
// be 0 or 1.
#pragma once

#include <switchyard/core/error.hpp>
#include <switchyard/core/rank_context.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace switchyard {

/// The most elements one sequence loaded on this rank may claim; no limit unless a
/// `sequence_budget_scope` sets one (a reader of untrusted bytes sets it to their number: every
/// element takes at least one byte). Kept in the rank's context (core/rank_context.hpp).
[[nodiscard]] inline std::uint64_t& sequence_budget() noexcept { return current_rank_context().sequence_budget; }

/// Sets `sequence_budget()` for its lifetime, then restores the previous one.
class sequence_budget_scope {
 public:
  explicit sequence_budget_scope(std::uint64_t budget) noexcept : previous_(sequence_budget()) {
    sequence_budget() = budget;
  }
  ~sequence_budget_scope() { sequence_budget() = previous_; }
  sequence_budget_scope(const sequence_budget_scope&) = delete;
  sequence_budget_scope& operator=(const sequence_budget_scope&) = delete;

 private:
  std::uint64_t previous_;
};

namespace detail {
template <class T>
inline constexpr bool is_sequence = false;
template <class T, class Allocator>
inline constexpr bool is_sequence<std::vector<T, Allocator>> = true;
template <class Char, class Traits, class Allocator>
inline constexpr bool is_sequence<std::basic_string<Char, Traits, Allocator>> = true;
}  // namespace detail

/// @brief Saves or loads `s` (a `std::vector` or `std::string`, nested to any depth) through
/// `archive` as a 64-bit count, then its elements with `archive & element`.
///
/// On loading (`Archive::is_loading::value`), a count above `sequence_budget()` raises
/// `data_error` before the sequence is resized. Boost's own `vector.hpp` resizes to whatever
/// count it reads; the checkpoint types of switchyard serialize their sequences with this instead.
/// @code
/// template <class Archive>
/// void serialize(Archive& archive, my_record& r, const unsigned int) {
///   archive & r.step;
///   switchyard::serialize_sequence(archive, r.values);
/// }
/// @endcode
template <class Archive, class Sequence>
  requires detail::is_sequence<Sequence>
void serialize_sequence(Archive& archive, Sequence& s) {
  std::uint64_t count = s.size();
  archive & count;
  if constexpr (Archive::is_loading::value) {
    if (count > sequence_budget()) {
      detail::raise<data_error>(detail::str("a loaded sequence claims ", count, " elements, more than the ",
                                            sequence_budget(), " its input can hold"));
    }
    s.resize(static_cast<typename Sequence::size_type>(count));
  }
  for (auto& element : s) {
    if constexpr (detail::is_sequence<std::remove_reference_t<decltype(element)>>) {
      serialize_sequence(archive, element);
    } else {
      archive & element;
    }
  }
}

/// @brief Saves or loads `flag` through `archive` as one byte, 0 or 1. On loading any other byte
/// raises `data_error`: Boost's binary archives read a `bool` straight from its byte, and a byte
/// other than 0 or 1 in a `bool` is undefined behaviour (the checkpoint fuzzer found one).
template <class Archive>
void serialize_flag(Archive& archive, bool& flag) {
  std::uint8_t byte = flag ? 1 : 0;
  archive & byte;
  if constexpr (Archive::is_loading::value) {
    if (byte > 1) detail::raise<data_error>(detail::str("a loaded flag holds ", unsigned{byte}, ", not 0 or 1"));
    flag = byte == 1;
  }
}

}  // namespace switchyard

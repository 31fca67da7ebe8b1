// Reduction operations for the collectives: the four built in ones, and the traits a user
// operation can specialize.
#pragma once

#include <algorithm>
#include <concepts>
#include <span>
#include <type_traits>

namespace switchyard {

namespace ops {

/// @brief Element-wise sum.
struct sum {
  template <class T>
  constexpr T operator()(T a, T b) const noexcept {
    return static_cast<T>(a + b);
  }
};

/// @brief Element-wise minimum.
struct min {
  template <class T>
  constexpr T operator()(T a, T b) const noexcept {
    return std::min(a, b);
  }
};

/// @brief Element-wise maximum.
struct max {
  template <class T>
  constexpr T operator()(T a, T b) const noexcept {
    return std::max(a, b);
  }
};

/// @brief Element-wise mean over the ranks: a sum, then one division by the number of ranks
/// (integer division for integer elements), done once per element so every rank gets the same
/// bits.
struct average : sum {
  template <class T>
  static constexpr T finalize(T total, int ranks) noexcept {
    if constexpr (std::is_integral_v<T>) {
      // In a type that holds the rank count: 256 ranks are 0 as a uint8_t, 128 are -128 as an int8_t.
      return static_cast<T>(static_cast<std::common_type_t<T, long long>>(total) / ranks);
    } else {
      return static_cast<T>(total / static_cast<T>(ranks));
    }
  }
};

}  // namespace ops

/// @brief Whether `op(a, b) == op(b, a)` for every a, b. Algorithms that reorder operands
/// (the ring) refuse non-commutative operations. False unless said otherwise, as in Boost.MPI:
/// the built-in operations are commutative, and a user's operation is taken as non-commutative
/// (keeping the operands in rank order) until it specializes this to `true_type`. Every operation
/// must be associative.
/// @code
/// struct bitwise_or { int operator()(int a, int b) const { return a | b; } };
/// template <> struct switchyard::is_commutative<bitwise_or> : std::true_type {};
/// @endcode
template <class Op>
struct is_commutative : std::false_type {};
template <>
struct is_commutative<ops::sum> : std::true_type {};
template <>
struct is_commutative<ops::min> : std::true_type {};
template <>
struct is_commutative<ops::max> : std::true_type {};
template <>
struct is_commutative<ops::average> : std::true_type {};

template <class Op>
inline constexpr bool is_commutative_v = is_commutative<Op>::value;

/// @brief A reduction over `T`: `T op(T, T)`, deterministic, associative.
template <class Op, class T>
concept reduction = std::copy_constructible<Op> && requires(const Op& op, T a) {
  { op(a, a) } -> std::convertible_to<T>;
};

/// @brief A reduction with a final step applied once to each reduced element (`ops::average`).
template <class Op, class T>
concept finalized_reduction = reduction<Op, T> && requires(T a, int ranks) {
  { Op::finalize(a, ranks) } -> std::convertible_to<T>;
};

/// @brief Applies the final step of `Op` (`ops::average`'s division) to every element of `values`,
/// reduced over `ranks` ranks; does nothing for an operation without one.
template <class Op, class T>
void finalize_all(std::span<T> values, int ranks) {
  if constexpr (finalized_reduction<Op, T>) {
    for (T& v : values) v = Op::finalize(v, ranks);
  }
}

}  // namespace switchyard

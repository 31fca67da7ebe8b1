// The Buffer role: any contiguous run of arithmetic values that the collectives can work on in
// place, seen through one customization point, `switchyard::as_span`.
#pragma once

#include <concepts>
#include <cstddef>
#include <ranges>
#include <span>
#include <type_traits>

namespace switchyard {

/// @brief Opt-in trait for a user tensor type that is not a contiguous range.
///
/// Specialize it with a static `span(T&)` returning `std::span<E>` over the type's storage:
/// @code
/// template <> struct switchyard::buffer_traits<my::tensor> {
///   static std::span<float> span(my::tensor& t) { return {t.ptr(), t.numel()}; }
///   static std::span<const float> span(const my::tensor& t) { return {t.ptr(), t.numel()}; }
/// };
/// @endcode
/// An ADL-found free function `switchyard_as_span(x)` returning a span works as well.
template <class T>
struct buffer_traits;

namespace detail {

template <class T>
concept has_buffer_traits = requires(T& t) { buffer_traits<std::remove_const_t<T>>::span(t); };

template <class T>
concept has_adl_as_span = requires(T& t) { switchyard_as_span(t); };

template <class T>
concept contiguous_sized = std::ranges::contiguous_range<T&> && std::ranges::sized_range<T&>;

struct as_span_fn {
  template <class T>
    requires has_buffer_traits<T> || has_adl_as_span<T> || contiguous_sized<T>
  constexpr auto operator()(T& buffer) const {
    if constexpr (has_buffer_traits<T>) {
      return buffer_traits<std::remove_const_t<T>>::span(buffer);
    } else if constexpr (has_adl_as_span<T>) {
      return switchyard_as_span(buffer);
    } else {
      return std::span(std::ranges::data(buffer), std::ranges::size(buffer));
    }
  }
  template <class T, std::size_t N>
  constexpr std::span<T, std::dynamic_extent> operator()(std::span<T, N> view) const {
    return view;
  }
};

}  // namespace detail

/// @brief The elements of `buffer` as a `std::span`: contiguous ranges (`std::vector`,
/// `std::array`, C arrays, spans), types with a `buffer_traits` specialization, types with an
/// ADL `switchyard_as_span`, and xtensor containers through `switchyard/tensor/xtensor.hpp`.
inline constexpr detail::as_span_fn as_span{};

/// @brief The element type of a buffer, `const` when the buffer is read-only.
template <class B>
using buffer_element_t = typename decltype(as_span(std::declval<B&>()))::element_type;

/// @brief Element types that travel and reduce without serialization.
template <class T>
concept arithmetic = std::is_arithmetic_v<T> && !std::same_as<std::remove_cv_t<T>, bool>;

/// @brief A Buffer: `as_span(b)` yields a `std::span<E>` over contiguous arithmetic elements.
///
/// Required expressions, for `B& b`:
/// @code
/// std::span<E> s = switchyard::as_span(b);   // E arithmetic (const E for read-only buffers)
/// @endcode
template <class B>
concept buffer = requires(B& b) {
  { as_span(b) };
} && arithmetic<std::remove_const_t<buffer_element_t<B>>>;

/// @brief A Buffer that can be written (the in-place collectives need one).
template <class B>
concept mutable_buffer = buffer<B> && !std::is_const_v<buffer_element_t<B>>;

}  // namespace switchyard

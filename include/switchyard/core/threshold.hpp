// A count that configures a type (a trigger's epochs or steps, a consistency's staleness), fixed in
// the type or given at run time, and never mistaken for the other.
#pragma once

#include <cstddef>
#include <limits>

namespace switchyard {

/// @brief The template argument of a `threshold` given at run time, as `std::dynamic_extent` is for
/// a span's extent.
inline constexpr std::size_t dynamic_threshold = std::numeric_limits<std::size_t>::max();

/// @brief A count fixed in the type (`threshold<3>`, default-constructed) or, for
/// `threshold<dynamic_threshold>`, given to the constructor. A fixed threshold cannot be given a
/// value and a run-time one must be, so a type such as `trigger::after_epochs<3>` always says when
/// it fires, and `trigger::after_epochs{n}` deduces `after_epochs<dynamic_threshold>`, not a
/// default count that would then lie.
/// @code
/// struct after_batches : switchyard::threshold<N> { using switchyard::threshold<N>::threshold; };
/// @endcode
template <std::size_t N = dynamic_threshold>
class threshold {
 public:
  constexpr threshold() noexcept
    requires(N != dynamic_threshold)
  = default;
  constexpr explicit threshold(std::size_t value) noexcept
    requires(N == dynamic_threshold)
      : value_(value) {}

  /// The count.
  [[nodiscard]] constexpr std::size_t value() const noexcept { return value_; }

 private:
  std::size_t value_ = N;
};

}  // namespace switchyard

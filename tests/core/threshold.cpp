#include <switchyard/core/threshold.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <type_traits>

namespace sy = switchyard;

// A user type configured by a count, as the shipped triggers are. (Not in an unnamed namespace: g++
// 12 warns that a deduction guide there is "declared static but never defined".)
namespace threshold_test {

template <std::size_t N = sy::dynamic_threshold>
struct after_batches : sy::threshold<N> {
  using sy::threshold<N>::threshold;
};
after_batches(std::size_t) -> after_batches<sy::dynamic_threshold>;

}  // namespace threshold_test

using threshold_test::after_batches;

// Fixed in the type: no value can be given. At run time: one must be.
static_assert(std::is_default_constructible_v<sy::threshold<4>> && !std::is_constructible_v<sy::threshold<4>, std::size_t>);
static_assert(!std::is_default_constructible_v<sy::threshold<>> && std::is_constructible_v<sy::threshold<>, std::size_t>);
static_assert(std::is_same_v<decltype(after_batches{7}), after_batches<sy::dynamic_threshold>>);
static_assert(!std::is_constructible_v<after_batches<7>, std::size_t>);

TEST_CASE("threshold: the count comes from the type or from the constructor") {
  CHECK(sy::threshold<4>{}.value() == 4);
  CHECK(sy::threshold<>{9}.value() == 9);
  CHECK(after_batches<3>{}.value() == 3);
  CHECK(after_batches{7}.value() == 7);
}

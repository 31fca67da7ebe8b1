#include <switchyard/core/operations.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

using namespace switchyard;

struct concatenate_digits {
  int operator()(int a, int b) const { return a * 10 + b; }
};
template <>
struct switchyard::is_commutative<concatenate_digits> : std::false_type {};

static_assert(reduction<ops::sum, float> && reduction<concatenate_digits, int>);
static_assert(finalized_reduction<ops::average, double> && !finalized_reduction<ops::sum, double>);
static_assert(is_commutative_v<ops::max> && !is_commutative_v<concatenate_digits>);
// The safe default, as Boost.MPI's: a user's operation keeps rank order until it says it commutes.
struct plain_user_operation {
  int operator()(int a, int b) const { return a + b; }
};
static_assert(!is_commutative_v<plain_user_operation>);
static_assert(is_commutative_v<ops::sum> && is_commutative_v<ops::min> && is_commutative_v<ops::average>);

TEST_CASE("operations.builtin: sum, min, max and the average's final division") {
  CHECK(ops::sum{}(2.5, 4.0) == 6.5);
  CHECK(ops::min{}(-3, 7) == -3);
  CHECK(ops::max{}(-3, 7) == 7);
  CHECK(ops::average::finalize(7.0f, 2) == 3.5f);
  CHECK(ops::average::finalize(std::int32_t{7}, 2) == 3);
  CHECK(ops::sum{}(std::int8_t{100}, std::int8_t{20}) == std::int8_t{120});
  // The rank count does not fit the element type: no division by zero, no flipped sign.
  CHECK(ops::average::finalize(std::uint8_t{200}, 256) == 0);
  CHECK(ops::average::finalize(std::uint8_t{200}, 100) == 2);
  CHECK(ops::average::finalize(std::int8_t{100}, 128) == 0);
  CHECK(ops::average::finalize(std::int8_t{-100}, 50) == -2);
  CHECK(ops::average::finalize(std::uint64_t{1} << 63, 1 << 30) == std::uint64_t{1} << 33);
}

TEST_CASE("operations.finalize_all: the final step on every element, none for an operation without one") {
  std::vector<double> averaged{3.0, -6.0, 0.0};
  finalize_all<ops::average>(std::span<double>(averaged), 3);
  CHECK(averaged == std::vector<double>{1.0, -2.0, 0.0});
  std::vector<int> summed{3, -6, 0};
  finalize_all<ops::sum>(std::span<int>(summed), 3);
  CHECK(summed == std::vector<int>{3, -6, 0});
}

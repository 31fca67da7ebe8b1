// Tests of optim/momentum.hpp: heavy-ball and Nesterov updates against hand-computed values.
#include "switchyard/optim/momentum.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/core/floating_point.hpp"

namespace optim = switchyard::optim;

namespace {

// lr 0.1, mu 0.9, gradients 0.5, -1, 0.25 from p = 1.
std::vector<double> trajectory(bool nesterov) {
  optim::momentum<optim::constant, double> opt{1, 0.1, 0.9, nesterov};
  std::vector<double> p{1.0};
  std::vector<double> out;
  for (const double g : {0.5, -1.0, 0.25}) {
    opt.step(p, std::vector<double>{g});
    out.push_back(p[0]);
  }
  CHECK(opt.export_state().slots[0][0] == doctest::Approx(-0.245));  // v: 0.5, -0.55, -0.245
  return out;
}

}  // namespace

TEST_CASE("momentum.heavy_ball_by_hand") {
  // v = 0.5: p = 1 - 0.05; v = -0.55: p += 0.055; v = -0.245: p += 0.0245.
  const auto p = trajectory(false);
  CHECK(p[0] == doctest::Approx(0.95));
  CHECK(p[1] == doctest::Approx(1.005));
  CHECK(p[2] == doctest::Approx(1.0295));
}

TEST_CASE("momentum.nesterov_by_hand") {
  // p -= 0.1 (g + 0.9 v): 0.1 * 0.95, 0.1 * (-1 - 0.495), 0.1 * (0.25 - 0.2205).
  const auto p = trajectory(true);
  CHECK(p[0] == doctest::Approx(0.905));
  CHECK(p[1] == doctest::Approx(1.0545));
  CHECK(p[2] == doctest::Approx(1.05155));
}

TEST_CASE("momentum.deduction_and_checks") {
  optim::momentum opt{3, 0.01, 0.5, true};
  static_assert(std::is_same_v<decltype(opt), optim::momentum<optim::constant, float>>);
  CHECK(opt.nesterov());
  CHECK(opt.mu() == 0.5);
  CHECK_THROWS_AS(optim::momentum(3, 0.01, 1.0), switchyard::usage_error);
  CHECK_THROWS_AS(optim::momentum(3, 0.01, -0.1), switchyard::usage_error);
}

// A velocity whose gradient stays zero decays by mu each step: seeded subnormal, it stays
// subnormal unless the thread flushes subnormals as the trainer does.
TEST_CASE_TEMPLATE("momentum.subnormal_velocity: none is left after one step under flush_subnormals_scope", T, float,
                   double) {
  constexpr std::size_t size = 19;
  const T subnormal = std::numeric_limits<T>::denorm_min() * T(1000);
  REQUIRE(std::fpclassify(subnormal) == FP_SUBNORMAL);
  for (const bool nesterov : {false, true}) {
    CAPTURE(nesterov);
    const auto seeded = [&] {
      optim::momentum<optim::constant, T> opt{size, 0.1, 0.9, nesterov};
      opt.import_state({10, size, {std::vector<T>(size, subnormal)}, 10});
      return opt;
    };
    const auto subnormal_values = [](const optim::optimizer_state<T>& state) {
      std::size_t count = 0;
      for (const T value : state.slots.front()) count += std::fpclassify(value) == FP_SUBNORMAL ? 1 : 0;
      return count;
    };
    std::vector<T> p(size, T(0.5));
    const std::vector<T> zero(size, T(0));
    auto kept = seeded();
    kept.step(p, zero);
    CHECK(subnormal_values(kept.export_state()) == size);
    if constexpr (switchyard::can_flush_subnormals) {
      auto flushed = seeded();
      {
        const switchyard::flush_subnormals_scope flush;
        flushed.step(p, zero);
      }
      CHECK(subnormal_values(flushed.export_state()) == 0);
    }
  }
}

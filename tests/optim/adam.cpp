// Tests of optim/adam.hpp: three steps against values computed by hand from the update rule,
// in double and in float.
#include "switchyard/optim/adam.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/core/floating_point.hpp"

namespace optim = switchyard::optim;

// lr 0.1, betas 0.9 / 0.999, eps 1e-8, gradients 0.5, -1, 0.25 from p = 1:
// t = 1: m = 0.05,    v = 0.00025,     p = 1 - 0.1 * 0.5 / (0.5 + 1e-8)        = 0.900000002
// t = 2: m = -0.055,  v = 0.00124975,  m^ = -0.2894737, sqrt(v^) = 0.7906880   -> 0.9366103542
// t = 3: m = -0.0245, v = 0.00131100025, m^ = -0.0904059, sqrt(v^) = 0.6613797 -> 0.9502794203
TEST_CASE_TEMPLATE("adam.three_steps_by_hand", T, float, double) {
  optim::adam<optim::constant, T> opt{1, 0.1};
  std::vector<T> p{T{1}};
  const double expected[] = {0.900000002, 0.9366103542405654, 0.9502794203389762};
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-12;
  int t = 0;
  for (const T g : {T(0.5), T(-1.0), T(0.25)}) {
    opt.step(p, std::vector<T>{g});
    CHECK(std::abs(static_cast<double>(p[0]) - expected[t++]) < tolerance);
  }
  const auto& state = opt.export_state();
  CHECK(state.step == 3);
  CHECK(static_cast<double>(state.slots[0][0]) == doctest::Approx(-0.0245));
  CHECK(static_cast<double>(state.slots[1][0]) == doctest::Approx(0.00131100025));
}

TEST_CASE("adam.deduction_and_checks") {
  optim::adam opt{2, 1e-3, 0.8, 0.99, 1e-6};
  static_assert(std::is_same_v<decltype(opt), optim::adam<optim::constant, float>>);
  CHECK(opt.beta1() == 0.8);
  CHECK(opt.beta2() == 0.99);
  CHECK(opt.epsilon() == 1e-6);
  CHECK_THROWS_AS(optim::adam(2, 1e-3, 1.0), switchyard::usage_error);
  CHECK_THROWS_AS(optim::adam(2, 1e-3, 0.9, 0.999, 0.0), switchyard::usage_error);
}

// Every element takes the same path whether the update runs vectorized (xsimd) or scalar (the
// tail that does not fill a vector): the bits must equal the formula's, step after step.
TEST_CASE_TEMPLATE("adam.vectorized_update_matches_the_scalar_formula", T, float, double) {
  const std::size_t n = 37;  // several vectors and a tail for any vector width
  optim::adam<optim::constant, T> opt{n, 0.01};
  std::vector<T> p(n), g(n), m(n, T{0}), v(n, T{0}), expected(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = expected[i] = static_cast<T>(0.1 * static_cast<double>(i) - 1.7);
  for (int t = 1; t <= 5; ++t) {
    for (std::size_t i = 0; i < n; ++i) g[i] = static_cast<T>(std::sin(static_cast<double>(i * 7 + t)));
    opt.step(p, g);
    const T step_size = static_cast<T>(0.01 / (1.0 - std::pow(0.9, t)));
    const T root_correction = static_cast<T>(1.0 / std::sqrt(1.0 - std::pow(0.999, t)));
    const T b1 = static_cast<T>(0.9), b2 = static_cast<T>(0.999), epsilon = static_cast<T>(1e-8);
    for (std::size_t i = 0; i < n; ++i) {
      m[i] = b1 * m[i] + (T{1} - b1) * g[i];
      v[i] = b2 * v[i] + (T{1} - b2) * g[i] * g[i];
      expected[i] -= step_size * m[i] / (std::sqrt(v[i]) * root_correction + epsilon);
    }
    CHECK(p == expected);
  }
}

// Zero gradients (a border pixel, a dead unit) leave Adam's moments decaying geometrically: seeded
// subnormal, they stay subnormal, and every step pays for them on Intel cores, unless the thread
// flushes subnormals as the trainer does.
TEST_CASE_TEMPLATE("adam.subnormal_moments: none are left after one step under flush_subnormals_scope", T, float,
                   double) {
  constexpr std::size_t size = 37;  // the vector part and the scalar tail of the update
  const T subnormal = std::numeric_limits<T>::denorm_min() * T(1000);
  REQUIRE(std::fpclassify(subnormal) == FP_SUBNORMAL);
  const auto seeded = [&] {
    optim::adam<optim::constant, T> opt{size, 1e-3};
    opt.import_state({10, size, {std::vector<T>(size, subnormal), std::vector<T>(size, subnormal)}, 10});
    return opt;
  };
  const auto subnormal_moments = [](const optim::optimizer_state<T>& state) {
    std::size_t count = 0;
    for (const auto& slot : state.slots) {
      for (const T value : slot) count += std::fpclassify(value) == FP_SUBNORMAL ? 1 : 0;
    }
    return count;
  };
  std::vector<T> p(size, T(0.5));
  const std::vector<T> zero(size, T(0));
  auto kept = seeded();
  kept.step(p, zero);
  CHECK(subnormal_moments(kept.export_state()) == 2 * size);  // what the guard is for
  if constexpr (switchyard::can_flush_subnormals) {
    auto flushed = seeded();
    {
      const switchyard::flush_subnormals_scope flush;
      flushed.step(p, zero);
    }
    CHECK(subnormal_moments(flushed.export_state()) == 0);
    CHECK(p == std::vector<T>(size, T(0.5)));
  }
}

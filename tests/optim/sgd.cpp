// Tests of optim/sgd.hpp: updates against hand-computed values, schedule use, deduction.
#include "switchyard/optim/sgd.hpp"

#include <doctest/doctest.h>

#include <type_traits>
#include <vector>

#include "switchyard/optim/step_decay.hpp"

namespace optim = switchyard::optim;

TEST_CASE("sgd.three_steps_by_hand") {
  optim::sgd opt{2, 0.1};
  static_assert(std::is_same_v<decltype(opt), optim::sgd<optim::constant, float>>);
  std::vector<float> p{1.0f, -2.0f};
  opt.step(p, std::vector<float>{0.5f, 1.0f});   // p = (0.95, -2.1)
  opt.step(p, std::vector<float>{-1.0f, 0.0f});  // p = (1.05, -2.1)
  opt.step(p, std::vector<float>{0.25f, -3.0f}); // p = (1.025, -1.8)
  CHECK(p[0] == doctest::Approx(1.025));
  CHECK(p[1] == doctest::Approx(-1.8));
  CHECK(opt.export_state().step == 3);
  CHECK(opt.export_state().slots.empty());
}

TEST_CASE("sgd.follows_its_schedule") {
  optim::sgd<optim::step_decay, double> opt{1, optim::step_decay{1.0, 0.5, 2}};
  std::vector<double> p{0.0};
  const std::vector<double> g{1.0};
  for (int s = 0; s < 5; ++s) opt.step(p, g);  // rates 1, 1, 0.5, 0.5, 0.25
  CHECK(p[0] == -3.25);
  CHECK(opt.learning_rate() == 0.25);
}

// Tests of optim/any_optimizer.hpp: holding SGD, momentum or Adam it steps to the bit as they do,
// and forwards the state, the switch's rate changes, the stride and a checkpoint's adjustments; a
// user optimizer without the optional members gets the documented defaults; copies are deep.
#include "switchyard/optim/any_optimizer.hpp"

#include <doctest/doctest.h>

#include "gradients.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/optim/adam.hpp"
#include "switchyard/optim/cosine.hpp"
#include "switchyard/optim/momentum.hpp"
#include "switchyard/optim/sgd.hpp"
#include "switchyard/optim/warmup.hpp"

namespace optim = switchyard::optim;

namespace {

using test_gradients::gradient;

using schedule = optim::warmup<optim::cosine>;
const schedule ramp{2, optim::cosine{0.05, 40}};
constexpr std::size_t n = 13;

// Steps `direct` and an any_optimizer holding a copy of it side by side through everything a
// trainer and a strategy switch do to an optimizer; both must end with the same bits.
template <class O>
void check_same_as(O direct) {
  optim::any_optimizer<> erased{direct};
  std::vector<float> p(n, 0.5f);
  std::vector<float> q = p;
  const auto both = [&](auto&& act) {
    act(direct);
    act(erased);
  };
  both([](auto& o) { o.set_schedule_stride(3); });
  for (int s = 0; s < 30; ++s) {
    const std::vector<float> g = gradient(n, s);
    direct.step(p, g);
    erased.step(q, g);
    if (s == 9) both([](auto& o) { o.scale_learning_rate(0.25); });
    if (s == 14) both([](auto& o) { o.rewarm(5); });
    if (s == 19) {
      // What a checkpoint does: state and adjustments out, then back in.
      const optim::optimizer_state<float> state = erased.export_state();
      const optim::rate_adjustments adjustments = erased.export_adjustments();
      CHECK(adjustments == direct.export_adjustments());
      erased.import_state(state);
      erased.import_adjustments(adjustments);
    }
  }
  CHECK(p == q);
  CHECK(erased.export_state() == direct.export_state());
  CHECK(erased.export_adjustments() == direct.export_adjustments());
  REQUIRE(erased.target<O>() != nullptr);
  CHECK(erased.target<O>()->export_state() == direct.export_state());
}

// A user optimizer with only what `switchable` asks for, returning its state by value.
struct plain {
  using value_type = float;
  optim::optimizer_state<float> state{0, n, {}};
  double rate = 0.1;
  void step(std::span<float> p, std::span<const float> g) {
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= static_cast<float>(rate) * g[i];
    ++state.step;
  }
  [[nodiscard]] optim::optimizer_state<float> export_state() const { return state; }
  void import_state(optim::optimizer_state<float> s) { state = std::move(s); }
  void scale_learning_rate(double factor) { rate *= factor; }
  void rewarm(std::uint64_t) {}
};

}  // namespace

TEST_CASE("any_optimizer.same_bits: holding sgd, momentum or adam it steps, switches and resumes as they do") {
  SUBCASE("sgd") { check_same_as(optim::sgd<schedule>{n, ramp}); }
  SUBCASE("momentum") { check_same_as(optim::momentum<schedule>{n, ramp, 0.9, true}); }
  SUBCASE("adam") { check_same_as(optim::adam<schedule>{n, ramp}); }
}

TEST_CASE("any_optimizer.concepts: it is a switchable optimizer and holds only optimizers of its element type") {
  static_assert(optim::switchable<optim::any_optimizer<>>);
  static_assert(optim::switchable<optim::any_optimizer<double>>);
  static_assert(std::is_convertible_v<optim::sgd<>, optim::any_optimizer<>>);
  static_assert(!std::is_convertible_v<optim::sgd<optim::constant, double>, optim::any_optimizer<>>);
  static_assert(!std::is_convertible_v<int, optim::any_optimizer<>>);
}

TEST_CASE("any_optimizer.copies: a copy has its own state; assignment replaces the held optimizer") {
  optim::any_optimizer<> a{optim::momentum{n, 0.1, 0.9}};
  std::vector<float> p(n, 1.0f);
  a.step(p, gradient(n, 0));
  optim::any_optimizer<> b = a;
  std::vector<float> q = p;
  b.step(q, gradient(n, 1));
  CHECK(a.export_state().step == 1);
  CHECK(b.export_state().step == 2);
  CHECK(a.export_state().slots != b.export_state().slots);

  a = b;
  CHECK(a.export_state() == b.export_state());
  a = optim::any_optimizer<>{optim::sgd{n, 0.1}};
  CHECK(a.target<optim::sgd<>>() != nullptr);
  CHECK(a.target<optim::momentum<>>() == nullptr);
  CHECK(a.export_state().slots.empty());
}

TEST_CASE("any_optimizer.defaults: an optimizer without the optional members ignores the stride and keeps "
          "only default adjustments") {
  optim::any_optimizer<> erased{plain{}};
  erased.set_schedule_stride(4);
  erased.scale_learning_rate(0.5);
  CHECK(erased.target<plain>()->rate == doctest::Approx(0.05));
  CHECK(erased.export_adjustments() == optim::rate_adjustments{});
  erased.import_adjustments(optim::rate_adjustments{});

  std::vector<float> p(n, 1.0f);
  erased.step(p, std::vector<float>(n, 1.0f));
  CHECK(p[0] == doctest::Approx(0.95f));
  CHECK(erased.export_state().step == 1);  // by value from the held optimizer, by reference here

  try {
    erased.import_adjustments(optim::rate_adjustments{.learning_rate_scale = 0.5, .rewarm_from = 0, .rewarm_steps = 0});
    FAIL("a learning-rate scale the held optimizer cannot keep was accepted");
  } catch (const switchyard::usage_error& e) {
    const std::string what = e.what();
    CHECK(what.find("any_optimizer") != std::string::npos);
    CHECK(what.find("scale of 0.5") != std::string::npos);
  }
}

TEST_CASE("any_optimizer.errors: the held optimizer's own checks still apply") {
  optim::any_optimizer<> erased{optim::adam{n, 0.01}};
  std::vector<float> p(n + 1, 0.0f);
  CHECK_THROWS_AS(erased.step(p, gradient(n + 1, 0)), switchyard::usage_error);
  CHECK_THROWS_AS(erased.import_state(optim::optimizer_state<float>{0, n, {}}), switchyard::usage_error);
  CHECK_THROWS_AS(erased.scale_learning_rate(0.0), switchyard::usage_error);
}

// Tests of optim/optimizer.hpp: the concept over shipped and user optimizers, state import
// checks, and the contract the parameter server relies on: stepping shards with sliced state
// equals stepping the whole, and an imported state continues exactly.
#include "switchyard/optim/optimizer.hpp"

#include <doctest/doctest.h>

#include "gradients.hpp"

#include <span>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/optim/adam.hpp"
#include "switchyard/optim/cosine.hpp"
#include "switchyard/optim/momentum.hpp"
#include "switchyard/optim/sgd.hpp"
#include "switchyard/optim/step_decay.hpp"
#include "switchyard/optim/warmup.hpp"

namespace optim = switchyard::optim;

namespace {

/// A user optimizer: sign descent with no slots.
struct sign_descent {
  using value_type = float;
  optim::optimizer_state<float> state;
  void step(std::span<float> p, std::span<const float> g) {
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= g[i] > 0 ? 0.01f : -0.01f;
    ++state.step;
  }
  [[nodiscard]] const optim::optimizer_state<float>& export_state() const { return state; }
  void import_state(optim::optimizer_state<float> s) { state = std::move(s); }
};

struct no_state {
  using value_type = float;
  void step(std::span<float>, std::span<const float>) {}
};

using test_gradients::gradient;

using schedule = optim::warmup<optim::cosine>;
const schedule ramp{2, optim::cosine{0.05, 10}};

template <class O>
O make(std::size_t n);
template <>
optim::sgd<schedule> make(std::size_t n) { return {n, ramp}; }
template <>
optim::momentum<schedule> make(std::size_t n) { return {n, ramp, 0.9, true}; }
template <>
optim::adam<schedule> make(std::size_t n) { return {n, ramp}; }

}  // namespace

TEST_CASE("optimizer.concept_accepts_shipped_and_user_optimizers") {
  static_assert(optim::optimizer<optim::sgd<>> && optim::optimizer<optim::sgd<optim::constant, double>>);
  static_assert(optim::optimizer<optim::momentum<>> && optim::optimizer<optim::adam<schedule>>);
  static_assert(optim::optimizer<sign_descent>);
  static_assert(!optim::optimizer<no_state>);
  CHECK(optim::optimizer<sign_descent>);
}

TEST_CASE_TEMPLATE("optimizer.sharded_steps_equal_whole_steps", O, optim::sgd<schedule>,
                   optim::momentum<schedule>, optim::adam<schedule>) {
  constexpr std::size_t n = 23;
  std::vector<float> whole_params(n, 1.0f);
  O whole = make<O>(n);
  for (int s = 0; s < 2; ++s) whole.step(whole_params, gradient(n, s));

  // Shards [0, 9) and [9, 23) continue from the whole's state, each with its slice.
  std::vector<float> sharded_params = whole_params;
  O left = make<O>(0);
  O right = make<O>(0);
  left.import_state(whole.export_state().slice(0, 9));
  right.import_state(whole.export_state().slice(9, n - 9));
  for (int s = 2; s < 5; ++s) {
    const std::vector<float> g = gradient(n, s);
    whole.step(whole_params, g);
    left.step(std::span(sharded_params).first(9), std::span(g).first(9));
    right.step(std::span(sharded_params).subspan(9), std::span(g).subspan(9));
  }
  CHECK(sharded_params == whole_params);  // bitwise
  const std::vector<optim::optimizer_state<float>> shards{left.export_state(), right.export_state()};
  CHECK(optim::optimizer_state<float>::assemble(shards) == whole.export_state());
}

TEST_CASE_TEMPLATE("optimizer.imported_state_continues_exactly", O, optim::sgd<schedule>,
                   optim::momentum<schedule>, optim::adam<schedule>) {
  constexpr std::size_t n = 8;
  std::vector<float> reference(n, 0.5f);
  std::vector<float> resumed(n, 0.5f);
  O straight = make<O>(n);
  O first = make<O>(n);
  for (int s = 0; s < 3; ++s) {
    straight.step(reference, gradient(n, s));
    first.step(resumed, gradient(n, s));
  }
  O second = make<O>(n);
  second.import_state(first.export_state());
  CHECK(second.learning_rate() == straight.learning_rate());
  for (int s = 3; s < 6; ++s) {
    straight.step(reference, gradient(n, s));
    second.step(resumed, gradient(n, s));
  }
  CHECK(resumed == reference);
  CHECK(second.export_state() == straight.export_state());
}

TEST_CASE("optimizer.import_and_step_check_sizes") {
  optim::adam opt{4, 0.1};
  CHECK_THROWS_AS(opt.import_state({0, 4, {{0, 0, 0, 0}}}), switchyard::usage_error);  // 1 slot
  CHECK_THROWS_AS(opt.import_state({0, 4, {{0, 0, 0, 0}, {0, 0, 0}}}), switchyard::usage_error);
  opt.import_state({0, 3, {{0, 0, 0}, {0, 0, 0}}});
  CHECK(opt.size() == 3);
  std::vector<float> p(4), g(4);
  CHECK_THROWS_WITH(opt.step(p, g), doctest::Contains("4 parameters and 4 gradients for a state of 3"));
}

TEST_CASE("optimizer.scale_learning_rate: later rates are scaled, impossible factors refused") {
  optim::sgd opt{2, 0.1};
  opt.scale_learning_rate(0.5);
  opt.scale_learning_rate(0.5);
  CHECK(opt.learning_rate() == doctest::Approx(0.025));
  CHECK(opt.learning_rate_scale() == doctest::Approx(0.25));
  std::vector<float> p{1.0f, 1.0f};
  opt.step(p, std::vector<float>{1.0f, 2.0f});
  CHECK(p[0] == doctest::Approx(0.975));
  CHECK(p[1] == doctest::Approx(0.95));
  CHECK_THROWS_WITH_AS(opt.scale_learning_rate(0.0), doctest::Contains("must be > 0, got 0"), switchyard::usage_error);
  CHECK_THROWS_AS(opt.scale_learning_rate(-2.0), switchyard::usage_error);
}

TEST_CASE("optimizer.rewarm: the rate ramps up linearly again from the current step") {
  optim::sgd opt{1, 0.4};
  std::vector<float> p{0.0f};
  const std::vector<float> g{1.0f};
  opt.step(p, g);  // step 0 at 0.4
  opt.rewarm(4);
  const double expected[] = {0.1, 0.2, 0.3, 0.4, 0.4};
  for (double rate : expected) {
    CHECK(opt.learning_rate() == doctest::Approx(rate));
    opt.step(p, g);
  }
  CHECK(p[0] == doctest::Approx(-(0.4 + 0.1 + 0.2 + 0.3 + 0.4 + 0.4)));
}

TEST_CASE("optimizer.set_schedule_stride: the schedule counts batches, however many one step trains") {
  const optim::step_decay decay{0.8, 0.5, 6};  // halves every 6 batches
  optim::sgd strided{1, decay};
  optim::sgd single{1, decay};
  strided.set_schedule_stride(3);
  CHECK(strided.schedule_stride() == 3);
  std::vector<float> p{0.0f};
  const std::vector<float> g{1.0f};
  // Two steps of 3 batches reach the schedule's first decay, as six steps of 1 batch do.
  for (int k = 0; k < 2; ++k) strided.step(p, g);
  for (int k = 0; k < 6; ++k) single.step(p, g);
  CHECK(strided.export_state().clock == 6);
  CHECK(strided.export_state().step == 2);
  CHECK(strided.learning_rate() == doctest::Approx(0.4));
  CHECK(single.learning_rate() == doctest::Approx(0.4));
  // The clock travels with the state: an importer continues where the exporter's schedule was.
  optim::sgd importer{1, decay};
  importer.import_state(strided.export_state());
  CHECK(importer.learning_rate() == doctest::Approx(0.4));
  CHECK_THROWS_WITH_AS(strided.set_schedule_stride(0), doctest::Contains("at least 1 batch"), switchyard::usage_error);
}

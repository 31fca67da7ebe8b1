// The minimal optimizer of docs/extending.md and docs/optimizers.md, kept here verbatim so that
// tests/optim/sign_descent.cpp proves the pages' code works where the library uses optimizers.
#pragma once

#include <switchyard/optim/optimizer.hpp>
#include <switchyard/optim/optimizer_state.hpp>

#include <cstddef>
#include <span>
#include <utility>

// p -= 0.01 * sign(g): no slots, so the state is the step count, the schedule's clock and the size.
struct sign_descent {
  using value_type = float;
  switchyard::optim::optimizer_state<float> state;

  explicit sign_descent(std::size_t parameters) : state{0, parameters, {}, 0} {}
  void step(std::span<float> p, std::span<const float> g) {
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= 0.01f * static_cast<float>((g[i] > 0) - (g[i] < 0));
    ++state.step;
    ++state.clock;  // batches trained: one per update unless a strategy sets a stride
  }
  const switchyard::optim::optimizer_state<float>& export_state() const { return state; }
  void import_state(switchyard::optim::optimizer_state<float> s) { state = std::move(s); }
};

static_assert(switchyard::optim::optimizer<sign_descent>);

// An optimizer without export_state() and import_state() does not satisfy optim::optimizer.
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>

#include "linear_model.hpp"

#include <cstddef>
#include <span>
#include <vector>

struct stateless_sgd {
  using value_type = float;
  void step(std::span<float> p, std::span<const float> g) {
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= 0.1f * g[i];
  }
};

int main() {
  linear_model<> model;
  stateless_sgd optimizer;
  switchyard::train::trainer trainer{model, optimizer, switchyard::strategy::all_reduce<>{}};
  return trainer.options().epochs > 0 ? 0 : 1;
}

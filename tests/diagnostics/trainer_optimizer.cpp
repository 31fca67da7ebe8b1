// An optimizer without export_state() and import_state() does not satisfy optim::optimizer.
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>

#include <cstddef>
#include <span>
#include <vector>

struct linear_model {
  std::vector<float> params = std::vector<float>(4), grads = std::vector<float>(4);
  std::span<float> parameters() { return params; }
  std::span<float> gradients() { return grads; }
  double forward_backward(const switchyard::data::batch_view&) { return 0.0; }
  switchyard::nn::evaluation evaluate(const switchyard::data::batch_view&) { return {}; }
};

struct stateless_sgd {
  using value_type = float;
  void step(std::span<float> p, std::span<const float> g) {
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= 0.1f * g[i];
  }
};

int main() {
  linear_model model;
  stateless_sgd optimizer;
  switchyard::train::trainer trainer{model, optimizer, switchyard::strategy::all_reduce<>{}};
  return trainer.options().epochs > 0 ? 0 : 1;
}

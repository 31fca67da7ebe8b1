// A model over double trained by an optimizer over float (optim::sgd's default element type).
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>

#include <span>
#include <vector>

struct double_model {
  std::vector<double> params = std::vector<double>(4), grads = std::vector<double>(4);
  std::span<double> parameters() { return params; }
  std::span<double> gradients() { return grads; }
  double forward_backward(const switchyard::data::batch_view&) { return 0.0; }
  switchyard::nn::evaluation evaluate(const switchyard::data::batch_view&) { return {}; }
};

int main() {
  double_model model;
  switchyard::optim::sgd optimizer{4, 0.1};
  switchyard::train::trainer trainer{model, optimizer, switchyard::strategy::all_reduce<>{}};
  return trainer.options().epochs > 0 ? 0 : 1;
}

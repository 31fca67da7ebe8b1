// A model whose gradients() is missing does not satisfy nn::model.
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>

#include <span>
#include <vector>

struct no_gradients {
  std::vector<float> params = std::vector<float>(4);
  std::span<float> parameters() { return params; }
  double forward_backward(const switchyard::data::batch_view&) { return 0.0; }
  switchyard::nn::evaluation evaluate(const switchyard::data::batch_view&) { return {}; }
};

int main() {
  no_gradients model;
  switchyard::optim::sgd optimizer{4, 0.1};
  switchyard::train::trainer trainer{model, optimizer, switchyard::strategy::all_reduce<>{}};
  return trainer.options().epochs > 0 ? 0 : 1;
}

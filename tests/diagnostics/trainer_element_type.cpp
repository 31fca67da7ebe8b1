// A model over double trained by an optimizer over float (optim::sgd's default element type).
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>

#include "linear_model.hpp"

#include <span>
#include <vector>

int main() {
  linear_model<double> model;
  switchyard::optim::sgd optimizer{4, 0.1};
  switchyard::train::trainer trainer{model, optimizer, switchyard::strategy::all_reduce<>{}};
  return trainer.options().epochs > 0 ? 0 : 1;
}

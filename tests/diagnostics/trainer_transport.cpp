// trainer::fit refuses a transport that is not one with the transport sentence.
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

struct linear_model {
  std::vector<float> params = std::vector<float>(4), grads = std::vector<float>(4);
  std::span<float> parameters() { return params; }
  std::span<float> gradients() { return grads; }
  double forward_backward(const switchyard::data::batch_view&) { return 0.0; }
  switchyard::nn::evaluation evaluate(const switchyard::data::batch_view&) { return {}; }
};

struct only_a_rank {  // no size(), no messages
  int rank() const { return 0; }
};

int main() {
  namespace sy = switchyard;
  linear_model model;
  sy::optim::sgd optimizer{4, 0.1};
  sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}};
  const auto data = std::make_shared<const sy::data::dataset>(std::vector<std::uint8_t>(4), std::vector<std::uint8_t>(1), 2, 2);
  only_a_rank t;
  trainer.fit(t, data, *data);
}

// trainer::fit refuses a transport that is not one with the transport sentence.
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>

#include "linear_model.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

struct only_a_rank {  // no size(), no messages
  int rank() const { return 0; }
};

int main() {
  namespace sy = switchyard;
  linear_model<> model;
  sy::optim::sgd optimizer{4, 0.1};
  sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}};
  const auto data = std::make_shared<const sy::data::dataset>(std::vector<std::uint8_t>(4), std::vector<std::uint8_t>(1), 2, 2);
  only_a_rank t;
  trainer.fit(t, data, *data);
}

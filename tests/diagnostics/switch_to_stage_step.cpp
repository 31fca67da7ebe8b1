// A stage of switch_to whose step() does not take this transport, model and optimizer is refused
// when the switch sets up, with one sentence.
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>

#include <span>
#include <string_view>
#include <vector>

struct arenas {
  std::vector<float> params = std::vector<float>(4), grads = std::vector<float>(4);
  std::span<float> parameters() { return params; }
  std::span<float> gradients() { return grads; }
};

struct steps_nothing {
  std::string_view name() const { return "nothing"; }
  void step() {}
};

int main() {
  namespace sy = switchyard;
  sy::transport::run_inproc(1, [](sy::transport::inproc& t) {
    arenas model;
    sy::optim::sgd optimizer{4, 0.1};
    sy::strategy::switch_to sw{sy::strategy::all_reduce<>{}, steps_nothing{}, sy::trigger::after_epochs<1>{}};
    sw.setup(t, model, optimizer);
  });
}

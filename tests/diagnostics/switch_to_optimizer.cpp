// An optimizer without scale_learning_rate() and rewarm() cannot serve under switch_to, whose
// options call them at the switch (optim::switchable).
#include <switchyard/optim/optimizer_state.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

struct arenas {
  std::vector<float> params = std::vector<float>(4), grads = std::vector<float>(4);
  std::span<float> parameters() { return params; }
  std::span<float> gradients() { return grads; }
};

struct plain_sgd {
  using value_type = float;
  switchyard::optim::optimizer_state<float> state{0, 4, {}, 0};
  void step(std::span<float> p, std::span<const float> g) {
    for (std::size_t i = 0; i < p.size(); ++i) p[i] -= 0.1f * g[i];
  }
  const switchyard::optim::optimizer_state<float>& export_state() const { return state; }
  void import_state(switchyard::optim::optimizer_state<float> s) { state = std::move(s); }
};

int main() {
  namespace sy = switchyard;
  sy::transport::run_inproc(1, [](sy::transport::inproc& t) {
    arenas model;
    plain_sgd optimizer;
    sy::strategy::switch_to sw{sy::strategy::all_reduce<>{}, sy::strategy::all_reduce<>{}, sy::trigger::after_epochs<1>{}};
    sy::train::epoch_record record;
    record.epoch = 1;
    sw.after_epoch(t, model, optimizer, record);
  });
}

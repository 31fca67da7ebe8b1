// A strategy without step() is refused by trainer::fit, which names the missing member.
#include <switchyard/train/trainer.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/transport/inproc.hpp>

#include "linear_model.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

struct only_a_name {
  std::string_view name() const { return "nameless"; }
};

int main() {
  namespace sy = switchyard;
  sy::transport::run_inproc(1, [](sy::transport::inproc& t) {
    linear_model<> model;
    sy::optim::sgd optimizer{4, 0.1};
    sy::train::trainer trainer{model, optimizer, only_a_name{}};
    const auto data = std::make_shared<const sy::data::dataset>(std::vector<std::uint8_t>(4), std::vector<std::uint8_t>(1), 2, 2);
    trainer.fit(t, data, *data);
  });
}

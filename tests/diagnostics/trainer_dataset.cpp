// A data set given to trainer::fit that misses a member of data::labelled_dataset is refused with
// one sentence naming the member (here label(i)).
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>

#include "linear_model.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

struct unlabelled {
  std::vector<std::uint8_t> pixels = std::vector<std::uint8_t>(64);
  std::size_t size() const { return 16; }
  std::size_t rows() const { return 2; }
  std::size_t cols() const { return 2; }
  std::span<const std::uint8_t> image(std::size_t i) const { return std::span(pixels).subspan(4 * i, 4); }
};

int main() {
  namespace sy = switchyard;
  const auto data = std::make_shared<const unlabelled>();
  sy::transport::run_inproc(1, [&](sy::transport::inproc& t) {
    linear_model<> model;
    sy::optim::sgd optimizer{4, 0.1};
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}};
    trainer.fit(t, data, *data);
  });
}

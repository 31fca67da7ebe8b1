// The Strategy concept: a user strategy that satisfies it, and what a missing piece looks like.
#include <switchyard/train/strategy.hpp>

#include <switchyard/optim/sgd.hpp>
#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace sy = switchyard;

namespace {

struct arenas {
  std::vector<float> params = std::vector<float>(3);
  std::vector<float> grads = std::vector<float>(3);
  std::span<float> parameters() { return params; }
  std::span<float> gradients() { return grads; }
};

// Every rank trains alone and never communicates: the simplest strategy there is.
struct independent {
  std::string_view name() const { return "independent"; }
  void setup(sy::transport::inproc&, arenas&, sy::optim::sgd<>&) {}
  std::size_t worker_count(const sy::transport::inproc&) const { return 1; }
  std::optional<std::size_t> worker_index(const sy::transport::inproc&) const { return 0; }
  sy::train::step_outcome step(sy::transport::inproc&, arenas& m, sy::optim::sgd<>& o) {
    o.step(m.parameters(), m.gradients());
    return {};
  }
  void finish(sy::transport::inproc&, arenas&, sy::optim::sgd<>&) {}
};

struct without_finish {
  std::string_view name() const { return "incomplete"; }
  void setup(sy::transport::inproc&, arenas&, sy::optim::sgd<>&) {}
  std::size_t worker_count(const sy::transport::inproc&) const { return 1; }
  std::optional<std::size_t> worker_index(const sy::transport::inproc&) const { return 0; }
  sy::train::step_outcome step(sy::transport::inproc&, arenas&, sy::optim::sgd<>&) { return {}; }
};

}  // namespace

static_assert(sy::train::strategy<independent, arenas, sy::optim::sgd<>, sy::transport::inproc>);
static_assert(!sy::train::strategy<without_finish, arenas, sy::optim::sgd<>, sy::transport::inproc>);

TEST_CASE("strategy.concept: a user strategy steps the optimizer it is given") {
  arenas model;
  model.grads = {1, 2, 3};
  sy::optim::sgd optimizer{3, 0.5};
  independent s;
  sy::transport::run_inproc(1, [&](sy::transport::inproc& t) { s.step(t, model, optimizer); });
  CHECK(model.params == std::vector<float>{-0.5f, -1.0f, -1.5f});
}

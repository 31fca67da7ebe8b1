// strategy/replicas.hpp: one rank's parameters and optimizer state reach every rank, and checked
// mode tells replicas that differ, naming the ranks.
#include <switchyard/strategy/replicas.hpp>

#include <switchyard/optim/adam.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sy = switchyard;

namespace {

// Arenas of an odd length, different on every rank.
struct arenas {
  explicit arenas(int rank) : p(1001, static_cast<float>(rank) + 0.5f), g(1001, 0.25f * static_cast<float>(rank + 1)) {}
  std::vector<float> p, g;
  std::span<float> parameters() { return p; }
  std::span<float> gradients() { return g; }
};

}  // namespace

TEST_CASE("replicas.replicate_training_state: every rank ends with the root's parameters and optimizer state") {
  for (const int ranks : {1, 2, 3, 4}) {
    for (const int root : {0, ranks - 1}) {
      CAPTURE(ranks);
      CAPTURE(root);
      const auto fingerprints = sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
        arenas model(t.rank());
        sy::optim::adam optimizer{model.p.size(), 0.01};
        for (int s = 0; s <= t.rank(); ++s) optimizer.step(model.parameters(), model.gradients());  // rank r: r + 1 steps
        const std::uint64_t before = sy::strategy::training_state_fingerprint(model, optimizer);
        sy::strategy::replicate_training_state(t, model, optimizer, root);
        CHECK(optimizer.export_state().step == static_cast<std::uint64_t>(root + 1));
        CHECK(optimizer.export_state().size == model.p.size());
        sy::strategy::verify_replicas(t, model, optimizer, "in the test");
        return std::pair{before, sy::strategy::training_state_fingerprint(model, optimizer)};
      });
      for (const auto& [before, after] : fingerprints) CHECK(after == fingerprints[static_cast<std::size_t>(root)].first);
    }
  }
}

TEST_CASE("replicas.verify_replicas: differing replicas are refused on every rank, naming the ranks") {
  const auto outcome = sy::transport::run_inproc(4, [](sy::transport::inproc& t) {
    arenas model(t.rank() == 2 ? 7 : 0);  // rank 2 holds other parameters
    sy::optim::adam optimizer{model.p.size(), 0.01};
    try {
      sy::strategy::verify_replicas(t, model, optimizer, "after the test's switch");
    } catch (const sy::usage_error& e) {
      return std::string(e.what());
    }
    return std::string();
  });
  for (const std::string& what : outcome) {
    CHECK(what.find("replicas differ after the test's switch: rank(s) 2 hold other parameters or optimizer state "
                    "than rank 0") != std::string::npos);
  }
}

#include <switchyard/strategy/all_reduce.hpp>

#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/inproc.hpp>

#include "arenas.hpp"

#include <doctest/doctest.h>

#include <span>
#include <vector>

namespace sy = switchyard;

using test_models::arenas;

static_assert(sy::strategy::policy<sy::strategy::all_reduce<>, arenas, sy::optim::sgd<>, sy::transport::inproc>);
static_assert(sy::strategy::policy<sy::strategy::all_reduce<sy::algorithm::ring>, arenas, sy::optim::sgd<>,
                                  sy::transport::inproc>);

TEST_CASE_TEMPLATE("all_reduce.strategy: rank 0's start, averaged gradients, identical updates", Algorithm,
                   sy::algorithm::automatic, sy::algorithm::ring, sy::algorithm::recursive_doubling) {
  for (int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    const auto results = sy::transport::run_inproc(ranks, [](sy::transport::inproc& t) {
      const auto r = static_cast<float>(t.rank());
      arenas model{std::vector<float>(7, 10.0f + r), std::vector<float>(7, r)};
      sy::optim::sgd optimizer{7, 0.5};
      sy::strategy::all_reduce<Algorithm> strategy;
      sy::strategy::traits::setup(strategy, t, model, optimizer);
      CHECK(model.params[6] == 10.0f);  // everyone starts from rank 0
      CHECK(sy::strategy::traits::worker_count(strategy, t) == static_cast<std::size_t>(t.size()));
      CHECK(sy::strategy::traits::worker_index(strategy, t) == static_cast<std::size_t>(t.rank()));
      const sy::strategy::step_outcome outcome = strategy.step(t, model, optimizer);
      CHECK(outcome.bytes_sent == (t.size() > 1 ? 7 * sizeof(float) : 0));
      // The update trained one batch per rank, and the schedule counts them.
      CHECK(optimizer.export_state().clock == static_cast<std::uint64_t>(t.size()));
      return model.params;
    });
    // The mean gradient is (0 + 1 + ... + (ranks - 1)) / ranks = (ranks - 1) / 2.
    const float expected = 10.0f - 0.5f * static_cast<float>(ranks - 1) / 2.0f;
    for (const auto& params : results) {
      for (float p : params) CHECK(p == doctest::Approx(expected));
      CHECK(params == results[0]);
    }
  }
}

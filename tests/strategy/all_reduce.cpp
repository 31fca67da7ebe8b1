#include <switchyard/strategy/all_reduce.hpp>

#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/policy.hpp>
#include <switchyard/strategy/traits.hpp>
#include <switchyard/transport/inproc.hpp>

#include "arenas.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>
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

TEST_CASE_TEMPLATE("all_reduce.strategy.compression: half the bytes, identical replicas, the codec's rounding", Codec,
                   sy::compression::fp16, sy::compression::bf16) {
  constexpr sy::compression::format format =
      std::is_same_v<Codec, sy::compression::fp16> ? sy::compression::format::fp16 : sy::compression::format::bf16;
  constexpr std::size_t count = 1001;  // odd: the ring's blocks differ in size
  for (int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    const auto results = sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
      arenas model{std::vector<float>(count, 1.0f), std::vector<float>(count)};
      sy::optim::sgd optimizer{count, 1.0};
      sy::strategy::all_reduce<sy::algorithm::ring> strategy{{.compression = format}};
      sy::strategy::traits::setup(strategy, t, model, optimizer);
      for (int step = 0; step < 3; ++step) {
        for (std::size_t i = 0; i < count; ++i) {
          model.grads[i] = 0.01f * static_cast<float>((i * 7 + static_cast<std::size_t>(t.rank()) * 13) % 29) - 0.14f;
        }
        const sy::strategy::step_outcome outcome = strategy.step(t, model, optimizer);
        CHECK(outcome.bytes_sent == (t.size() > 1 ? count * sizeof(std::uint16_t) : 0));
      }
      return model.params;
    });
    for (const auto& params : results) CHECK(params == results[0]);
    // Three steps of the exact mean gradient, each off by at most a few roundings of the codec.
    for (std::size_t i = 0; i < count; i += 97) {
      double mean = 0;
      for (int r = 0; r < ranks; ++r) {
        mean += 0.01 * static_cast<double>((i * 7 + static_cast<std::size_t>(r) * 13) % 29) - 0.14;
      }
      mean /= ranks;
      CHECK(std::abs(results[0][i] - (1.0 - 3 * mean)) <= 3 * (ranks + 1) * 0.29 * Codec::unit_roundoff + 1e-6);
    }
  }
}

TEST_CASE("all_reduce.strategy.compression: refused for double gradients, naming the format and the width") {
  struct double_arenas {
    std::vector<double> params = std::vector<double>(3, 1.0);
    std::vector<double> grads = std::vector<double>(3, 0.5);
    std::span<double> parameters() { return params; }
    std::span<double> gradients() { return grads; }
  };
  sy::transport::run_inproc(1, [](sy::transport::inproc& t) {
    double_arenas model;
    sy::optim::sgd<sy::optim::constant, double> optimizer{3, 1.0};
    sy::strategy::all_reduce<> strategy{{.compression = sy::compression::format::fp16}};
    CHECK_THROWS_WITH_AS(strategy.step(t, model, optimizer),
                         "all_reduce: fp16 compression encodes float gradients; this model's are 64-bit",
                         sy::usage_error);
  });
}

// strategy/parameter_server/worker.hpp: a worker's exchange with the servers, plain, pipelined
// (its pull lands one step later) and compressed (its pushes keep their rounding error), and the
// requests it keeps between the step that posts them and the one that waits.
#include <switchyard/strategy/parameter_server/worker.hpp>

#include "fixture.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace sy = switchyard;
using sy::strategy::detail::exchange_requests;
using sy::strategy::detail::ps_plan;
using batches = std::vector<std::optional<std::size_t>>;

TEST_CASE("ps.worker: each pull brings the shard the server had before applying the push") {
  const auto views = ps_test::run(sy::strategy::consistency::async{}, ps_plan{}, 1, 3, {1.0f, 2.0f, 3.0f});
  const auto& worker = views[0];
  CHECK(worker.pulled == std::vector<std::vector<float>>{{1.0f, 2.0f, 3.0f}, {0.5f, 1.5f, 2.5f}, {0.0f, 1.0f, 2.0f}});
  // The worker started with batch 0; server 0 handed out the others with its replies.
  CHECK(worker.handed == batches{1, 2, std::nullopt});
  CHECK(views[1].served == std::vector<float>{-0.5f, 0.5f, 1.5f});
  CHECK(worker.residual.empty());
}

TEST_CASE("ps.worker: pipelined, the pull lands a step later, from a server that applied first") {
  ps_plan plan;
  plan.pipelined = true;
  const auto views = ps_test::run(sy::strategy::consistency::async{}, plan, 1, 3, {1.0f, 2.0f});
  const auto& worker = views[0];
  CHECK(worker.pulled == std::vector<std::vector<float>>{{0.5f, 1.5f}, {0.0f, 1.0f}, {-0.5f, 0.5f}});
  // The worker started with batches 0 and 1.
  CHECK(worker.handed == batches{2, std::nullopt, std::nullopt});
  CHECK(views[1].served == std::vector<float>{-0.5f, 0.5f});
}

TEST_CASE("ps.worker: compressed, pushes and pulls travel as words and the worker keeps what it owes") {
  for (const auto format : {sy::compression::format::bf16, sy::compression::format::fp16}) {
    CAPTURE(sy::compression::name(format));
    ps_plan plan;
    plan.compression = format;
    // Halves and small integers: every word holds them exactly, so nothing is owed.
    const auto views = ps_test::run(sy::strategy::consistency::async{}, plan, 2, 2, {1.0f, 2.0f});
    for (std::size_t w = 0; w < 2; ++w) {
      CHECK(views[w].pulled.size() == 2);
      CHECK(views[w].residual == std::vector<float>(2, 0.0f));
    }
    // Four pushes: two of 0.5 and two of 1.0.
    CHECK(views[2].served == std::vector<float>{-2.0f, -1.0f});
  }
}

TEST_CASE("ps.worker: exchange_requests keeps one vector per request type, and a copy starts empty") {
  exchange_requests requests;
  CHECK_FALSE(requests.in_flight());
  requests.of<int>().push_back(4);
  requests.set_in_flight(true);
  CHECK(requests.of<int>() == std::vector<int>{4});
  const exchange_requests copy = requests;
  CHECK_FALSE(copy.in_flight());
  CHECK(requests.in_flight());
  // Another request type: the old ones are dropped.
  CHECK(requests.of<long>().empty());
  CHECK_FALSE(requests.in_flight());
  requests.of<int>().push_back(5);
  requests.set_in_flight(true);
  requests.drop();
  CHECK_FALSE(requests.in_flight());
  CHECK(requests.of<int>().empty());
}

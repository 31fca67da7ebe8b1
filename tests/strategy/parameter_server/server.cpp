// strategy/parameter_server/server.hpp: the servers' loop under each consistency mode (how many
// updates, how stale, what is dropped) and the pushes it refuses.
#include <switchyard/strategy/parameter_server/server.hpp>

#include "fixture.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace sy = switchyard;
namespace consistency = sy::strategy::consistency;
using sy::strategy::detail::ps_plan;
using sy::strategy::detail::ps_tags;

namespace {

std::uint64_t applied(const sy::strategy::ps_statistics& s) {
  return std::accumulate(s.staleness.begin(), s.staleness.end(), std::uint64_t{0});
}

}  // namespace

TEST_CASE("ps.server.async: every push is applied, and answered at once") {
  for (const bool pipelined : {false, true}) {
    CAPTURE(pipelined);
    ps_plan plan;
    plan.pipelined = pipelined;
    const auto views = ps_test::run(consistency::async{}, plan, 3, 4, {0.0f, 1.0f, 2.0f});
    const auto& server = views[3].statistics;
    CHECK(server.updates == 12);
    CHECK(applied(server) == 12);
    CHECK(server.dropped == 0);
    // Each worker w pushed (w + 1) / 2 four times: 4 x (0.5 + 1 + 1.5).
    CHECK(views[3].served == std::vector<float>{-12.0f, -11.0f, -10.0f});
    for (std::size_t w = 0; w < 3; ++w) CHECK(views[w].pulled.size() == 4);
  }
}

TEST_CASE("ps.server.bounded: no applied push leads the slowest worker by more than the bound") {
  for (const std::size_t bound : {0, 1}) {
    CAPTURE(bound);
    const auto views = ps_test::run(consistency::bounded{bound}, ps_plan{}, 3, 5, {0.0f});
    const auto& server = views[3].statistics;
    CHECK(server.updates == 15);
    CHECK(applied(server) == 15);
    CHECK(server.max_staleness() <= bound);
    CHECK(views[3].served == std::vector<float>{-15.0f});
  }
}

TEST_CASE("ps.server.sync: one update per step, the workers' mean, and every worker pulls it") {
  const auto views = ps_test::run(consistency::sync{}, ps_plan{}, 2, 3, {1.0f, 2.0f});
  const auto& server = views[2].statistics;
  CHECK(server.updates == 3);
  CHECK(server.staleness[0] == 6);
  // The mean of 0.5 and 1.0, three times.
  CHECK(views[2].served == std::vector<float>{-1.25f, -0.25f});
  for (std::size_t w = 0; w < 2; ++w) {
    CHECK(views[w].pulled == std::vector<std::vector<float>>{{0.25f, 1.25f}, {-0.5f, 0.5f}, {-1.25f, -0.25f}});
    CHECK(views[w].handed == std::vector<std::optional<std::size_t>>(3, std::nullopt));
  }
}

TEST_CASE("ps.server.backups: each round takes its first W - B pushes and drops the late ones") {
  const auto views = ps_test::run(consistency::backups{1}, ps_plan{}, 3, 4, {0.0f});
  const auto& server = views[3].statistics;
  // With one server no push waits for a later round: each is applied in its round or dropped.
  CHECK(server.updates > 0);
  CHECK(server.staleness[0] + server.dropped == 12);
  CHECK(server.updates <= server.staleness[0]);
  CHECK(server.updates * 2 >= server.staleness[0]);
  for (std::size_t w = 0; w < 3; ++w) CHECK(views[w].pulled.size() == 4);
}

TEST_CASE("ps.server: a push from a rank that is not a worker, or of the wrong size, is refused") {
  ps_plan plan{.servers = 1, .workers = 1, .first_server = 2, .arena = 2};
  const auto serve = [&](int sender, std::size_t elements) {
    sy::transport::run_inproc(3, [&](sy::transport::inproc& t) {
      if (t.rank() == sender) {
        const std::vector<float> pushed(elements, 1.0f);
        t.send(std::span<const float>(pushed), 2, ps_tags::push);
      } else if (t.rank() == 2) {
        std::vector<float> parameters(2, 0.0f);
        sy::strategy::detail::ps_server<consistency::async> server{{}};
        server.setup<float>(plan, std::span<const float>(parameters), false);
        server.begin_part(plan, 1);
        sy::strategy::ps_statistics statistics;
        const sy::strategy::detail::serving_thread serving;
        ps_test::subtract optimizer;
        server.serve(t, plan, std::span<float>(parameters), optimizer, statistics, serving);
      }
    });
  };
  CHECK_THROWS_WITH_AS(serve(1, 2), doctest::Contains("a push from rank 1, which is not a worker"),
                       sy::transport_error);
  CHECK_THROWS_WITH_AS(serve(0, 1), doctest::Contains("worker 0 pushed 1 gradient elements, the shard has 2"),
                       sy::transport_error);
}

// strategy/parameter_server/protocol.hpp: the plan both sides of a parameter server share (which
// rank serves which shard), and the empty messages a worker's "done" and a co-located server's
// interrupt and alert are made of.
#include <switchyard/strategy/parameter_server/protocol.hpp>

#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace sy = switchyard;
using sy::strategy::detail::ps_plan;
using sy::strategy::detail::ps_tags;

TEST_CASE("ps.protocol: separate servers follow the workers and own balanced shards") {
  const ps_plan plan{.servers = 2, .workers = 3, .first_server = 3, .arena = 11};
  CHECK(plan.shard(0).offset == 0);
  CHECK(plan.shard(0).size == 6);
  CHECK(plan.shard(1).offset == 6);
  CHECK(plan.shard(1).size == 5);
  CHECK(plan.server_rank(0) == 3);
  CHECK(plan.server_rank(1) == 4);
  for (std::size_t rank = 0; rank < 3; ++rank) CHECK_FALSE(plan.served_shard(rank).has_value());
  CHECK(plan.served_shard(3) == std::optional<std::size_t>(0));
  CHECK(plan.served_shard(4) == std::optional<std::size_t>(1));
  CHECK_FALSE(plan.served_shard(5).has_value());
  CHECK_FALSE(plan.compressed());
}

TEST_CASE("ps.protocol: co-located, rank r serves shard r") {
  ps_plan plan{.servers = 4, .workers = 4, .first_server = 0, .arena = 4};
  plan.compression = sy::compression::format::bf16;
  CHECK(plan.compressed());
  for (std::size_t rank = 0; rank < 4; ++rank) {
    CHECK(plan.served_shard(rank) == std::optional<std::size_t>(rank));
    CHECK(plan.shard(rank).offset == rank);
    CHECK(plan.shard(rank).size == 1);
    CHECK(plan.server_rank(rank) == static_cast<int>(rank));
  }
}

TEST_CASE("ps.protocol: the tags are distinct") {
  const std::vector<int> tags{ps_tags::push,    ps_tags::pull,     ps_tags::assign,
                              ps_tags::compute, ps_tags::residual, ps_tags::round};
  for (std::size_t a = 0; a < tags.size(); ++a) {
    for (std::size_t b = a + 1; b < tags.size(); ++b) CHECK(tags[a] != tags[b]);
  }
}

TEST_CASE("ps.protocol: post_empty sends no element, in the values' type or as words") {
  const auto counts = sy::transport::run_inproc(2, [](sy::transport::inproc& t) -> std::vector<std::size_t> {
    if (t.rank() == 0) {
      std::shared_ptr<void> both = sy::strategy::detail::kept_together(
          sy::strategy::detail::post_empty<double>(t, false, 1, ps_tags::push),
          sy::strategy::detail::post_empty<double>(t, true, 1, ps_tags::pull));
      t.barrier();
      return {};
    }
    std::vector<double> values(3);
    std::vector<std::uint16_t> words(3);
    const sy::transport::message_status pushed = t.recv_any(std::span<double>(values), ps_tags::push);
    const sy::transport::message_status pulled = t.recv_any(std::span<std::uint16_t>(words), ps_tags::pull);
    t.barrier();
    return {pushed.count, pulled.count, static_cast<std::size_t>(pushed.source)};
  });
  CHECK(counts[1] == std::vector<std::size_t>{0, 0, 0});
}

TEST_CASE("ps.protocol: control_handle reaches through a decorator's inner()") {
  struct decorated {
    int handle = 7;
    int& inner() { return handle; }
  };
  decorated d;
  CHECK(&sy::strategy::detail::control_handle(d) == &d.handle);
  int plain = 3;
  CHECK(&sy::strategy::detail::control_handle(plain) == &plain);
}

// strategy/parameter_server/assembly.hpp: the whole optimizer state, on every rank, from the
// shards the last ranks (the servers) own.
#include <switchyard/strategy/parameter_server/assembly.hpp>

#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sy = switchyard;
using state = sy::optim::optimizer_state<double>;

namespace {

// An Adam-like state of `n` parameters: two slots, every value different.
state whole(std::size_t n) {
  state s{7, n, {std::vector<double>(n), std::vector<double>(n)}, 21};
  for (std::size_t i = 0; i < n; ++i) {
    s.slots[0][i] = 0.5 * static_cast<double>(i);
    s.slots[1][i] = -1.0 - static_cast<double>(i);
  }
  return s;
}

}  // namespace

TEST_CASE("ps.assembly: every rank gets the whole state from the servers' shards, at 2 to 9 ranks") {
  for (const std::array<std::size_t, 3> shape : std::vector<std::array<std::size_t, 3>>{
           {2, 1, 5}, {4, 1, 9}, {4, 2, 9}, {5, 3, 7}, {3, 2, 2}, {9, 9, 20}, {9, 2, 13}, {8, 3, 2}}) {
    const std::size_t ranks = shape[0];
    const std::size_t servers = shape[1];
    const std::size_t parameters = shape[2];
    CAPTURE(ranks);
    CAPTURE(servers);
    CAPTURE(parameters);
    const state expected = whole(parameters);
    const auto results = sy::transport::run_inproc(static_cast<int>(ranks), [&](sy::transport::inproc& t) {
      const auto rank = static_cast<std::size_t>(t.rank());
      state own;
      if (rank >= ranks - servers) {
        const sy::block b = sy::block_of(parameters, servers, rank - (ranks - servers));
        own = expected.slice(b.offset, b.size);
      } else {
        // A worker's own state is not read, only its slot count.
        own = state{99, 1, {{42.0}, {43.0}}, 99};
      }
      return sy::strategy::assemble_sharded_state(t, own, parameters, servers);
    });
    for (const state& got : results) CHECK(got == expected);
  }
}

TEST_CASE("ps.assembly: servers whose steps differ are refused on every rank") {
  const auto raised = sy::transport::run_inproc(3, [](sy::transport::inproc& t) -> bool {
    state own = whole(6).slice(t.rank() == 1 ? 0 : 3, 3);
    own.step = static_cast<std::uint64_t>(t.rank());
    try {
      (void)sy::strategy::assemble_sharded_state(t, own, 6, 2);
    } catch (const sy::usage_error& e) {
      return std::string(e.what()).find("shard 1 has step 2") != std::string::npos;
    }
    return false;
  });
  CHECK(raised == std::vector<bool>{true, true, true});
}

TEST_CASE("ps.assembly: a server whose slots do not fit its shard is named on every rank") {
  const auto raised = sy::transport::run_inproc(3, [](sy::transport::inproc& t) -> std::string {
    state own = whole(6).slice(t.rank() == 1 ? 0 : 3, 3);
    if (t.rank() == 2) own.slots[1].pop_back();
    try {
      (void)sy::strategy::assemble_sharded_state(t, own, 6, 2);
    } catch (const sy::usage_error& e) {
      return e.what();
    }
    return "no error";
  });
  for (std::size_t r = 0; r < raised.size(); ++r) {
    CAPTURE(raised[r]);
    CHECK(raised[r].find("on rank " + std::to_string(r) +
                         ": the optimizer state of server rank 2 does not fit its shard of 3 parameters") !=
          std::string::npos);
  }
}

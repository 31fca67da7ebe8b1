// Every collective on simulated hosts (transport/simulated.hpp): the scenarios of the in-process
// suites at 1, 2, 3, 4 and 7 hosts, and the same bits as 4 or 7 in-process ranks for buffers whose
// sums round, every algorithm and the defaults of both transports.
#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/barrier.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/collective/reduce_scatter.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/transport/simulated.hpp>

#include "harness.hpp"
#include "scenarios.hpp"
#include "simulated_harness.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace sy = switchyard;
using sy::transport::simulated;

static_assert(sy::transport::transport<simulated>);
static_assert(sy::collective::has_native_allreduce<simulated, float, sy::ops::sum>);
static_assert(sy::collective::has_native_reduce_scatter<simulated, double, sy::ops::average>);
static_assert(sy::collective::has_native_allgather<simulated, float>);

TEST_CASE("simulated.allreduce: against the sequential reference at 1, 2, 3, 4 and 7 hosts" * doctest::timeout(600)) {
  simulated_harness::run_at_every_size([](simulated& t) { return scenarios::allreduce_suite(t); });
}

TEST_CASE("simulated.allreduce.identical_bits: replicas agree to the last bit when sums round" * doctest::timeout(600)) {
  simulated_harness::run_at_every_size([](simulated& t) { return scenarios::identical_bits_suite(t); });
}

TEST_CASE("simulated.broadcast: against the sequential reference at 1, 2, 3, 4 and 7 hosts" * doctest::timeout(600)) {
  simulated_harness::run_at_every_size([](simulated& t) { return scenarios::broadcast_suite(t); });
}

TEST_CASE("simulated.allgather: against the sequential reference at 1, 2, 3, 4 and 7 hosts" * doctest::timeout(600)) {
  simulated_harness::run_at_every_size([](simulated& t) { return scenarios::allgather_suite(t); });
}

TEST_CASE("simulated.reduce_scatter: against the sequential reference at 1, 2, 3, 4 and 7 hosts" * doctest::timeout(600)) {
  simulated_harness::run_at_every_size([](simulated& t) { return scenarios::reduce_scatter_suite(t); });
}

TEST_CASE("simulated.barrier: nobody leaves before the last rank arrived, at 1, 2, 3, 4 and 7 hosts" * doctest::timeout(600)) {
  simulated_harness::run_at_every_size([](simulated& t) { return scenarios::barrier_suite(t); });
}

TEST_CASE("simulated.compressed: fp16 and bf16 all-reduces within the codec's bound" * doctest::timeout(600)) {
  simulated_harness::run_at_every_size([](simulated& t) { return scenarios::compressed_suite(t); });
}

namespace {

// Every collective's output on one rank, as bits, for values whose sums round.
template <class Transport>
std::vector<std::uint64_t> outputs(Transport& t) {
  std::vector<std::uint64_t> hashes;
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1001}, std::size_t{100003}}) {
    auto values = [&]<class T>() {
      std::vector<T> data(count);
      for (std::size_t i = 0; i < count; ++i) data[i] = scenarios::rounding_value<T>(t.rank(), i);
      return data;
    };
    auto per_type = [&]<class T>() {
      std::vector<T> data = values.template operator()<T>();
      sy::collective::allreduce(t, data, sy::ops::sum{});
      hashes.push_back(scenarios::bit_hash(data));
      data = values.template operator()<T>();
      sy::collective::allreduce(t, data, sy::ops::average{});
      hashes.push_back(scenarios::bit_hash(data));
      data = values.template operator()<T>();
      sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::ring{});
      hashes.push_back(scenarios::bit_hash(data));
      data = values.template operator()<T>();
      sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::recursive_doubling{});
      hashes.push_back(scenarios::bit_hash(data));
      data = values.template operator()<T>();
      sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::halving_doubling{});
      hashes.push_back(scenarios::bit_hash(data));
      data = values.template operator()<T>();
      const std::span<T> block = sy::collective::reduce_scatter(t, data, sy::ops::average{});
      hashes.push_back(scenarios::bit_hash(std::vector<T>(block.begin(), block.end())));
      data = values.template operator()<T>();
      sy::collective::broadcast(t, data, t.size() - 1);
      hashes.push_back(scenarios::bit_hash(data));
      const std::vector<T> mine = values.template operator()<T>();
      std::vector<T> all(count * static_cast<std::size_t>(t.size()));
      sy::collective::allgather(t, mine, all);
      hashes.push_back(scenarios::bit_hash(all));
    };
    per_type.template operator()<float>();
    per_type.template operator()<double>();
  }
  return hashes;
}

}  // namespace

TEST_CASE("simulated.same_bits: every collective gives in-process bits at 4 and 7 ranks, defaults of both" *
          doctest::timeout(600)) {
  for (int ranks : {4, 7}) {
    CAPTURE(ranks);
    const auto in_process = sy::transport::run_inproc(ranks, [](sy::transport::inproc& t) { return outputs(t); },
                                                      harness::options());
    const auto simulated_hosts = sy::transport::run_simulated(ranks, [](simulated& t) { return outputs(t); },
                                                              quiet());
    REQUIRE(in_process.size() == simulated_hosts.size());
    for (std::size_t r = 0; r < in_process.size(); ++r) {
      CAPTURE(r);
      CHECK(in_process[r] == simulated_hosts[r]);
    }
  }
}

namespace {

// Simulated time against theory for one all-reduce of `bytes` over `hosts` hosts of a star of
// 1 Gbit/s, 50 us links under CM02: `a` is the route's latency (two links), `B` the link's bandwidth.
struct timing {
  double simulated;
  double formula;
};

constexpr double route_latency = 2 * 50e-6;
constexpr double link_bandwidth = 1e9 / 8;

template <class Algorithm>
double simulated_allreduce_seconds(int hosts, std::size_t bytes, Algorithm algorithm) {
  sy::transport::simulated_options o = quiet();
  o.platform.hosts = hosts;
  o.platform.bandwidth = "1Gbps";
  o.platform.latency = "50us";
  sy::transport::simulated_world world(o);
  world.run([bytes, algorithm](simulated& t) {
    std::vector<float> data(bytes / sizeof(float), 1.0F);
    sy::collective::allreduce(t, data, sy::ops::sum{}, algorithm);
  });
  return world.simulated_seconds();
}

// The ring: 2(p-1) steps of a latency and of 1/p of the buffer.
timing time_ring(int hosts, std::size_t bytes) {
  const double p = hosts;
  return {simulated_allreduce_seconds(hosts, bytes, sy::algorithm::ring{}),
          2 * (p - 1) * route_latency + 2 * (p - 1) / p * static_cast<double>(bytes) / link_bandwidth};
}

// Halving-doubling over the largest power of two q <= p: 2 log2(q) rounds that together move
// 2(q-1)/q of the buffer; when p > q, the fold before and the copy back after, one latency and
// one whole buffer each.
timing time_halving_doubling(int hosts, std::size_t bytes) {
  int q = 1;
  int rounds = 0;
  while (q * 2 <= hosts) q *= 2, ++rounds;
  const double m = static_cast<double>(bytes) / link_bandwidth;
  double formula = 2 * rounds * route_latency + 2.0 * (q - 1) / q * m;
  if (q != hosts) formula += 2 * (route_latency + m);
  return {simulated_allreduce_seconds(hosts, bytes, sy::algorithm::halving_doubling{}), formula};
}

}  // namespace

TEST_CASE("simulated.ring.formula: a ring all-reduce takes 2(p-1)a + 2(p-1)/p M/B within 2% under CM02" *
          doctest::timeout(300)) {
  // 512 KiB: every rank's block fits the ring's 128 KiB segment, so each step is one message, as
  // the formula assumes (larger blocks pay a latency per pair of segments in flight).
  for (int hosts : {4, 7, 16, 64}) {
    CAPTURE(hosts);
    const timing t = time_ring(hosts, std::size_t{512} << 10);
    CAPTURE(t.simulated);
    CAPTURE(t.formula);
    CHECK(t.simulated == doctest::Approx(t.formula).epsilon(0.02).scale(0));
  }
}

TEST_CASE("simulated.halving_doubling.formula: 2 log2(p)a + 2(p-1)/p M/B within 2% under CM02 at powers of two" *
          doctest::timeout(300)) {
  for (int hosts : {2, 4, 16, 64, 256}) {
    CAPTURE(hosts);
    const timing t = time_halving_doubling(hosts, std::size_t{1} << 20);
    CAPTURE(t.simulated);
    CAPTURE(t.formula);
    CHECK(t.simulated == doctest::Approx(t.formula).epsilon(0.02).scale(0));
  }
}

TEST_CASE("simulated.halving_doubling.fold: off powers of two, the fold's 2a + 2M/B more, and at most M/B beyond" *
          doctest::timeout(300)) {
  // The ranks that fold nothing start their first exchange at once, and the message reaches a
  // partner that is still receiving its fold: the two share its link (sends are eager), which the
  // phase-by-phase formula leaves out: 0.5 M/B at 3 hosts, 0.75 at 7, 0.12 at 12.
  constexpr std::size_t bytes = std::size_t{1} << 20;
  for (int hosts : {3, 7, 12}) {
    CAPTURE(hosts);
    const timing t = time_halving_doubling(hosts, bytes);
    CAPTURE(t.simulated);
    CAPTURE(t.formula);
    CHECK(t.simulated >= t.formula * 0.98);
    CHECK(t.simulated <= t.formula + static_cast<double>(bytes) / link_bandwidth);
  }
}

TEST_CASE("simulated.allgather.automatic: from 8 ranks without the native all-gather, Bruck's in ceil(log2 p) rounds" *
          doctest::timeout(120)) {
  auto messages = [](int hosts, auto algorithm) {
    sy::transport::simulated_options o = quiet();
    o.check_collectives = false;
    o.native_collectives = false;
    o.platform.hosts = hosts;
    sy::transport::simulated_world world(o);
    const auto results = world.run([algorithm](simulated& t) {
      const std::vector<double> mine(3, t.rank());
      std::vector<double> all(3 * static_cast<std::size_t>(t.size()));
      sy::collective::allgather(t, mine, all, algorithm);
      return all;
    });
    for (const std::vector<double>& all : results) {
      for (std::size_t i = 0; i < all.size(); ++i) REQUIRE(all[i] == static_cast<double>(i / 3));
    }
    return world.messages();
  };
  for (int hosts : {7, 8, 13}) {
    CAPTURE(hosts);
    const auto ring = messages(hosts, sy::algorithm::ring{});
    const auto bruck = messages(hosts, sy::algorithm::recursive_doubling{});
    CHECK(ring == static_cast<std::uint64_t>(hosts * (hosts - 1)));
    // ceil(log2 p) rounds of one message per rank, two where a run of blocks wraps.
    CHECK(bruck >= static_cast<std::uint64_t>(hosts * (hosts == 13 ? 4 : 3)));
    CHECK(bruck < ring);
    CHECK(messages(hosts, sy::algorithm::automatic{}) == (hosts < 8 ? ring : bruck));
  }
}

// The benchmark `collective.simulated.ring_formula` (meson test --benchmark): 4 to 1,024 hosts, 1 MiB.
TEST_CASE("simulated.ring.formula_sweep: simulated over theoretical time of the ring, 4 to 1024 hosts" *
          doctest::skip() * doctest::timeout(3600)) {
  std::printf("%6s %12s %12s %8s %10s\n", "hosts", "simulated_s", "formula_s", "ratio", "wall_s");
  for (int hosts = 4; hosts <= 1024; hosts *= 2) {
    const auto begin = std::chrono::steady_clock::now();
    const timing timing = time_ring(hosts, std::size_t{1} << 20);  // 1 MiB: 1 GiB of buffers at 1,024
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    std::printf("%6d %12.6f %12.6f %8.4f %10.2f\n", hosts, timing.simulated, timing.formula,
                timing.simulated / timing.formula, wall);
    std::fflush(stdout);
    CHECK(timing.simulated == doctest::Approx(timing.formula).epsilon(0.02).scale(0));
  }
}

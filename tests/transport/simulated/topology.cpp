// The topology of transport::simulated: a node is a simulated host, so the ranks of one host (in
// blocks of ranks_per_host, from the options or a platform file) form a node; split keeps each
// rank's host. On hosts of several ranks, algorithm::automatic takes the hierarchical all-reduce and
// the parameter server aggregates per node, with bitwise the in-process results of virtual nodes of
// the same shape.
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/node_groups.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/transport/simulated.hpp>

#include <doctest/doctest.h>

#include "../../common/simulated_quiet.hpp"
#include "../../train/fixtures.hpp"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace sy = switchyard;
using sy::transport::inproc;
using sy::transport::node_topology;
using sy::transport::simulated;
using sy::transport::simulated_options;

namespace {

struct shape {
  int hosts;
  int per_host;
};

simulated_options cluster(shape s) {
  simulated_options o = quiet();
  o.platform.hosts = s.hosts;
  o.platform.cores = s.per_host;
  o.ranks_per_host = s.per_host;
  return o;
}

sy::transport::inproc_options virtual_nodes(shape s) {
  sy::transport::inproc_options o;
  o.node_sizes.assign(static_cast<std::size_t>(s.hosts), s.per_host);
  return o;
}

// What rank r of hosts x per_host ranks, placed in blocks, must report.
node_topology expected(shape s, int r) {
  return {r / s.per_host, r % s.per_host, s.per_host, s.hosts, s.per_host, s.per_host};
}

// 20,000 floats (above collective::ring_threshold_bytes) whose sums depend on the order of the
// additions.
std::vector<float> gradient(int rank) {
  std::vector<float> g(20000);
  std::uint32_t state = 2654435761u * static_cast<std::uint32_t>(rank + 1);
  for (float& x : g) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) * 1e-7F * ((state & 1u) != 0 ? 1.0F : -1.0F) + 1.0F / static_cast<float>(rank + 3);
  }
  return g;
}

}  // namespace

static_assert(sy::transport::has_node_topology<simulated> && sy::transport::has_group_cache<simulated>);
static_assert(sy::transport::has_node_topology<sy::transport::faulty<simulated>> &&
              sy::transport::has_group_cache<sy::transport::faulty<simulated>>);

// The first case of the file: SimGrid 3.32 crashes loading a platform file after another world of
// the process has run (doctest runs the cases in the order of the file).
TEST_CASE("simulated.topology.platform_file: the ranks placed on one host of a file form a node" *
          doctest::timeout(60)) {
  const std::string path = "simulated_topology_test.xml";
  std::ofstream(path) << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                         "<platform version=\"4.1\"><zone id='z' routing='Full'>"
                         "<host id='b' speed='1Gf' core='2'/><host id='a' speed='1Gf' core='2'/>"
                         "<host id='c' speed='1Gf' core='2'/><link id='l' bandwidth='1GBps' latency='10us'/>"
                         "<route src='a' dst='b'><link_ctn id='l'/></route><route src='a' dst='c'><link_ctn id='l'/></route>"
                         "<route src='b' dst='c'><link_ctn id='l'/></route></zone></platform>\n";
  simulated_options o = quiet();
  o.platform.file = path;
  o.ranks_per_host = 2;
  const auto seen = sy::transport::simulated_world{o}.run([](simulated& t) {
    return std::vector<int>{t.topology().node, t.host(), t.topology().local_rank, t.topology().nodes};
  });
  REQUIRE(seen.size() == 6);
  for (std::size_t r = 0; r < seen.size(); ++r) {
    CAPTURE(r);
    CHECK(seen[r] == std::vector<int>{static_cast<int>(r / 2), static_cast<int>(r / 2), static_cast<int>(r % 2), 3});
  }
}

TEST_CASE("simulated.topology: a node is a host: 1 host, N hosts x 1, N x 2, 3 x 3, as in process" *
          doctest::timeout(120)) {
  for (const shape s : {shape{1, 1}, shape{1, 3}, shape{4, 1}, shape{5, 1}, shape{2, 2}, shape{3, 2}, shape{3, 3}}) {
    CAPTURE(s.hosts);
    CAPTURE(s.per_host);
    const auto seen = sy::transport::run_simulated(s.hosts, [](simulated& t) { return t.topology(); }, cluster(s));
    const auto in_process = sy::transport::run_inproc(
        s.hosts * s.per_host, [](inproc& t) { return t.topology(); }, virtual_nodes(s));
    REQUIRE(seen.size() == static_cast<std::size_t>(s.hosts * s.per_host));
    CHECK(seen == in_process);
    for (int r = 0; r < s.hosts * s.per_host; ++r) {
      CAPTURE(r);
      CHECK(seen[static_cast<std::size_t>(r)] == expected(s, r));
      CHECK(seen[static_cast<std::size_t>(r)].hierarchical() == (s.hosts > 1 && s.per_host > 1));
    }
  }
}

TEST_CASE("simulated.topology.split: groups made by split report their own topology and cache, as in process" *
          doctest::timeout(60)) {
  const shape s{3, 3};
  // Ranks 0, 2, 4, 6, 8 and ranks 1, 3, 5, 7, in reverse order: their hosts renumbered per group.
  auto probe = [](auto& t) {
    auto part = t.split(t.rank() % 2, -t.rank());
    auto copy = part;
    const bool shared = &copy.group_cache() == &part.group_cache();
    const bool fresh = &part.group_cache() != &t.group_cache();
    return std::pair{part.topology(), shared && fresh};
  };
  const auto seen = sy::transport::run_simulated(s.hosts, [&](simulated& t) { return probe(t); }, cluster(s));
  const auto in_process = sy::transport::run_inproc(9, [&](inproc& t) { return probe(t); }, virtual_nodes(s));
  CHECK(seen == in_process);
  for (const auto& [where, caches] : seen) CHECK(caches);
  // Rank 8 (host 2) is the first rank of the even group; rank 1 (host 0) the last of the odd one.
  CHECK(seen[8].first == node_topology{0, 0, 2, 3, 2, 1});
  CHECK(seen[0].first == node_topology{2, 1, 2, 3, 2, 1});
  CHECK(seen[1].first == node_topology{2, 0, 1, 3, 2, 1});
}

TEST_CASE("simulated.topology.allreduce: automatic takes the hierarchical all-reduce on hosts of several ranks, "
          "with the bits of in-process virtual nodes of the same shape" * doctest::timeout(300)) {
  for (const shape s : {shape{1, 3}, shape{3, 1}, shape{2, 2}, shape{3, 2}, shape{2, 3}, shape{3, 3}, shape{4, 2}}) {
    CAPTURE(s.hosts);
    CAPTURE(s.per_host);
    struct result {
      std::vector<float> sum;
      bool split_by_node = false;  // whether the collectives kept node groups
    };
    auto reduce = [](auto& t) {
      std::vector<float> g = gradient(t.rank());
      sy::collective::allreduce(t, g, sy::ops::sum{});
      return result{g, t.group_cache().node_groups.has_value()};
    };
    const auto seen = sy::transport::run_simulated(s.hosts, [&](simulated& t) { return reduce(t); }, cluster(s));
    const int ranks = s.hosts * s.per_host;
    const auto in_process = sy::transport::run_inproc(ranks, [&](inproc& t) { return reduce(t); }, virtual_nodes(s));
    // The same ranks in one node: the flat (native) all-reduce, which adds in another order.
    const auto flat = sy::transport::run_inproc(ranks, [&](inproc& t) { return reduce(t); });
    const bool hierarchical = s.hosts > 1 && s.per_host > 1;
    for (int r = 0; r < ranks; ++r) {
      CAPTURE(r);
      const auto i = static_cast<std::size_t>(r);
      CHECK(seen[i].sum == in_process[i].sum);
      CHECK(seen[i].split_by_node == hierarchical);
      CHECK((seen[i].sum == flat[i].sum) == !hierarchical);
    }
  }
}

namespace {

struct trained {
  std::vector<float> parameters;
  bool by_node = false;
  std::size_t pushes = 0;
};

template <class Transport>
trained train(Transport& t, sy::strategy::aggregation aggregate,
              sy::strategy::pipelining pipeline = sy::strategy::pipelining::off) {
  const auto data = fixtures::quadrants(480, 7);
  const auto test = fixtures::quadrants(100, 8);
  sy::strategy::parameter_server<sy::strategy::consistency::sync> strategy(
      sy::strategy::colocated, sy::strategy::consistency::sync{}, sy::compression::format::none, pipeline, aggregate);
  sy::nn::mlp<> model{11, {8, 8, 1}, 4};
  sy::optim::sgd optimizer{model.parameters().size(), 0.05};
  sy::train::trainer_options settings;
  settings.epochs = 2;
  settings.batch_size = 8;
  settings.seed = 3;
  sy::train::trainer trainer{model, optimizer, strategy, settings};
  static_cast<void>(trainer.fit(t, data, *test));
  return {{model.parameters().begin(), model.parameters().end()},
          trainer.strategy().aggregates_by_node(),
          trainer.strategy().statistics().pushes};
}

}  // namespace

TEST_CASE("simulated.topology.parameter_server: the co-located parameter server aggregates per host by default, with "
          "the bits of in-process virtual nodes of the same shape" * doctest::timeout(300)) {
  using sy::strategy::aggregation;
  for (const shape s : {shape{1, 2}, shape{3, 1}, shape{2, 2}, shape{3, 2}, shape{2, 3}}) {
    CAPTURE(s.hosts);
    CAPTURE(s.per_host);
    const int ranks = s.hosts * s.per_host;
    const auto seen = sy::transport::run_simulated(
        s.hosts, [](simulated& t) { return train(t, aggregation::automatic); }, cluster(s));
    const auto in_process = sy::transport::run_inproc(
        ranks, [](inproc& t) { return train(t, aggregation::automatic); }, virtual_nodes(s));
    const auto per_rank = sy::transport::run_simulated(
        s.hosts, [](simulated& t) { return train(t, aggregation::rank); }, cluster(s));
    const bool hierarchical = s.hosts > 1 && s.per_host > 1;
    std::size_t pushes = 0;
    std::size_t pushes_per_rank = 0;
    for (int r = 0; r < ranks; ++r) {
      CAPTURE(r);
      const auto i = static_cast<std::size_t>(r);
      CHECK(seen[i].parameters == in_process[i].parameters);
      CHECK(seen[i].parameters == seen.front().parameters);
      CHECK(seen[i].by_node == hierarchical);
      CHECK_FALSE(per_rank[i].by_node);
      pushes += seen[i].pushes;
      pushes_per_rank += per_rank[i].pushes;
    }
    // Per host, each host's push reaches each host's shard; per rank, each rank's reaches each rank's.
    if (hierarchical) CHECK(pushes * static_cast<std::size_t>(s.per_host * s.per_host) == pushes_per_rank);
  }
}

TEST_CASE("simulated.topology.parameter_server.pipelined: pipelined workers summed per host, with the bits of "
          "in-process virtual nodes of the same shape" * doctest::timeout(300)) {
  using sy::strategy::aggregation;
  constexpr auto ahead = sy::strategy::pipelining::one_ahead;
  for (const shape s : {shape{1, 2}, shape{3, 1}, shape{2, 2}, shape{3, 2}, shape{2, 3}}) {
    CAPTURE(s.hosts);
    CAPTURE(s.per_host);
    const auto seen = sy::transport::run_simulated(
        s.hosts, [](simulated& t) { return train(t, aggregation::automatic, ahead); }, cluster(s));
    const auto in_process = sy::transport::run_inproc(
        s.hosts * s.per_host, [](inproc& t) { return train(t, aggregation::automatic, ahead); }, virtual_nodes(s));
    const auto unpipelined = sy::transport::run_simulated(
        s.hosts, [](simulated& t) { return train(t, aggregation::automatic); }, cluster(s));
    for (std::size_t r = 0; r < seen.size(); ++r) {
      CAPTURE(r);
      CHECK(seen[r].parameters == in_process[r].parameters);
      CHECK(seen[r].parameters == seen.front().parameters);
      CHECK(seen[r].by_node == (s.hosts > 1 && s.per_host > 1));
    }
    CHECK(seen.front().parameters != unpipelined.front().parameters);  // one exchange staler
  }
}

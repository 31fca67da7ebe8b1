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

#include <cstdint>
#include <vector>

namespace sy = switchyard;
using sy::transport::simulated;

static_assert(sy::transport::transport<simulated>);
static_assert(sy::collective::has_native_allreduce<simulated, float, sy::ops::sum>);
static_assert(sy::collective::has_native_reduce_scatter<simulated, double, sy::ops::average>);

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
                                                              simulated_harness::options());
    REQUIRE(in_process.size() == simulated_hosts.size());
    for (std::size_t r = 0; r < in_process.size(); ++r) {
      CAPTURE(r);
      CHECK(in_process[r] == simulated_hosts[r]);
    }
  }
}

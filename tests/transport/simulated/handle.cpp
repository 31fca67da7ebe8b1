// transport/simulated/handle.hpp: one simulated rank's handle: point-to-point with tags and any
// source, barrier, split, the native collectives, and the library state each rank keeps for
// itself although all ranks take turns on one thread.
#include <switchyard/transport/simulated/handle.hpp>

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/barrier.hpp>
#include <switchyard/collective/detail/common.hpp>
#include <switchyard/collective/stage.hpp>
#include <switchyard/core/floating_point.hpp>
#include <switchyard/core/sequence.hpp>
#include <switchyard/transport/simulated/world.hpp>

#include <doctest/doctest.h>

#include "../../common/simulated_quiet.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace sy = switchyard;
using sy::transport::simulated;

static_assert(sy::transport::transport<simulated>);
static_assert(sy::transport::has_collective_checks<simulated>);

TEST_CASE("simulated.handle.point_to_point: tags are matched apart and keep their order per pair" * doctest::timeout(60)) {
  sy::transport::run_simulated(2, [](simulated& t) {
    if (t.rank() == 0) {
      for (int i = 0; i < 3; ++i) {
        const std::vector<int> a{i};
        const std::vector<int> b{10 + i};
        t.send(std::span<const int>(a), 1, 1);
        t.send(std::span<const int>(b), 1, 2);
      }
    } else {
      std::vector<int> got(1);
      for (int i = 0; i < 3; ++i) {  // tag 2 first: the tag-1 messages wait, in order
        t.recv(std::span<int>(got), 0, 2);
        CHECK(got[0] == 10 + i);
      }
      for (int i = 0; i < 3; ++i) {
        auto r = t.irecv(std::span<int>(got), 0, 1);
        r.wait();
        CHECK(got[0] == i);
        CHECK(r.status().tag == 1);
      }
    }
  }, quiet());
}

TEST_CASE("simulated.handle.recv_any: a server hears every worker, with sources and counts" * doctest::timeout(60)) {
  sy::transport::run_simulated(4, [](simulated& t) {
    if (t.rank() == 0) {
      std::vector<int> seen;
      std::vector<double> buffer(8);
      for (int i = 0; i < 3; ++i) {
        const sy::transport::message_status s = t.recv_any(std::span<double>(buffer), 7);
        CHECK(s.tag == 7);
        CHECK(s.count == static_cast<std::size_t>(s.source));
        CHECK(buffer[0] == s.source);
        seen.push_back(s.source);
      }
      std::sort(seen.begin(), seen.end());
      CHECK(seen == std::vector<int>{1, 2, 3});
    } else {
      const std::vector<double> mine(static_cast<std::size_t>(t.rank()), t.rank());
      t.send(std::span<const double>(mine), 0, 7);
    }
  }, quiet());
}

TEST_CASE("simulated.handle.any_source: an irecv from any rank takes the first to arrive" * doctest::timeout(60)) {
  sy::transport::simulated_options o = quiet();
  o.platform.latency = "1ms";
  sy::transport::run_simulated(3, [](simulated& t) {
    std::vector<float> one(1, static_cast<float>(t.rank()));
    if (t.rank() == 0) {
      auto r = t.irecv(std::span<float>(one), sy::transport::any_source, 4);
      r.wait();
      CHECK(r.status().source == 2);  // rank 1 sends later in simulated time
      t.recv(std::span<float>(one), 1, 4);
      CHECK(one[0] == 1.0F);
    } else {
      if (t.rank() == 1) {
        std::vector<float> dummy(1);
        t.recv(std::span<float>(dummy), 2, 9);  // waits for rank 2's second message
      }
      t.send(std::span<const float>(one), 0, 4);
      if (t.rank() == 2) t.send(std::span<const float>(one), 1, 9);
    }
  }, o);
}

TEST_CASE("simulated.handle.split: groups by color, ranked by key, isolated from each other" * doctest::timeout(60)) {
  sy::transport::run_simulated(5, [](simulated& t) {
    simulated sub = t.split(t.rank() % 2, -t.rank());
    CHECK(sub.size() == (t.rank() % 2 == 0 ? 3 : 2));
    std::vector<int> value{t.rank()};
    sy::collective::allreduce(sub, value, sy::ops::sum{});
    CHECK(value[0] == (t.rank() % 2 == 0 ? 0 + 2 + 4 : 1 + 3));
    // Highest world rank first: key is minus the rank.
    if (t.rank() == 4 || t.rank() == 3) CHECK(sub.rank() == 0);
    CHECK(&sub.collective_checks() != &t.collective_checks());
  }, quiet());
}

TEST_CASE("simulated.handle.native: fold in rank order, finalize once, at every size" * doctest::timeout(60)) {
  for (int hosts : {1, 2, 3, 4, 7}) {
    sy::transport::run_simulated(hosts, [](simulated& t) {
      std::vector<double> data(11);
      for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<double>(t.rank() + 1) * (i + 1);
      t.native_allreduce(std::span<double>(data), sy::ops::average{});
      const double ranks = t.size();
      for (std::size_t i = 0; i < data.size(); ++i) CHECK(data[i] == doctest::Approx((ranks + 1) / 2 * (i + 1)));
    }, quiet());
  }
}

// Values whose sum depends on the order they are added in.
static float uneven_value(int rank, std::size_t i) {
  return static_cast<float>((static_cast<std::size_t>(rank) * 7919 + i * 104729) % 1009) * 1e-3F + (rank % 3 == 0 ? 1e4F : 0.0F);
}

TEST_CASE("simulated.handle.native_window: more ranks than the window, buffers shorter than, as long as and "
          "longer than the group: every rank ends with the rank-order sum, and empty blocks cost no message" *
          doctest::timeout(120)) {
  sy::transport::simulated_options o = quiet();
  o.check_collectives = false;
  const auto window = static_cast<int>(sy::transport::detail::native_window);
  for (int hosts : {window + 1, 2 * window + 5}) {
    const auto n = static_cast<std::size_t>(hosts);
    for (std::size_t length : {std::size_t{3}, n, 2 * n + 3}) {
      CAPTURE(hosts);
      CAPTURE(length);
      o.platform.hosts = hosts;
      sy::transport::simulated_world world(o);
      const auto results = world.run([length](simulated& t) {
        std::vector<float> data(length);
        for (std::size_t i = 0; i < length; ++i) data[i] = uneven_value(t.rank(), i);
        t.native_allreduce(std::span<float>(data), sy::ops::average{});
        return data;
      });
      std::vector<float> expected(length);
      for (std::size_t i = 0; i < length; ++i) {
        float total = uneven_value(0, i);
        for (int r = 1; r < hosts; ++r) total = total + uneven_value(r, i);
        expected[i] = sy::ops::average::finalize(total, hosts);
      }
      for (const std::vector<float>& r : results) CHECK(r == expected);
      // Each non-empty block goes to its owner from every other rank and back to every other rank.
      const std::size_t blocks = std::min(length, n);
      CHECK(world.messages() == 2 * blocks * (n - 1));
    }
  }
}

TEST_CASE("simulated.handle.native_allgather: more ranks than the window, every rank's block in rank order, "
          "one message to every other rank" * doctest::timeout(120)) {
  sy::transport::simulated_options o = quiet();
  o.check_collectives = false;
  const auto window = static_cast<int>(sy::transport::detail::native_window);
  for (int hosts : {1, 3, window + 1, 2 * window + 5}) {
    const auto n = static_cast<std::size_t>(hosts);
    for (std::size_t each : {std::size_t{0}, std::size_t{1}, std::size_t{5}}) {
      CAPTURE(hosts);
      CAPTURE(each);
      o.platform.hosts = hosts;
      sy::transport::simulated_world world(o);
      const auto results = world.run([each](simulated& t) {
        std::vector<float> mine(each);
        for (std::size_t i = 0; i < each; ++i) mine[i] = uneven_value(t.rank(), i);
        std::vector<float> all(each * static_cast<std::size_t>(t.size()), -1.0F);
        t.native_allgather(std::span<const float>(mine), std::span<float>(all));
        return all;
      });
      std::vector<float> expected;
      for (int r = 0; r < hosts; ++r) {
        for (std::size_t i = 0; i < each; ++i) expected.push_back(uneven_value(r, i));
      }
      for (const std::vector<float>& r : results) CHECK(r == expected);
      CHECK(world.messages() == (each == 0 ? 0 : n * (n - 1)));
    }
  }
}

TEST_CASE("simulated.handle.native_max_ranks: automatic takes the native all-reduce in groups up to the limit, "
          "the ring above it" * doctest::timeout(120)) {
  sy::transport::simulated_options o = quiet();
  o.check_collectives = false;
  o.platform.hosts = 5;
  const int hosts = o.platform.hosts;
  constexpr std::size_t length = std::size_t{1} << 15;  // 128 KiB of floats: the ring's size, not recursive doubling's
  std::vector<float> rank_order(length);
  for (std::size_t i = 0; i < length; ++i) {
    float total = uneven_value(0, i);
    for (int r = 1; r < hosts; ++r) total = total + uneven_value(r, i);
    rank_order[i] = total;
  }
  for (int limit : {5, 4}) {
    CAPTURE(limit);
    o.native_max_ranks = limit;
    sy::transport::simulated_world world(o);
    const auto results = world.run([](simulated& t) {
      std::vector<float> data(length);
      for (std::size_t i = 0; i < length; ++i) data[i] = uneven_value(t.rank(), i);
      sy::collective::allreduce(t, data, sy::ops::sum{});
      simulated four = t.split(t.rank() < 4 ? 0 : 1, t.rank());
      return std::tuple{data, t.prefers_native(), four.prefers_native()};
    });
    for (const auto& [data, prefers, four_prefers] : results) {
      CHECK(prefers == (limit == 5));
      CHECK(four_prefers);
      CHECK(data == std::get<0>(results.front()));
      // The native all-reduce folds in rank order; the ring starts each block at another rank,
      // which rounds some sums differently.
      CHECK((data == rank_order) == (limit == 5));
    }
  }
}

TEST_CASE("simulated.handle.errors: a peer outside the group, sizes and types that do not match" * doctest::timeout(60)) {
  sy::transport::run_simulated(2, [](simulated& t) {
    std::vector<float> f(3);
    CHECK_THROWS_WITH_AS(t.send(std::span<const float>(f), 2, 0),
                         doctest::Contains(": send names rank 2 but the group has ranks 0 to 1"), sy::usage_error);
    if (t.rank() == 0) {
      t.send(std::span<const float>(f), 1, 0);
      t.send(std::span<const float>(f), 1, 1);
    } else {
      std::vector<float> short_buffer(2);
      CHECK_THROWS_WITH_AS(t.recv(std::span<float>(short_buffer), 0, 0),
                           doctest::Contains("has 3 elements but the receive buffer expects 2"), sy::transport_error);
      std::vector<double> other(3);
      CHECK_THROWS_WITH_AS(t.recv(std::span<double>(other), 0, 1),
                           doctest::Contains("has elements of 4 bytes but the receive expects another type"),
                           sy::transport_error);
    }
  }, quiet());
}

TEST_CASE("simulated.handle.barrier: costs ceil(log2 n) rounds of the route's latency" * doctest::timeout(60)) {
  sy::transport::simulated_options o = quiet();
  o.platform.latency = "10us";
  for (int hosts : {2, 4, 7}) {
    o.platform.hosts = hosts;
    sy::transport::simulated_world w(o);
    w.run([](simulated& t) { t.barrier(); });
    int rounds = 0;
    for (int d = 1; d < hosts; d *= 2) ++rounds;
    CHECK(w.simulated_seconds() == doctest::Approx(rounds * 20e-6).epsilon(1e-3).scale(0));
  }
}

// With default (non-thread) contexts every actor runs on the calling thread, so state kept per
// thread would be shared by all ranks and overwritten at every switch. Each rank sets its own
// stage label, sequence budget, flush mode and scratch, switches many times in collectives, and
// must find its own again.
TEST_CASE("simulated.handle.rank_state: ranks on one thread never share the library's per-rank state" *
          doctest::timeout(60)) {
  const std::thread::id caller = std::this_thread::get_id();
  const auto ok = sy::transport::run_simulated(4, [caller](simulated& t) {
    const bool same_thread = std::this_thread::get_id() == caller;
    const std::string label = "rank-" + std::to_string(t.rank());
    const sy::collective::stage_scope stage{label};
    const sy::sequence_budget_scope budget{static_cast<std::uint64_t>(t.rank()) + 1};
    const sy::flush_subnormals_scope flush{t.rank() % 2 == 0};
    const std::span<std::int64_t> scratch = sy::collective::detail::scratch<std::int64_t>(16, 1);
    std::fill(scratch.begin(), scratch.end(), t.rank());
    bool all_kept = true;
    for (int round = 0; round < 5; ++round) {
      std::vector<float> data(1000, 1.0F);
      sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::ring{});
      sy::collective::barrier(t);
      const std::span<std::int64_t> again = sy::collective::detail::scratch<std::int64_t>(16, 1);
      all_kept = all_kept && sy::collective::current_stage() == label &&
                 sy::sequence_budget() == static_cast<std::uint64_t>(t.rank()) + 1 &&
                 (!sy::can_flush_subnormals || sy::subnormals_flushed() == (t.rank() % 2 == 0)) &&
                 again.data() == scratch.data() &&
                 std::all_of(again.begin(), again.end(), [&](std::int64_t v) { return v == t.rank(); });
    }
    // Ranks take turns on the caller's thread, but under AddressSanitizer, which runs each on a
    // thread context of its own (transport/simulated/world.hpp).
    return same_thread != sy::transport::detail::address_sanitized && all_kept;
  }, quiet());
  CHECK(ok == std::vector<bool>{true, true, true, true});
  CHECK(sy::collective::current_stage().empty());
  CHECK_FALSE(sy::subnormals_flushed());
}

TEST_CASE("simulated.handle.compute: charged on the rank's host under calibrated and measured compute, free under none" *
          doctest::timeout(60)) {
  using sy::transport::compute_model;
  auto ends = [](compute_model model) {
    sy::transport::simulated_options o = quiet();
    o.compute = model;
    o.platform.hosts = 2;
    o.platform.speeds = {{1, 0.5}};
    return sy::transport::run_simulated(o, [](simulated& t) {
      simulated alone = t.split(t.rank(), 0);  // a barrier of one rank charges compute and waits for nobody
      alone.barrier();
      const double start = t.now();
      volatile double sink = 0;  // CPU time that only the measured model charges
      for (int i = 0; i < 2000000; ++i) sink = sink + 1e-9;
      t.compute(0.25);
      alone.barrier();
      return t.now() - start;
    });
  };
  const std::vector<double> calibrated = ends(compute_model::calibrated);
  CHECK(calibrated[0] == doctest::Approx(0.25).epsilon(1e-9));
  CHECK(calibrated[1] == doctest::Approx(0.5).epsilon(1e-9));
  CHECK(ends(compute_model::none) == std::vector<double>{0.0, 0.0});
  const std::vector<double> measured = ends(compute_model::measured);
  CHECK(measured[0] > 0.25);
  CHECK(measured[1] > 0.5);
  CHECK_THROWS_WITH_AS(sy::transport::run_simulated(1, [](simulated& t) { t.compute(-1.0); }, quiet()),
                       doctest::Contains("rank 0: compute(-1): a simulated compute time must be finite and not negative"),
                       sy::usage_error);
}

namespace {

// Every rank sends `per_peer` messages to every other one, tags alternating 0 and 1, values
// counting up. The receiver takes them through two receives naming the source (any tag) per
// peer, then n - 1 from any source per tag, then any source and tag for the rest: each sender's
// values on each tag must come in order of the receives. `early`: the receives are posted before
// the messages arrive; else the messages wait for them (posted after a barrier).
void exchange_in_order(simulated& t, bool early) {
  constexpr int per_peer = 6;
  const int n = t.size();
  struct slot {
    std::vector<int> value = std::vector<int>(1);
    sy::transport::simulated_request request;
  };
  std::vector<slot> slots(static_cast<std::size_t>(per_peer * (n - 1)));
  std::vector<std::vector<int>> values;
  values.reserve(slots.size());
  std::vector<sy::transport::simulated_request> sends;
  const auto post_receives = [&] {
    std::size_t k = 0;
    for (int p = 1; p < n; ++p) {
      for (int j = 0; j < 2; ++j, ++k) slots[k].request = t.irecv(std::span<int>(slots[k].value), (t.rank() + p) % n, sy::transport::any_tag);
    }
    for (int tag = 0; tag < 2; ++tag) {
      for (int p = 1; p < n; ++p, ++k) slots[k].request = t.irecv(std::span<int>(slots[k].value), sy::transport::any_source, tag);
    }
    for (; k < slots.size(); ++k) slots[k].request = t.irecv(std::span<int>(slots[k].value), sy::transport::any_source, sy::transport::any_tag);
  };
  if (early) post_receives();
  for (int i = 0; i < per_peer; ++i) {
    for (int p = 1; p < n; ++p) {
      values.push_back({i});
      sends.push_back(t.isend(std::span<const int>(values.back()), (t.rank() + p) % n, i % 2));
    }
  }
  if (!early) {
    for (auto& s : sends) s.wait();
    t.barrier();
    post_receives();
  }
  std::map<std::pair<int, int>, std::vector<int>> seen;  // (source, tag) -> values, in order of the receives
  for (auto& s : slots) {
    s.request.wait();
    seen[{s.request.status().source, s.request.status().tag}].push_back(s.value[0]);
  }
  for (auto& s : sends) s.wait();
  CHECK(seen.size() == static_cast<std::size_t>(2 * (n - 1)));
  for (const auto& entry : seen) {
    const int source = entry.first.first;
    const int tag = entry.first.second;
    CAPTURE(source);
    CAPTURE(tag);
    std::vector<int> want;
    for (int v = tag; v < per_peer; v += 2) want.push_back(v);
    CHECK(entry.second == want);
  }
}

}  // namespace

TEST_CASE("simulated.handle.order: non-overtaking under exact, any-source and any-tag receives, at every size" *
          doctest::timeout(120)) {
  for (const int n : {1, 2, 3, 4, 7}) {
    for (const bool early : {true, false}) {
      CAPTURE(n);
      CAPTURE(early);
      sy::transport::run_simulated(n, [early](simulated& t) { exchange_in_order(t, early); }, quiet());
    }
  }
}

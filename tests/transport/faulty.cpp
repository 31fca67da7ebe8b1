// The fault-injection decorator over the in-process transport: delays are applied, collectives
// stay correct through it, and a planned failure ends the run on every rank, the same way each time.
#include <switchyard/transport/faulty.hpp>

#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/collective/native.hpp>
#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sy = switchyard;
using sy::transport::fault_plan;
using sy::transport::faulty;
using sy::transport::inproc;
using sy::transport::run_inproc;
using namespace std::chrono_literals;

static_assert(sy::transport::transport<faulty<inproc>>);
static_assert(sy::transport::transport<faulty<faulty<inproc>>>);
// The natives are hidden, so the collectives' messages pass through the faults.
static_assert(sy::collective::has_native_allreduce<inproc, float, sy::ops::sum>);
static_assert(!sy::collective::has_native_allreduce<faulty<inproc>, float, sy::ops::sum>);
static_assert(!sy::collective::has_native_broadcast<faulty<inproc>, float>);
static_assert(!sy::collective::has_native_allgather<faulty<inproc>, float>);
static_assert(!sy::collective::has_native_reduce_scatter<faulty<inproc>, float, sy::ops::sum>);

namespace {

constexpr int world_sizes[] = {1, 2, 3, 4};

sy::transport::inproc_options options() {
  sy::transport::inproc_options o;
  o.timeout = 30s;
  return o;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One round of the exchange every transport must support: receive from the left, send to the right
// (at one rank, both are the rank itself). Two messages per round.
template <class Transport>
void ring_exchange(Transport& t, int rounds) {
  const int right = (t.rank() + 1) % t.size();
  const int left = (t.rank() + t.size() - 1) % t.size();
  std::vector<int> mine(3, t.rank());
  std::vector<int> theirs(3);
  for (int round = 0; round < rounds; ++round) {
    auto receive = t.irecv(std::span<int>(theirs), left, 7);
    auto send = t.isend(std::span<const int>(mine), right, 7);
    receive.wait();
    send.wait();
  }
}

// How a run with a planned failure ended: what run_inproc rethrew, and each rank's error and
// message count.
struct seen {
  std::string error;
  std::size_t messages = 0;
};
struct failure_report {
  std::string rethrown;
  std::vector<seen> ranks;
};

// Runs `body(faulty<inproc>&)` on every rank under `plan`; each rank records the transport_error
// that ends it and lets it leave the rank function, which is what releases its peers.
template <class Body>
failure_report run_until_failure(int ranks, const fault_plan& plan, Body body) {
  failure_report report;
  report.ranks.resize(static_cast<std::size_t>(ranks));
  try {
    run_inproc(
        ranks,
        [&](inproc& t) {
          faulty f(t, plan);
          try {
            body(f);
          } catch (const sy::transport_error& e) {
            report.ranks[static_cast<std::size_t>(t.rank())] = {e.what(), f.messages()};
            throw;
          }
        },
        options());
  } catch (const sy::transport_error& e) {
    report.rethrown = e.what();
  }
  return report;
}

failure_report fail_in_ring(int ranks, int fail_rank, std::size_t fail_after) {
  return run_until_failure(ranks, {.fail_rank = fail_rank, .fail_after = fail_after},
                           [](faulty<inproc>& f) { ring_exchange(f, 1000); });
}

}  // namespace

TEST_CASE("faulty.forward: with the default plan every message passes unchanged and counts" * doctest::timeout(60)) {
  for (int ranks : world_sizes) {
    CAPTURE(ranks);
    const std::vector<std::size_t> counts = run_inproc(
        ranks,
        [](inproc& t) {
          faulty f(t);
          ring_exchange(f, 5);
          std::vector<double> value{static_cast<double>(t.rank())};
          if (t.rank() == 0) {
            for (int peer = 1; peer < t.size(); ++peer) {
              std::vector<double> got(2);
              const sy::transport::message_status st = f.recv_any(std::span<double>(got), 9);
              if (st.count != 1 || got[0] != static_cast<double>(st.source)) return std::size_t{0};
            }
          } else {
            f.send(std::span<const double>(value), 0, 9);
          }
          f.barrier();
          return f.messages();
        },
        options());
    // Ten messages of the exchange, then one receive per peer on rank 0 and one send elsewhere.
    CHECK(counts[0] == 10 + static_cast<std::size_t>(ranks - 1));
    for (int r = 1; r < ranks; ++r) CHECK(counts[static_cast<std::size_t>(r)] == 11);
  }
}

TEST_CASE("faulty.collectives: all-reduce, broadcast and all-gather are exact through delays" * doctest::timeout(120)) {
  for (int ranks : world_sizes) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{40'000}}) {
      CAPTURE(ranks);
      CAPTURE(count);
      const std::vector<std::string> failures = run_inproc(
          ranks,
          [count](inproc& t) {
            faulty f(t, {.delay = 100us, .slow_rank = t.size() - 1, .slow_delay = 300us});
            std::string problems;
            const int n = t.size();
            std::vector<std::int64_t> ring(count), doubling(count);
            for (std::size_t i = 0; i < count; ++i) {
              ring[i] = doubling[i] = static_cast<std::int64_t>(i) * 10 + t.rank();
            }
            sy::collective::allreduce(f, ring, sy::ops::sum{}, sy::algorithm::ring{});
            sy::collective::allreduce(f, doubling, sy::ops::sum{}, sy::algorithm::recursive_doubling{});
            for (std::size_t i = 0; i < count; ++i) {
              const std::int64_t expected = static_cast<std::int64_t>(i) * 10 * n + n * (n - 1) / 2;
              if (ring[i] != expected || doubling[i] != expected) {
                problems += sy::detail::str("allreduce element ", i, ": ring ", ring[i], ", recursive doubling ",
                                            doubling[i], ", expected ", expected, "; ");
                break;
              }
            }
            std::vector<float> root_data(count, t.rank() == n - 1 ? 2.5f : 0.0f);
            sy::collective::broadcast(f, root_data, n - 1);
            for (float v : root_data) {
              if (v != 2.5f) {
                problems += sy::detail::str("broadcast gave ", v, "; ");
                break;
              }
            }
            const std::vector<int> mine(count % 5, t.rank());
            std::vector<int> all(mine.size() * static_cast<std::size_t>(n));
            sy::collective::allgather(f, mine, all);
            for (std::size_t i = 0; i < all.size(); ++i) {
              if (all[i] != static_cast<int>(i / mine.size())) {
                problems += sy::detail::str("allgather element ", i, " is ", all[i], "; ");
                break;
              }
            }
            return problems;
          },
          options());
      for (const std::string& problem : failures) CHECK_MESSAGE(problem.empty(), problem);
    }
  }
}

TEST_CASE("faulty.delay: every message waits at least the planned delay" * doctest::timeout(60)) {
  constexpr int rounds = 10;
  constexpr auto delay = 2ms;
  for (int ranks : world_sizes) {
    CAPTURE(ranks);
    const std::vector<std::chrono::nanoseconds> elapsed = run_inproc(
        ranks,
        [&](inproc& t) {
          faulty f(t, {.delay = delay});
          const auto started = std::chrono::steady_clock::now();
          ring_exchange(f, rounds);
          return std::chrono::steady_clock::now() - started;
        },
        options());
    for (const auto& e : elapsed) CHECK(e >= 2 * rounds * delay);
  }
}

TEST_CASE("faulty.slow_rank: the straggler's messages wait the extra delay, its peers wait for it" *
          doctest::timeout(60)) {
  constexpr int rounds = 10;
  constexpr auto slow_delay = 3ms;
  for (int ranks : world_sizes) {
    CAPTURE(ranks);
    const int slow = ranks / 2;
    // Every rank's finish is measured from one instant before any rank started: the straggler
    // starts after it and sleeps 2 * rounds times, and the barrier holds the others until it is through.
    const auto origin = std::chrono::steady_clock::now();
    const std::vector<std::chrono::nanoseconds> finished = run_inproc(
        ranks,
        [&](inproc& t) {
          faulty f(t, {.slow_rank = slow, .slow_delay = slow_delay});
          ring_exchange(f, rounds);
          f.barrier();
          return std::chrono::steady_clock::now() - origin;
        },
        options());
    for (const auto& e : finished) CHECK(e >= 2 * rounds * slow_delay);
  }
}

TEST_CASE("faulty.fail_after: the planned rank fails at its K+1-th message; the run ends on every rank" *
          doctest::timeout(60)) {
  for (int ranks : world_sizes) {
    for (std::size_t fail_after : {std::size_t{0}, std::size_t{1}, std::size_t{9}}) {
      const int fail_rank = ranks - 1;
      CAPTURE(ranks);
      CAPTURE(fail_after);
      const failure_report report = fail_in_ring(ranks, fail_rank, fail_after);
      CHECK(report.rethrown == report.ranks[static_cast<std::size_t>(fail_rank)].error);
      for (int r = 0; r < ranks; ++r) {
        const seen& s = report.ranks[static_cast<std::size_t>(r)];
        CAPTURE(r);
        CAPTURE(s.error);
        if (r == fail_rank) {
          CHECK(contains(s.error, sy::detail::str("rank ", fail_rank, ": injected failure after ", fail_after,
                                                  " messages (fault_plan::fail_rank ", fail_rank)));
          CHECK(s.messages == fail_after);
        } else {
          CHECK(contains(s.error, sy::detail::str("abandoned because rank ", fail_rank, " failed: ")));
        }
      }
      // Deterministic: the same plan fails at the same call with the same words.
      CHECK(fail_in_ring(ranks, fail_rank, fail_after).rethrown == report.rethrown);
    }
  }
}

TEST_CASE("faulty.fail_after: a collective's peers are released and run_inproc rethrows the injected error" *
          doctest::timeout(60)) {
  for (int ranks : {2, 3, 4}) {
    CAPTURE(ranks);
    // Rank 0 passes the four messages of the exchange, then dies at its first all-reduce message.
    const failure_report report = run_until_failure(ranks, {.fail_rank = 0, .fail_after = 4}, [](faulty<inproc>& f) {
      std::vector<float> data(100, 1.0f);
      ring_exchange(f, 2);
      for (int step = 0; step < 1000; ++step) sy::collective::allreduce(f, data);
    });
    CAPTURE(report.rethrown);
    CHECK(contains(report.rethrown, "allreduce of 100 elements on rank 0: [faulty.hpp:"));
    CHECK(contains(report.rethrown, "rank 0: injected failure after 4 messages"));
    for (int r = 1; r < ranks; ++r) {
      CHECK(contains(report.ranks[static_cast<std::size_t>(r)].error, "abandoned because rank 0 failed: "));
    }
  }
}

TEST_CASE("faulty.dead: a failed rank stays failed, in barriers and splits too" * doctest::timeout(60)) {
  run_inproc(
      1,
      [](inproc& t) {
        faulty f(t, {.fail_rank = 0, .fail_after = 2});
        ring_exchange(f, 1);
        CHECK_THROWS_WITH_AS(ring_exchange(f, 1), doctest::Contains("at its receive from rank 0 with tag 7"),
                             sy::transport_error);
        faulty copy = f;
        CHECK_THROWS_WITH_AS(copy.barrier(), doctest::Contains("injected failure after 2 messages"),
                             sy::transport_error);
        CHECK_THROWS_WITH_AS(copy.barrier(), doctest::Contains("at its barrier"), sy::transport_error);
        CHECK_THROWS_WITH_AS((void)f.split(0, 0), doctest::Contains("at its split"), sy::transport_error);
        CHECK(f.messages() == 2);
      },
      options());
}

TEST_CASE("faulty.split: a split handle keeps its rank's plan and count" * doctest::timeout(60)) {
  // Ranks 0 and 2 form one group, 1 and 3 the other; rank 3 (rank 1 of its group) fails after
  // two messages on the world handle and one on the split one.
  const failure_report report = run_until_failure(4, {.fail_rank = 3, .fail_after = 3}, [](faulty<inproc>& f) {
    ring_exchange(f, 1);
    faulty half = f.split(f.rank() % 2, f.rank());
    ring_exchange(half, 10);
  });
  const seen& failed = report.ranks[3];
  CAPTURE(failed.error);
  CHECK(contains(failed.error, "rank 3 (rank 1 of its group): injected failure after 3 messages"));
  CHECK(contains(failed.error, "at its send to rank 0 with tag 7"));
  CHECK(failed.messages == 3);
  CHECK(contains(report.ranks[1].error, "abandoned because rank 3 failed"));
}

TEST_CASE("faulty.plan: ranks outside the group and negative delays are usage errors" * doctest::timeout(60)) {
  run_inproc(
      3,
      [](inproc& t) {
        if (t.rank() != 0) return;  // doctest checks on the caller's thread only
        CHECK_THROWS_WITH_AS(faulty(t, {.fail_rank = 3}), doctest::Contains("fault_plan::fail_rank names rank 3"),
                             sy::usage_error);
        CHECK_THROWS_WITH_AS(faulty(t, {.slow_rank = -1}), doctest::Contains("ranks 0 to 2"), sy::usage_error);
        CHECK_THROWS_WITH_AS(faulty(t, {.delay = -1us}), doctest::Contains("must not be negative"), sy::usage_error);
      },
      options());
}

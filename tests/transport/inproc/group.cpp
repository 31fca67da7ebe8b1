// transport/inproc/group.hpp: a group of in-process ranks, its barrier, and how a rank waits
// (until done, until the world aborts, or until the timeout passes).
#include <switchyard/transport/inproc/group.hpp>

#include "threads.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sy = switchyard;
namespace d = sy::transport::detail;
using inproc_test::make_group;
using inproc_test::on_threads;
using inproc_test::quick;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("inproc.group.members: group ranks map to world ranks, one mailbox and check state each") {
  sy::transport::inproc_options options;
  options.check_collectives = true;
  auto fabric = std::make_shared<d::inproc_fabric>(5, options);
  const d::inproc_group g(fabric, {4, 1, 3});
  CHECK(g.size == 3);
  CHECK(g.world_ranks == std::vector<int>{4, 1, 3});
  CHECK(&g.waker_of(0) == &fabric->wakers[4]);
  CHECK(&g.waker_of(2) == &fabric->wakers[3]);
  REQUIRE(g.checks.size() == 3);
  CHECK(g.checks[1].enabled);
  CHECK(g.checks[1].sequence == 0);
  CHECK(g.window.size() == 3);
}

TEST_CASE("inproc.group.wait_until: returns once done, without sleeping when it is done already") {
  auto g = make_group(2, quick(5'000));
  const auto started = std::chrono::steady_clock::now();
  d::wait_until(*g, 0, [] { return true; }, [] { return std::string("nothing"); });
  std::atomic<bool> done{false};
  std::jthread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    done.store(true);
    g->waker_of(1).notify();
  });
  d::wait_until(*g, 1, [&] { return done.load(); }, [] { return std::string("the setter"); });
  CHECK(done.load());
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(4));
}

TEST_CASE("inproc.group.wait_until: the timeout names the rank and what it waited for") {
  auto g = make_group(2, quick(50));
  CHECK_THROWS_WITH_AS(d::wait_until(*g, 1, [] { return false; }, [] { return std::string("a message"); }),
                       doctest::Contains("rank 1: a message did not complete within 50 ms (inproc_options::timeout)"),
                       sy::timeout_error);
}

TEST_CASE("inproc.group.wait_until: a failed rank releases the waiters, who say why") {
  auto g = make_group(3, quick(60'000));
  std::string raised;
  std::atomic<bool> waiting{false};
  std::jthread waiter([&] {
    try {
      waiting.store(true);
      d::wait_until(*g, 1, [] { return false; }, [] { return std::string("a receive"); });
    } catch (const sy::transport_error& e) {
      raised = e.what();
    }
  });
  while (!waiting.load()) std::this_thread::yield();
  g->fabric->abort(2, std::make_exception_ptr(std::runtime_error("boom")), "boom");
  waiter.join();
  CHECK(raised.ends_with("] rank 1: a receive abandoned because rank 2 failed: boom"));
}

TEST_CASE("inproc.group.checks: a peer outside the group and a world that has ended are usage errors") {
  auto g = make_group(3);
  CHECK_THROWS_WITH_AS(d::check_peer(*g, 0, 3, "send", false),
                       doctest::Contains("rank 0: send names rank 3 but the group has ranks 0 to 2"), sy::usage_error);
  CHECK_THROWS_AS(d::check_peer(*g, 0, -1, "send", false), sy::usage_error);
  CHECK_THROWS_AS(d::check_peer(*g, 0, sy::transport::any_source, "send", false), sy::usage_error);
  CHECK_NOTHROW(d::check_peer(*g, 0, sy::transport::any_source, "receive", true));
  CHECK_NOTHROW(d::check_peer(*g, 1, 2, "send", false));
  g->fabric->ended.store(true);
  CHECK_THROWS_WITH_AS(d::check_usable(*g, 1, "barrier"),
                       doctest::Contains("rank 1: barrier on an in-process transport whose world has ended"),
                       sy::usage_error);
  CHECK_THROWS_AS(d::check_peer(*g, 1, 2, "send", false), sy::usage_error);
}

TEST_CASE("inproc.group.barrier: nobody leaves before everybody arrived, round after round") {
  auto g = make_group(4);
  std::atomic<int> arrived{0};
  std::atomic<int> early{0};
  const auto raised = on_threads(4, [&](int rank) {
    for (int round = 1; round <= 20; ++round) {
      arrived.fetch_add(1);
      d::barrier(*g, rank);
      if (arrived.load() < 4 * round) early.fetch_add(1);
      d::barrier(*g, rank);
    }
  });
  CHECK(early.load() == 0);
  CHECK(g->barrier_generation.load() == 40);
  for (const std::string& r : raised) CHECK(r.empty());
}

TEST_CASE("inproc.group.barrier: the timeout names the ranks that are not there") {
  auto g = make_group(4, quick(200));
  // Rank 2 is counted in and stays; rank 0 waits with it. (A rank that gives up is not there any
  // more: two that both time out could each name the other.)
  CHECK_FALSE(d::arrive(*g, 2, false).last);
  CHECK_THROWS_WITH_AS(d::barrier(*g, 0), doctest::Contains("rank 0: barrier of 4 ranks (waiting for rank 1, 3)"),
                       sy::timeout_error);
}

TEST_CASE("inproc.group.barrier: a rank that timed out is not counted; the others cannot pass without it") {
  auto g = make_group(2, quick(50));
  CHECK_THROWS_AS(d::barrier(*g, 0), sy::timeout_error);
  CHECK_THROWS_WITH_AS(d::barrier(*g, 1), doctest::Contains("barrier of 2 ranks (waiting for rank 0)"),
                       sy::timeout_error);
  CHECK(g->barrier_generation.load() == 0);
  // Both arrive now, with time to start their threads: the barrier works as before.
  g->fabric->options.timeout = std::chrono::seconds(60);
  const auto raised = on_threads(2, [&](int rank) { d::barrier(*g, rank); });
  for (const std::string& r : raised) CHECK(r.empty());
  CHECK(g->barrier_generation.load() == 1);
}

TEST_CASE("inproc.group.barrier: once the world has aborted no rank passes, also the last to arrive") {
  auto g = make_group(2, quick(60'000));
  std::string first;
  std::atomic<bool> arrived{false};
  std::jthread waiter([&] {
    try {
      arrived.store(true);
      d::barrier(*g, 0);
    } catch (const sy::transport_error& e) {
      first = e.what();
    }
  });
  while (!arrived.load()) std::this_thread::yield();
  // Rank 0 may not have counted itself in yet when the world aborts: either way it must not pass.
  g->fabric->abort(1, std::make_exception_ptr(std::runtime_error("boom")), "boom");
  waiter.join();
  CHECK(contains(first, "rank 0: barrier of 2 ranks"));
  CHECK(contains(first, "abandoned because rank 1 failed: boom"));
  CHECK_THROWS_WITH_AS(d::barrier(*g, 1), doctest::Contains("rank 1: barrier of 2 ranks abandoned because rank 1 failed"),
                       sy::transport_error);
  CHECK(g->barrier_generation.load() == 0);
}

TEST_CASE("inproc.group.closing_barrier: waits through an abort, and tells every rank whether one failed") {
  auto g = make_group(3, quick(50));
  std::vector<int> outcomes(3, -1);
  std::atomic<bool> late{true};
  const auto raised = on_threads(3, [&](int rank) {
    if (rank == 2) {
      // Arrives after the timeout has passed and the world has aborted: the others still wait.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      g->fabric->abort(2, std::make_exception_ptr(std::runtime_error("boom")), "boom");
      late.store(false);
    }
    outcomes[static_cast<std::size_t>(rank)] = d::closing_barrier(*g, rank, rank == 1) ? 1 : 0;
    if (late.load()) throw std::runtime_error("passed before rank 2 arrived");
  });
  for (const std::string& r : raised) CHECK(r.empty());
  CHECK(outcomes == std::vector<int>{1, 1, 1});
  // The next closing barrier starts clean.
  const auto again = on_threads(3, [&](int rank) {
    outcomes[static_cast<std::size_t>(rank)] = d::closing_barrier(*g, rank, false) ? 1 : 0;
  });
  for (const std::string& r : again) CHECK(r.empty());
  CHECK(outcomes == std::vector<int>{0, 0, 0});
}

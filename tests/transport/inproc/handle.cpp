// transport/inproc/handle.hpp: one rank's handle: point-to-point, any-source receives, barrier,
// split, the native collectives' entry points and the collective check state. Handles are made
// by the world's launcher, so it comes in too.
#include <switchyard/transport/inproc/handle.hpp>

#include <switchyard/transport/inproc/world.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sy = switchyard;
using sy::transport::inproc;
using sy::transport::run_inproc;

static_assert(sy::transport::transport<inproc>);
static_assert(sy::transport::has_collective_checks<inproc>);

namespace {

sy::transport::inproc_options quick_timeout() {
  sy::transport::inproc_options o;
  o.timeout = std::chrono::milliseconds(300);
  return o;
}

}  // namespace

TEST_CASE("inproc.handle.copies: copies are the same rank of the same group; a split has checks of its own") {
  sy::transport::inproc_options options;
  options.check_collectives = true;
  run_inproc(
      3,
      [](inproc& t) {
        inproc copy = t;
        CHECK(copy.rank() == t.rank());
        CHECK(copy.size() == 3);
        CHECK(&copy.collective_checks() == &t.collective_checks());
        CHECK(t.collective_checks().enabled);
        t.collective_checks().sequence = 5;
        inproc sub = t.split(0, t.rank());
        CHECK(&sub.collective_checks() != &t.collective_checks());
        CHECK(sub.collective_checks().enabled);
        CHECK(sub.collective_checks().sequence == 0);
        CHECK(copy.collective_checks().sequence == 5);
      },
      options);
}

TEST_CASE("inproc.handle.native: the handle's native collectives reach every rank") {
  const auto results = run_inproc(3, [](inproc& t) {
    std::vector<double> sum{static_cast<double>(t.rank()), 1.0};
    t.native_allreduce(std::span<double>(sum), sy::ops::sum{});
    std::vector<int> root(2, t.rank() == 2 ? 9 : 0);
    t.native_broadcast(std::span<int>(root), 2);
    const std::vector<int> mine{t.rank()};
    std::vector<int> all(3);
    t.native_allgather(std::span<const int>(mine), std::span<int>(all));
    std::vector<float> scattered(6, 1.0F);
    const std::span<float> block = t.native_reduce_scatter(std::span<float>(scattered), sy::ops::sum{});
    CHECK(block.size() == 2);
    for (const float v : block) CHECK(v == 3.0F);
    CHECK(sum == std::vector<double>{3.0, 3.0});
    CHECK(root == std::vector<int>{9, 9});
    CHECK(all == std::vector<int>{0, 1, 2});
    return block.data() - scattered.data();
  });
  CHECK(results == std::vector<std::ptrdiff_t>{0, 2, 4});
}

TEST_CASE("inproc.recv_any: a server hears every worker, with sources and counts") {
  run_inproc(4, [](inproc& t) {
    if (t.rank() == 0) {
      std::vector<int> seen(4, 0);
      std::vector<float> buffer(10);
      for (int i = 0; i < 3 * 5; ++i) {
        const sy::transport::message_status st = t.recv_any(std::span<float>(buffer), 3);
        CHECK(st.count == static_cast<std::size_t>(st.source));
        CHECK(buffer[0] == static_cast<float>(st.source));
        ++seen[static_cast<std::size_t>(st.source)];
      }
      CHECK(seen == std::vector<int>{0, 5, 5, 5});
    } else {
      std::vector<float> payload(static_cast<std::size_t>(t.rank()), static_cast<float>(t.rank()));
      for (int i = 0; i < 5; ++i) t.send(std::span<const float>(payload), 0, 3);
    }
  });
}

TEST_CASE("inproc.barrier: nobody leaves before everybody arrived") {
  std::atomic<int> arrived{0};
  run_inproc(5, [&](inproc& t) {
    for (int round = 1; round <= 20; ++round) {
      arrived.fetch_add(1);
      t.barrier();
      CHECK(arrived.load() >= 5 * round);
      t.barrier();
    }
  });
}

TEST_CASE("inproc.split: groups by color, ranked by key, isolated from each other") {
  const auto result = run_inproc(7, [](inproc& t) {
    inproc sub = t.split(t.rank() % 2, -t.rank());
    // Messages in one group never reach the other: both use tag 0 at once.
    std::vector<int> token{t.rank()};
    std::vector<int> from_left(1);
    auto r = sub.irecv(std::span<int>(from_left), (sub.rank() + sub.size() - 1) % sub.size(), 0);
    sub.send(std::span<const int>(token), (sub.rank() + 1) % sub.size(), 0);
    r.wait();
    sub.barrier();
    return std::vector<int>{sub.rank(), sub.size(), from_left[0]};
  });
  // Evens 0,2,4,6 with keys 0,-2,-4,-6 rank as 6,4,2,0; odds 1,3,5 as 5,3,1.
  CHECK(result[6] == std::vector<int>{0, 4, 0});
  CHECK(result[0] == std::vector<int>{3, 4, 2});
  CHECK(result[5] == std::vector<int>{0, 3, 1});
  CHECK(result[1] == std::vector<int>{2, 3, 3});
}

TEST_CASE("inproc.errors.bad_rank: a peer outside the group is a usage error naming it") {
  run_inproc(3, [](inproc& t) {
    std::vector<int> data(1);
    CHECK_THROWS_WITH_AS(t.send(std::span<const int>(data), 3, 0), doctest::Contains("names rank 3"),
                         sy::usage_error);
    CHECK_THROWS_WITH_AS(t.recv(std::span<int>(data), -2, 0), doctest::Contains("ranks 0 to 2"), sy::usage_error);
    CHECK_THROWS_AS((void)t.split(-1, 0), sy::usage_error);
  });
}

TEST_CASE("inproc.errors.after_end: a handle that outlived its world refuses to work") {
  std::optional<inproc> escaped;
  run_inproc(1, [&](inproc& t) { escaped = t; });
  std::vector<int> data(1);
  CHECK_THROWS_WITH_AS(escaped->barrier(), doctest::Contains("world has ended"), sy::usage_error);
  CHECK_THROWS_AS(escaped->send(std::span<const int>(data), 0, 0), sy::usage_error);
}

TEST_CASE("inproc.errors.barrier_timeout: names the ranks that never arrived") {
  CHECK_THROWS_WITH_AS(run_inproc(
                           3,
                           [](inproc& t) {
                             if (t.rank() != 2) t.barrier();
                           },
                           quick_timeout()),
                       doctest::Contains("waiting for rank 2"), sy::timeout_error);
}

// transport/inproc/world.hpp: the launcher: one thread per rank, results by rank, the
// options' validation, and the first failure rethrown after the others are released.
#include <switchyard/transport/inproc/world.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace sy = switchyard;
using sy::transport::inproc;
using sy::transport::run_inproc;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

static_assert(std::is_void_v<decltype(run_inproc(1, [](inproc&) {}))>);
static_assert(std::is_same_v<decltype(run_inproc(1, [](inproc&) { return 1.0; })), std::vector<double>>);

TEST_CASE("inproc.world.threads: rank 0 runs on the caller's thread, every other rank on a thread of its own") {
  const std::thread::id caller = std::this_thread::get_id();
  sy::transport::inproc_world world(4);
  CHECK(world.size() == 4);
  const auto ids = world.run([](inproc&) { return std::this_thread::get_id(); });
  CHECK(ids[0] == caller);
  for (std::size_t a = 1; a < ids.size(); ++a) {
    CHECK(ids[a] != caller);
    for (std::size_t b = a + 1; b < ids.size(); ++b) CHECK(ids[a] != ids[b]);
  }
  // A world can run again: each run is a new world of the same size.
  CHECK(world.run([](inproc& t) { return t.size(); }) == std::vector<int>{4, 4, 4, 4});
}

TEST_CASE("inproc.run: every rank runs once, results come back by rank") {
  for (int ranks : {1, 2, 3, 7}) {
    const std::vector<int> seen = run_inproc(ranks, [](inproc& t) { return t.rank() * 100 + t.size(); });
    REQUIRE(seen.size() == static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) CHECK(seen[static_cast<std::size_t>(r)] == r * 100 + ranks);
  }
}

TEST_CASE("inproc.errors.world_size: a world needs a rank") {
  CHECK_THROWS_WITH_AS(run_inproc(0, [](inproc&) {}), doctest::Contains("at least 1 rank, got 0"), sy::usage_error);
  CHECK_THROWS_AS(run_inproc(-3, [](inproc&) {}), sy::usage_error);
}

TEST_CASE("inproc.errors.node_sizes: node sizes must be positive and add up to the world size, and say so") {
  struct bad_case {
    int ranks;
    std::vector<int> sizes;
    std::string expected;
  };
  const std::vector<bad_case> cases = {
      {6, {3, 1, 1}, "inproc_options::node_sizes {3, 1, 1} must be positive and add up to the 6 ranks of the world, not 5"},
      {4, {3, 2}, "inproc_options::node_sizes {3, 2} must be positive and add up to the 4 ranks of the world, not 5"},
      {3, {3, 0}, "inproc_options::node_sizes {3, 0} must be positive and add up to the 3 ranks of the world"},
      {2, {3, -1}, "inproc_options::node_sizes {3, -1} must be positive and add up to the 2 ranks of the world"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.expected);
    sy::transport::inproc_options o;
    o.node_sizes = c.sizes;
    CHECK_THROWS_WITH_AS(run_inproc(c.ranks, [](inproc&) {}, o), doctest::Contains(c.expected.c_str()), sy::usage_error);
  }
  sy::transport::inproc_options good;
  good.node_sizes = {1, 2};
  CHECK(run_inproc(3, [](inproc& t) { return t.topology().node; }, good) == std::vector<int>{0, 1, 1});
}

TEST_CASE("inproc.errors.timeout_value: a timeout must be positive; the largest one waits as long as it takes") {
  for (const std::chrono::milliseconds bad : {std::chrono::milliseconds(0), std::chrono::milliseconds(-5)}) {
    CAPTURE(bad.count());
    sy::transport::inproc_options o;
    o.timeout = bad;
    const std::string expected = "inproc_options::timeout must be positive, got " + std::to_string(bad.count()) + " ms";
    CHECK_THROWS_WITH_AS(sy::transport::inproc_world(2, o), doctest::Contains(expected.c_str()), sy::usage_error);
  }
  // milliseconds::max() once overflowed into a deadline in the past: the first wait beyond the
  // spins timed out at once.
  sy::transport::inproc_options forever;
  forever.timeout = std::chrono::milliseconds::max();
  const auto received = run_inproc(
      2,
      [](inproc& t) {
        std::vector<int> data{0, 0};
        if (t.rank() == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          data = {7, 8};
          t.send(std::span<const int>(data), 1, 3);
        } else {
          t.recv(std::span<int>(data), 0, 3);
        }
        t.barrier();
        return data;
      },
      forever);
  CHECK(received[1] == std::vector<int>{7, 8});
}

TEST_CASE("inproc.errors.first_failure: rethrown as raised, the others released") {
  std::atomic<int> released{0};
  auto run = [&] {
    run_inproc(4, [&](inproc& t) {
      if (t.rank() == 2) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        throw std::invalid_argument("bad batch on rank 2");
      }
      try {
        t.barrier();
      } catch (const sy::transport_error& e) {
        if (contains(e.what(), "rank 2 failed: bad batch on rank 2")) released.fetch_add(1);
        throw;
      }
    });
  };
  CHECK_THROWS_WITH_AS(run(), "bad batch on rank 2", std::invalid_argument);
  CHECK(released.load() == 3);
}

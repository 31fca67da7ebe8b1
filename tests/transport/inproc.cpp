#include <switchyard/transport/inproc.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sy = switchyard;
using sy::transport::inproc;
using sy::transport::run_inproc;

static_assert(sy::transport::transport<inproc>);
static_assert(std::is_nothrow_move_constructible_v<inproc::request>);

namespace {

sy::transport::inproc_options quick_timeout() {
  sy::transport::inproc_options o;
  o.timeout = std::chrono::milliseconds(300);
  return o;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("inproc.run: every rank runs once, results come back by rank") {
  for (int ranks : {1, 2, 3, 7}) {
    const std::vector<int> seen = run_inproc(ranks, [](inproc& t) { return t.rank() * 100 + t.size(); });
    REQUIRE(seen.size() == static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) CHECK(seen[static_cast<std::size_t>(r)] == r * 100 + ranks);
  }
}

TEST_CASE("inproc.send_recv: blocking and non-blocking, posted before or after the send") {
  run_inproc(2, [](inproc& t) {
    std::vector<double> data(5);
    if (t.rank() == 0) {
      std::iota(data.begin(), data.end(), 1.0);
      t.send(std::span<const double>(data), 1, 7);          // receiver not there yet
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      t.send(std::span<const double>(data), 1, 8);          // receiver already waiting
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      t.recv(std::span<double>(data), 0, 7);
      CHECK(data[4] == 5.0);
      std::vector<double> again(5);
      auto request = t.irecv(std::span<double>(again), 0, 8);
      request.wait();
      CHECK(again == data);
      CHECK(request.status().source == 0);
      CHECK(request.status().tag == 8);
      CHECK(request.status().count == 5);
    }
  });
}

TEST_CASE("inproc.ordering: messages of one pair and tag arrive in order; tags are matched apart") {
  run_inproc(2, [](inproc& t) {
    if (t.rank() == 0) {
      // A blocking send completes only when received, so the sends are posted non-blocking.
      std::vector<int> values(50);
      std::iota(values.begin(), values.end(), 0);
      std::vector<inproc::request> sends;
      for (int i = 0; i < 50; ++i) sends.push_back(t.isend(std::span<const int>(&values[static_cast<std::size_t>(i)], 1), 1, i % 2));
      for (auto& s : sends) s.wait();
    } else {
      int value[1];
      for (int i = 1; i < 50; i += 2) {
        t.recv(std::span<int>(value), 0, 1);
        CHECK(value[0] == i);
      }
      for (int i = 0; i < 50; i += 2) {
        t.recv(std::span<int>(value), 0, 0);
        CHECK(value[0] == i);
      }
    }
  });
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

TEST_CASE("inproc.requests: movable, storable, cancelled on destruction") {
  run_inproc(3, [](inproc& t) {
    if (t.rank() == 0) {
      std::vector<std::vector<int>> inbox(2, std::vector<int>(3));
      std::vector<inproc::request> pending;
      for (int peer = 1; peer < 3; ++peer) {
        pending.push_back(t.irecv(std::span<int>(inbox[static_cast<std::size_t>(peer - 1)]), peer, 0));
      }
      for (auto& r : pending) r.wait();
      CHECK(inbox[0] == std::vector<int>{1, 1, 1});
      CHECK(inbox[1] == std::vector<int>{2, 2, 2});
      {
        // Never matched: destroying it must unlink it, so the later message finds the right receive.
        std::vector<int> abandoned(3);
        auto r = t.irecv(std::span<int>(abandoned), 1, 5);
      }
      t.barrier();
      std::vector<int> later(3);
      t.recv(std::span<int>(later), 1, 5);
      CHECK(later == std::vector<int>{9, 9, 9});
    } else {
      const std::vector<int> payload(3, t.rank());
      t.send(std::span<const int>(payload), 0, 0);
      t.barrier();
      if (t.rank() == 1) {
        const std::vector<int> nine(3, 9);
        t.send(std::span<const int>(nine), 0, 5);
      }
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

TEST_CASE("inproc.errors.size_mismatch: both sides learn the sizes") {
  const auto caught = run_inproc(2, [](inproc& t) -> std::string {
    try {
      if (t.rank() == 0) {
        const std::vector<float> eight(8);
        t.send(std::span<const float>(eight), 1, 0);
      } else {
        std::vector<float> six(6);
        t.recv(std::span<float>(six), 0, 0);
      }
    } catch (const sy::transport_error& e) {
      return e.what();
    }
    return "no error";
  });
  for (const std::string& what : caught) {
    CAPTURE(what);
    CHECK(contains(what, "has 8 elements"));
    CHECK(contains(what, "expects 6"));
  }
  CHECK(contains(caught[0], "rank 0"));
  CHECK(contains(caught[1], "rank 1"));
}

TEST_CASE("inproc.errors.type_mismatch: a float message does not land in a double buffer") {
  const auto caught = run_inproc(2, [](inproc& t) -> std::string {
    try {
      if (t.rank() == 0) {
        const std::vector<float> four(4);
        t.send(std::span<const float>(four), 1, 0);
      } else {
        std::vector<double> two(2);
        t.recv(std::span<double>(two), 0, 0);
      }
    } catch (const sy::transport_error& e) {
      return e.what();
    }
    return "no error";
  });
  CHECK(contains(caught[1], "another type"));
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

TEST_CASE("inproc.errors.world_size: a world needs a rank") {
  CHECK_THROWS_WITH_AS(run_inproc(0, [](inproc&) {}), doctest::Contains("at least 1 rank, got 0"), sy::usage_error);
  CHECK_THROWS_AS(run_inproc(-3, [](inproc&) {}), sy::usage_error);
}

TEST_CASE("inproc.errors.after_end: a handle that outlived its world refuses to work") {
  std::optional<inproc> escaped;
  run_inproc(1, [&](inproc& t) { escaped = t; });
  std::vector<int> data(1);
  CHECK_THROWS_WITH_AS(escaped->barrier(), doctest::Contains("world has ended"), sy::usage_error);
  CHECK_THROWS_AS(escaped->send(std::span<const int>(data), 0, 0), sy::usage_error);
}

TEST_CASE("inproc.errors.timeout: a receive nobody matches names rank, peer and tag") {
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(run_inproc(
                           2,
                           [](inproc& t) {
                             std::vector<int> data(4);
                             if (t.rank() == 1) t.recv(std::span<int>(data), 0, 42);
                           },
                           quick_timeout()),
                       doctest::Contains("rank 1: receive of 4 elements from rank 0 with tag 42 did not complete "
                                         "within 300 ms (inproc_options::timeout)"),
                       sy::timeout_error);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
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

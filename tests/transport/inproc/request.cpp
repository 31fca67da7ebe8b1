// transport/inproc/request.hpp: a non-blocking send or receive: matching in order, completion,
// cancellation on destruction, and the errors of a pair that does not fit. Requests are made by
// an inproc handle, so the world's launcher comes in too.
#include <switchyard/transport/inproc/request.hpp>

#include <switchyard/transport/inproc/world.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace sy = switchyard;
using sy::transport::inproc;
using sy::transport::inproc_request;
using sy::transport::run_inproc;

static_assert(std::is_nothrow_move_constructible_v<inproc::request>);
static_assert(!std::is_copy_constructible_v<inproc_request>);

namespace {

sy::transport::inproc_options quick_timeout() {
  sy::transport::inproc_options o;
  o.timeout = std::chrono::milliseconds(300);
  return o;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("inproc.request.default: a default request is complete and received nothing") {
  inproc_request r;
  CHECK(r.test());
  r.wait();
  CHECK(r.status().count == 0);
}

TEST_CASE("inproc.request.completion: test() says false until the peer matches, then true with the status") {
  run_inproc(2, [](inproc& t) {
    std::vector<int> data(3);
    if (t.rank() == 1) {
      inproc_request r = t.irecv(std::span<int>(data), 0, 4);
      CHECK_FALSE(r.test());  // rank 0 sends only after this barrier
      t.barrier();
      while (!r.test()) std::this_thread::yield();
      CHECK(data == std::vector<int>{5, 6, 7});
      CHECK(r.status().source == 0);
      CHECK(r.status().tag == 4);
      CHECK(r.status().count == 3);
      // A moved request carries its completion; the moved-from one is complete and empty.
      inproc_request moved = std::move(r);
      CHECK(moved.test());
      CHECK(moved.status().count == 3);
      CHECK(r.test());  // NOLINT(bugprone-use-after-move): a moved-from request is a default one
    } else {
      t.barrier();
      data = {5, 6, 7};
      inproc_request s = t.isend(std::span<const int>(data), 1, 4);
      s.wait();
      CHECK(s.test());
    }
  });
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

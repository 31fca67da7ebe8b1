// transport/mpi/request.hpp: a non-blocking send or receive: completion by wait() or test(), the
// status of a receive, moves, waiting on destruction, and the exact-size rule. Requests are made
// by an mpi handle, so the handle comes in too.
#include <switchyard/transport/mpi/request.hpp>

#include <switchyard/transport/mpi/handle.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace sy = switchyard;
using sy::transport::mpi;
using sy::transport::mpi_options;
using sy::transport::mpi_request;
using sy::transport::mpi_wait;
using namespace std::chrono_literals;

static_assert(sy::transport::request<mpi_request>);
static_assert(std::is_same_v<mpi::request, mpi_request>);
static_assert(std::is_nothrow_move_constructible_v<mpi_request>);
static_assert(!std::is_copy_constructible_v<mpi_request>);
static_assert(!std::is_copy_assignable_v<mpi_request>);

TEST_CASE("mpi.request.default: a default request is complete and received nothing") {
  mpi_request r;
  r.wait();
  CHECK(r.test());
  CHECK(r.status().source == -1);
  CHECK(r.status().count == 0);
  mpi_request moved(std::move(r));
  moved.wait();
  CHECK(moved.test());
}

TEST_CASE("mpi.request.self: a message to this rank completes by test() and reports its status") {
  // Blocking waits, polled ones under the watchdog, and passive ones.
  for (const mpi_options& options : {mpi_options{.timeout = 0ms, .wait = mpi_wait::spin},
                                     mpi_options{.timeout = 60s, .wait = mpi_wait::spin},
                                     mpi_options{.timeout = 0ms, .wait = mpi_wait::passive}}) {
    mpi t{options};
    const std::vector<float> sent{1.5f, 2.5f, static_cast<float>(t.rank())};
    std::vector<float> received(3);
    mpi_request receive = t.irecv(std::span<float>(received), t.rank(), 4);
    mpi_request send = t.isend(std::span<const float>(sent), t.rank(), 4);
    while (!receive.test()) std::this_thread::yield();
    send.wait();
    CHECK(receive.test());
    CHECK(receive.status().source == t.rank());
    CHECK(receive.status().tag == 4);
    CHECK(receive.status().count == 3);
    CHECK(received == sent);
  }
}

TEST_CASE("mpi.request.move: a moved request carries its operation; assigning over a pending one completes it") {
  mpi t;
  const std::vector<int> first{7};
  const std::vector<int> second{8};
  std::vector<int> got_first(1);
  std::vector<int> got_second(1);
  mpi_request send_first = t.isend(std::span<const int>(first), t.rank(), 1);
  mpi_request send_second = t.isend(std::span<const int>(second), t.rank(), 2);
  mpi_request receive = t.irecv(std::span<int>(got_first), t.rank(), 1);
  receive = t.irecv(std::span<int>(got_second), t.rank(), 2);
  CHECK(got_first[0] == 7);  // the first receive was waited for when it was assigned over
  mpi_request moved(std::move(receive));
  CHECK(receive.test());  // NOLINT(bugprone-use-after-move): a moved-from request is empty
  moved.wait();
  CHECK(got_second[0] == 8);
  CHECK(moved.status().tag == 2);
  send_first.wait();
  send_second.wait();
}

TEST_CASE("mpi.request.destroy: a pending receive that goes out of scope waits for its message") {
  mpi t;
  if (t.size() >= 2 && t.rank() < 2) {
    std::vector<double> data(5000, t.rank() == 0 ? 3.0 : 0.0);
    if (t.rank() == 0) {
      std::this_thread::sleep_for(50ms);
      t.send(std::span<const double>(data), 1, 12);
    } else {
      { [[maybe_unused]] const mpi_request pending = t.irecv(std::span<double>(data), 0, 12); }
      CHECK(data.back() == 3.0);
    }
  }
  t.barrier();
}

TEST_CASE("mpi.request.exact: a receive that gets fewer elements than its buffer is a transport error") {
  mpi t;
  const std::vector<int> three{1, 2, 3};
  std::vector<int> four(4);
  mpi_request send = t.isend(std::span<const int>(three), t.rank(), 13);
  mpi_request receive = t.irecv(std::span<int>(four), t.rank(), 13);
  const std::string expected = "rank " + std::to_string(t.rank()) + ": message from rank " + std::to_string(t.rank()) +
                               " with tag 13 has 3 elements but the receive expects 4";
  CHECK_THROWS_WITH_AS(receive.wait(), doctest::Contains(expected.c_str()), sy::transport_error);
  send.wait();
}

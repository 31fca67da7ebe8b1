// The MPI transport, run under mpiexec at several world sizes: point-to-point semantics, errors,
// and every collective scenario that the in-process suites run.
#include <switchyard/transport/mpi.hpp>

#include <switchyard/transport/faulty.hpp>

#include "../collective/scenarios.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sy = switchyard;
using sy::transport::mpi;
using namespace std::chrono_literals;

static_assert(sy::transport::transport<mpi>);
static_assert(sy::collective::has_native_allreduce<mpi, float, sy::ops::average>);
static_assert(sy::transport::transport<sy::transport::faulty<mpi>>);
static_assert(!sy::collective::has_native_allreduce<sy::transport::faulty<mpi>, float, sy::ops::average>);

namespace {

void report(const std::vector<std::string>& failures) {
  for (std::size_t i = 0; i < failures.size() && i < 10; ++i) FAIL_CHECK(failures[i]);
  CHECK(failures.empty());
}

}  // namespace

TEST_CASE("mpi.ring_of_messages: each rank hears its left neighbour, non-blocking both ways") {
  mpi t;
  const int right = (t.rank() + 1) % t.size();
  const int left = (t.rank() + t.size() - 1) % t.size();
  std::vector<double> mine(1001);
  std::iota(mine.begin(), mine.end(), t.rank() * 10000.0);
  std::vector<double> theirs(1001);
  auto receive = t.irecv(std::span<double>(theirs), left, 3);
  auto send = t.isend(std::span<const double>(mine), right, 3);
  receive.wait();
  send.wait();
  CHECK(theirs[1000] == left * 10000.0 + 1000.0);
  CHECK(receive.status().source == left);
  CHECK(receive.status().count == 1001);
}

TEST_CASE("mpi.recv_any: rank 0 hears every other rank with sources and counts") {
  mpi t;
  if (t.rank() == 0) {
    std::vector<int> seen(static_cast<std::size_t>(t.size()), 0);
    std::vector<float> buffer(16);
    for (int i = 0; i < t.size() - 1; ++i) {
      const auto st = t.recv_any(std::span<float>(buffer), 5);
      CHECK(st.count == static_cast<std::size_t>(st.source));
      ++seen[static_cast<std::size_t>(st.source)];
    }
    for (int r = 1; r < t.size(); ++r) CHECK(seen[static_cast<std::size_t>(r)] == 1);
  } else {
    const std::vector<float> payload(static_cast<std::size_t>(t.rank()), 1.0f);
    t.send(std::span<const float>(payload), 0, 5);
  }
  t.barrier();
}

TEST_CASE("mpi.errors: a bad peer is a usage error, a short message a transport error naming sizes") {
  mpi t;
  std::vector<int> data(4);
  CHECK_THROWS_WITH_AS(t.send(std::span<const int>(data), t.size(), 0), doctest::Contains("names rank"),
                       sy::usage_error);
  CHECK_THROWS_AS((void)t.split(-1, 0), sy::usage_error);
  if (t.size() >= 2 && t.rank() < 2) {
    if (t.rank() == 0) {
      t.send(std::span<const int>(data).first(3), 1, 9);
    } else {
      CHECK_THROWS_WITH_AS(t.recv(std::span<int>(data), 0, 9), doctest::Contains("has 3 elements but the receive expects 4"),
                           sy::transport_error);
    }
  }
  t.barrier();
  // A message longer than the receive's buffer fails inside MPI; the error names what was posted.
  if (t.size() >= 2 && t.rank() < 2) {
    if (t.rank() == 0) {
      const std::vector<int> longer(5, 1);
      t.send(std::span<const int>(longer), 1, 10);
    } else {
      CHECK_THROWS_WITH_AS(t.recv(std::span<int>(data), 0, 10),
                           doctest::Contains("MPI_Wait failed for a receive of 4 elements from rank 0 with tag 10: "),
                           sy::transport_error);
    }
  }
  t.barrier();
}

TEST_CASE("mpi.errors.count_limit: more elements than an MPI int count are refused before MPI sees them") {
  mpi t;
  const std::size_t count = std::size_t{INT_MAX} + 1;
  // Never written or read: every call refuses it first, so its 2 GiB are never faulted in.
  const std::unique_ptr<std::int8_t[]> huge(new std::int8_t[count]);
  const std::span<std::int8_t> buffer(huge.get(), count);
  const std::string refusal = "rank " + std::to_string(t.rank()) + ": 2147483648 elements exceed MPI's int count limit";
  CHECK_THROWS_WITH_AS(t.send(std::span<const std::int8_t>(buffer), t.rank(), 5), doctest::Contains(refusal.c_str()),
                       sy::usage_error);
  CHECK_THROWS_WITH_AS((void)t.isend(std::span<const std::int8_t>(buffer), t.rank(), 5), doctest::Contains(refusal.c_str()),
                       sy::usage_error);
  CHECK_THROWS_WITH_AS(t.recv(buffer, t.rank(), 5), doctest::Contains(refusal.c_str()), sy::usage_error);
  // Every rank makes the collective calls, and every rank refuses them without waiting for another.
  CHECK_THROWS_WITH_AS(sy::collective::allreduce(t, buffer, sy::ops::sum{}, sy::algorithm::native{}),
                       doctest::Contains(refusal.c_str()), sy::usage_error);
  CHECK_THROWS_WITH_AS(sy::collective::broadcast(t, buffer, 0, sy::algorithm::native{}), doctest::Contains(refusal.c_str()),
                       sy::usage_error);
  // Each rank's block of a reduce-scatter fits an int from 2 ranks on, but MPI adds the blocks up
  // in one.
  CHECK_THROWS_WITH_AS((void)sy::collective::reduce_scatter(t, buffer, sy::ops::sum{}, sy::algorithm::native{}),
                       doctest::Contains(refusal.c_str()), sy::usage_error);
  // Nothing was left posted: a message of the same tag and a collective still meet their match.
  std::vector<int> one{t.rank()};
  if (t.size() >= 2 && t.rank() < 2) {
    std::vector<int> got(1, -1);
    const int peer = 1 - t.rank();
    auto pending = t.irecv(std::span<int>(got), peer, 5);
    t.send(std::span<const int>(one), peer, 5);
    pending.wait();
    CHECK(got[0] == peer);
  }
  sy::collective::allreduce(t, std::span<int>(one));
  CHECK(one[0] == t.size() * (t.size() - 1) / 2);
}

TEST_CASE("mpi.errors.timeout_value: a negative timeout is refused; the largest one waits as long as it takes") {
  CHECK_THROWS_WITH_AS(mpi(sy::transport::mpi_options{.timeout = -1ms}),
                       doctest::Contains("mpi_options::timeout must be >= 0 (0 turns the watchdog off), got -1 ms"),
                       sy::usage_error);
  // milliseconds::max() once overflowed into a deadline in the past: the watchdog ended the job
  // at the first wait that was not already done.
  mpi t{sy::transport::mpi_options{.timeout = std::chrono::milliseconds::max()}};
  if (t.rank() == 0) std::this_thread::sleep_for(100ms);
  t.barrier();
  std::vector<int> one{1};
  sy::collective::allreduce(t, std::span<int>(one));
  CHECK(one[0] == t.size());
}

TEST_CASE("mpi.split: groups by color and key, collectives inside a group") {
  mpi t;
  mpi sub = t.split(t.rank() % 2, -t.rank());
  std::vector<int> members{1};
  sy::collective::allreduce(sub, members, sy::ops::sum{});
  CHECK(members[0] == sub.size());
  CHECK(sub.size() == (t.size() + (t.rank() % 2 == 0 ? 1 : 0)) / 2);
}

TEST_CASE("mpi.allreduce: every algorithm, type, operation and count") {
  mpi t;
  report(scenarios::allreduce_suite(t));
}

namespace {

// A user's operation derived from ops::sum that is not a plain sum: it must never become MPI_SUM.
struct capped_sum : switchyard::ops::sum {
  template <class T>
  T operator()(T a, T b) const {
    return std::min<T>(static_cast<T>(a + b), T(100));
  }
};

}  // namespace

TEST_CASE("mpi.allreduce.hierarchical: on the nodes the handle found (one here, one per emulated host)") {
  mpi t;
  report(scenarios::hierarchical_suite(t));
}

TEST_CASE("mpi.allreduce.user_operation: an operation derived from ops::sum is not taken for MPI_SUM") {
  switchyard::transport::mpi t;
  for (const std::size_t count : {std::size_t{5}, std::size_t{70000}}) {
    std::vector<std::int32_t> values(count, 60);
    switchyard::collective::allreduce(t, values, capped_sum{});
    const std::int32_t expected = t.size() == 1 ? 60 : 100;
    CHECK(std::count(values.begin(), values.end(), expected) == static_cast<std::ptrdiff_t>(count));
  }
}

TEST_CASE("mpi.allreduce.identical_bits: replicas agree to the last bit") {
  mpi t;
  report(scenarios::identical_bits_suite(t));
}

// MPI's reductions do not know a codec: the encoded words go through switchyard's algorithms.
static_assert(!sy::collective::has_native_allreduce<mpi, std::uint16_t,
                                                    sy::collective::encoded_op<sy::compression::fp16, sy::ops::sum>>);

TEST_CASE("mpi.allreduce.compressed: fp16 and bf16 words, identical replicas within the codec's bound") {
  mpi t;
  report(scenarios::compressed_suite(t));
}

TEST_CASE("mpi.broadcast") {
  mpi t;
  report(scenarios::broadcast_suite(t));
}

TEST_CASE("mpi.allgather") {
  mpi t;
  report(scenarios::allgather_suite(t));
}

TEST_CASE("mpi.reduce_scatter") {
  mpi t;
  report(scenarios::reduce_scatter_suite(t));
}

TEST_CASE("mpi.barrier") {
  mpi t;
  report(scenarios::barrier_suite(t));
}

TEST_CASE("mpi.irecv.any_source: a posted receive accepts the first sender") {
  mpi t;
  if (t.size() < 2) return;
  if (t.rank() == 0) {
    std::vector<int> got(2);
    for (int i = 1; i < t.size(); ++i) {
      auto request = t.irecv(std::span<int>(got), sy::transport::any_source, 11);
      request.wait();
      CHECK(got[0] == request.status().source);
      CHECK(got[1] == 2 * request.status().source);
    }
  } else {
    const std::vector<int> payload{t.rank(), 2 * t.rank()};
    t.send(std::span<const int>(payload), 0, 11);
  }
  t.barrier();
}

TEST_CASE("mpi.watchdog: with a timeout set, every collective and message still completes exactly") {
  // The watchdog polls non-blocking forms (MPI_Iallreduce, MPI_Ibarrier, ...) instead of the blocking calls.
  mpi watched{sy::transport::mpi_options{.timeout = 60s}};
  CHECK(watched.options().timeout == 60s);
  report(scenarios::allreduce_suite(watched));
  report(scenarios::broadcast_suite(watched));
  report(scenarios::allgather_suite(watched));
  report(scenarios::reduce_scatter_suite(watched));
  report(scenarios::barrier_suite(watched));
  mpi half = watched.split(watched.rank() % 2, watched.rank());
  CHECK(half.options().timeout == 60s);
  std::vector<int> one{1};
  sy::collective::allreduce(half, one);
  CHECK(one[0] == half.size());
}

TEST_CASE("mpi.watchdog: SWITCHYARD_TIMEOUT sets the default, in seconds; a malformed value is a usage error") {
  const char* before = std::getenv("SWITCHYARD_TIMEOUT");
  const std::string saved = before ? before : "";
  ::setenv("SWITCHYARD_TIMEOUT", "2.5", 1);
  CHECK(sy::transport::mpi_options{}.timeout == 2500ms);
  ::setenv("SWITCHYARD_TIMEOUT", "0", 1);
  CHECK(sy::transport::mpi_options{}.timeout == 0ms);
  ::setenv("SWITCHYARD_TIMEOUT", "", 1);
  CHECK(sy::transport::mpi_options{}.timeout == 0ms);
  for (const char* bad : {"soon", "-1", "5s", "nan"}) {
    CAPTURE(bad);
    ::setenv("SWITCHYARD_TIMEOUT", bad, 1);
    CHECK_THROWS_WITH_AS((void)sy::transport::mpi_options{}, doctest::Contains("SWITCHYARD_TIMEOUT must be a number"),
                         sy::usage_error);
  }
  if (before) {
    ::setenv("SWITCHYARD_TIMEOUT", saved.c_str(), 1);
  } else {
    ::unsetenv("SWITCHYARD_TIMEOUT");
  }
}

TEST_CASE("mpi.wait.passive: every collective and message completes exactly when waits sleep") {
  // Passive waits test, then sleep; the collectives run as MPI-3 non-blocking calls, as under the
  // watchdog, which is off here so that the passive path runs alone.
  mpi t{sy::transport::mpi_options{.timeout = 0ms, .wait = sy::transport::mpi_wait::passive}};
  CHECK(t.options().wait == sy::transport::mpi_wait::passive);
  report(scenarios::allreduce_suite(t));
  report(scenarios::identical_bits_suite(t));
  report(scenarios::broadcast_suite(t));
  report(scenarios::allgather_suite(t));
  report(scenarios::reduce_scatter_suite(t));
  report(scenarios::barrier_suite(t));
  // Messages: blocking and non-blocking both ways round a ring, then any-source receives at rank 0.
  const int right = (t.rank() + 1) % t.size();
  const int left = (t.rank() + t.size() - 1) % t.size();
  std::vector<double> mine(70001);
  std::iota(mine.begin(), mine.end(), t.rank() * 100000.0);
  std::vector<double> theirs(mine.size());
  auto receive = t.irecv(std::span<double>(theirs), left, 3);
  auto send = t.isend(std::span<const double>(mine), right, 3);
  receive.wait();
  send.wait();
  CHECK(theirs[70000] == left * 100000.0 + 70000.0);
  CHECK(receive.status().count == mine.size());
  if (t.rank() == 0) {
    std::vector<int> got(2);
    for (int i = 1; i < t.size(); ++i) {
      const auto st = t.recv_any(std::span<int>(got), 4);
      CHECK(got[0] == st.source);
      CHECK(got[1] == 3 * st.source);
    }
  } else {
    const std::vector<int> payload{t.rank(), 3 * t.rank()};
    t.send(std::span<const int>(payload), 0, 4);
  }
  mpi half = t.split(t.rank() % 2, t.rank());
  CHECK(half.options().wait == sy::transport::mpi_wait::passive);
  std::vector<int> one{1};
  sy::collective::allreduce(half, one);
  CHECK(one[0] == half.size());
}

TEST_CASE("mpi.wait.automatic: automatic takes MPI's collectives when ranks spin and switchyard's when they sleep") {
  using sy::transport::mpi_options;
  using sy::transport::mpi_wait;
  mpi spinning{mpi_options{.timeout = 0ms, .wait = mpi_wait::spin, .check_collectives = true}};
  mpi sleeping{mpi_options{.timeout = 0ms, .wait = mpi_wait::passive, .check_collectives = true}};
  CHECK(spinning.prefers_native());
  CHECK_FALSE(sleeping.prefers_native());
  CHECK(sy::collective::prefers_native(spinning));
  CHECK_FALSE(sy::collective::prefers_native(sleeping));
  if (spinning.size() < 2) return;
  // Rank 0 sleeps and the others spin: with collectives checked, rank 0's automatic all-reduce of
  // 128 KiB resolves to the ring and the others' to MPI's, and every rank says so before any data moves.
  mpi mixed{mpi_options{.timeout = 0ms,
                        .wait = spinning.rank() == 0 ? mpi_wait::passive : mpi_wait::spin,
                        .check_collectives = true}};
  std::vector<float> gradient(32768, 1.0f);
  std::string message;
  try {
    sy::collective::allreduce(mixed, gradient);
  } catch (const sy::usage_error& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(message.find("algorithm") != std::string::npos);
  CHECK(message.find("ring") != std::string::npos);
  CHECK(message.find("native") != std::string::npos);
  // Below the ring's threshold the sleeping rank takes recursive doubling; broadcast, all-gather and
  // reduce-scatter resolve the same way.
  for (std::size_t count : {std::size_t{100}, std::size_t{32768}}) {
    std::vector<float> a(count, static_cast<float>(sleeping.rank()));
    sy::collective::allreduce(sleeping, a);
    CHECK(a.front() == static_cast<float>(sleeping.size() * (sleeping.size() - 1) / 2));
  }
  std::vector<int> both(static_cast<std::size_t>(2 * sleeping.size()));
  sy::collective::allgather(sleeping, std::vector<int>{sleeping.rank(), -sleeping.rank()}, both);
  CHECK(both.back() == -(sleeping.size() - 1));
  std::vector<int> root(3, sleeping.rank() == 1 ? 7 : 0);
  sy::collective::broadcast(sleeping, root, 1);
  CHECK(root == std::vector<int>(3, 7));
  std::vector<int> scattered(7, 1);
  const auto block = sy::collective::reduce_scatter(sleeping, scattered);
  for (int v : block) CHECK(v == sleeping.size());
}

TEST_CASE("mpi.wait.passive_watchdog: the watchdog still times waits that sleep") {
  mpi t{sy::transport::mpi_options{.timeout = 60s, .wait = sy::transport::mpi_wait::passive}};
  report(scenarios::allreduce_suite(t));
  report(scenarios::barrier_suite(t));
}

namespace {

std::chrono::duration<double> thread_cpu_time() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

}  // namespace

TEST_CASE("mpi.wait.passive_idle: a rank that waits passively gives up its core") {
  // Rank 0 sleeps 300 ms before it sends and before it enters a barrier; the others wait for it in
  // a receive, then in the barrier. Spinning would burn about the whole 300 ms each time; the
  // passive policy tests every 100 us at first, then every millisecond.
  mpi t{sy::transport::mpi_options{.timeout = 0ms, .wait = sy::transport::mpi_wait::passive}};
  if (t.size() < 2) return;
  constexpr auto nap = 300ms;
  std::vector<int> data(4, t.rank());
  for (const char* wait : {"receive", "barrier"}) {
    CAPTURE(wait);
    t.barrier();
    if (t.rank() == 0) {
      std::this_thread::sleep_for(nap);
      if (std::string_view(wait) == "receive") {
        for (int r = 1; r < t.size(); ++r) t.send(std::span<const int>(data), r, 8);
      } else {
        t.barrier();
      }
      continue;
    }
    const auto cpu_before = thread_cpu_time();
    const auto wall_before = std::chrono::steady_clock::now();
    if (std::string_view(wait) == "receive") {
      t.recv(std::span<int>(data), 0, 8);
      CHECK(data[0] == 0);
    } else {
      t.barrier();
    }
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - wall_before;
    const auto busy = thread_cpu_time() - cpu_before;
    CAPTURE(waited.count());
    CAPTURE(busy.count());
    CHECK(waited.count() >= 0.2);
    CHECK(busy.count() < 0.25 * waited.count());
  }
}

TEST_CASE("mpi.wait: SWITCHYARD_MPI_WAIT sets the default; a malformed value is a usage error naming it") {
  const char* before = std::getenv("SWITCHYARD_MPI_WAIT");
  const std::string saved = before ? before : "";
  ::setenv("SWITCHYARD_MPI_WAIT", "passive", 1);
  CHECK(sy::transport::mpi_options{}.wait == sy::transport::mpi_wait::passive);
  ::setenv("SWITCHYARD_MPI_WAIT", "spin", 1);
  CHECK(sy::transport::mpi_options{}.wait == sy::transport::mpi_wait::spin);
  ::setenv("SWITCHYARD_MPI_WAIT", "", 1);
  CHECK(sy::transport::mpi_options{}.wait == sy::transport::mpi_wait::spin);
  for (const char* bad : {"Passive", "sleep", "1", " passive", "spin,passive"}) {
    CAPTURE(bad);
    ::setenv("SWITCHYARD_MPI_WAIT", bad, 1);
    const std::string expected = "SWITCHYARD_MPI_WAIT must be 'spin' or 'passive', got '" + std::string(bad) + "'";
    CHECK_THROWS_WITH_AS((void)sy::transport::mpi_options{}, doctest::Contains(expected.c_str()), sy::usage_error);
  }
  ::setenv("SWITCHYARD_MPI_WAIT", "sleep", 1);
  CHECK_THROWS_AS(mpi(), sy::usage_error);
  if (before) {
    ::setenv("SWITCHYARD_MPI_WAIT", saved.c_str(), 1);
  } else {
    ::unsetenv("SWITCHYARD_MPI_WAIT");
  }
  CHECK_THROWS_WITH_AS(mpi(sy::transport::mpi_options{.wait = static_cast<sy::transport::mpi_wait>(7)}),
                       doctest::Contains("mpi_options::wait must be mpi_wait::spin or mpi_wait::passive, got 7"),
                       sy::usage_error);
}

TEST_CASE("mpi.faulty: collectives are exact through delays and a slow rank") {
  mpi t;
  sy::transport::faulty f(t, {.delay = 50us, .slow_rank = t.size() - 1, .slow_delay = 200us});
  const int n = t.size();
  std::vector<double> sums(1001);
  std::iota(sums.begin(), sums.end(), static_cast<double>(t.rank()));
  sy::collective::allreduce(f, sums, sy::ops::sum{}, sy::algorithm::ring{});
  CHECK(sums[1000] == 1000.0 * n + n * (n - 1) / 2.0);
  std::vector<int> root(17, t.rank() == n - 1 ? 9 : 0);
  sy::collective::broadcast(f, root, n - 1);
  CHECK(root[16] == 9);
  CHECK((f.messages() > 0) == (n > 1));
}

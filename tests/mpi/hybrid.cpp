// transport/hybrid/handle.hpp under mpiexec: P processes with C threads each form one world of
// ranks. SWITCHYARD_TEST_THREADS gives C (2 unless set), or one count per process ("1,3,2":
// process 0 runs 1 thread, process 1 runs 3, process 2 runs 2), so that nodes may be uneven.
// Point-to-point between threads of one process and of different processes, receives from any
// rank, errors, split, every all-reduce algorithm bitwise equal to the in-process transport with
// virtual nodes of the same shape, the collective scenarios, and the trainer under all-reduce and
// a synchronous parameter server.
#include <switchyard/transport/hybrid.hpp>

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/transport/inproc.hpp>

#include "../collective/scenarios.hpp"
#include "../common/quadrants_training.hpp"
#include "../train/fixtures.hpp"

#include <doctest/doctest.h>

#include <boost/mpi/communicator.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sy = switchyard;
using sy::transport::hybrid;

namespace {

int processes() { return boost::mpi::communicator().size(); }

// The threads of every process, from SWITCHYARD_TEST_THREADS: one count for all, or one per process.
std::vector<int> shape() {
  const char* set = std::getenv("SWITCHYARD_TEST_THREADS");
  const std::string text = set == nullptr ? "2" : set;
  std::vector<int> counts;
  std::istringstream in(text);
  for (std::string count; std::getline(in, count, ',');) counts.push_back(std::stoi(count));
  if (counts.size() == 1) counts.assign(static_cast<std::size_t>(processes()), counts[0]);
  if (counts.size() != static_cast<std::size_t>(processes())) {
    throw sy::usage_error(sy::detail::str("SWITCHYARD_TEST_THREADS='", text, "' gives ", counts.size(),
                                          " thread counts for ", processes(), " processes"));
  }
  return counts;
}

// This process's threads.
int threads_per_process() { return shape()[static_cast<std::size_t>(boost::mpi::communicator().rank())]; }

int world_size() {
  const std::vector<int> counts = shape();
  return std::accumulate(counts.begin(), counts.end(), 0);
}

// Whether the world has levels: several nodes, one of them with several ranks.
bool hierarchical_shape() {
  const std::vector<int> counts = shape();
  return counts.size() > 1 && *std::max_element(counts.begin(), counts.end()) > 1;
}

// The in-process world of the same shape: a virtual node per process, of its threads.
sy::transport::inproc_options same_shape() {
  sy::transport::inproc_options o;
  o.node_sizes = shape();
  return o;
}

// Runs `f(t)` on every rank of a hybrid world; `f` returns the failures it saw, reported here.
template <class F>
void on_every_rank(F f) {
  const std::vector<std::vector<std::string>> failures =
      sy::transport::run_hybrid(threads_per_process(), [&](hybrid& t) { return f(t); });
  for (const std::vector<std::string>& each : failures) {
    for (const std::string& failure : each) FAIL_CHECK(failure);
  }
}

template <class T>
T value(int from, int to, std::size_t i) {
  return static_cast<T>((from * 131 + to * 17 + static_cast<int>(i)) % 101);
}

// Uneven per pair, empty between some.
std::size_t length(int from, int to) { return static_cast<std::size_t>((from * 7 + to * 3) % 11); }

template <class T>
void exchange_with_everyone(hybrid& t, int tag, std::vector<std::string>& failures) {
  const int n = t.size();
  std::vector<std::vector<T>> out(static_cast<std::size_t>(n));
  std::vector<std::vector<T>> in(static_cast<std::size_t>(n));
  std::vector<hybrid::request> requests;
  for (int peer = 0; peer < n; ++peer) {
    auto& o = out[static_cast<std::size_t>(peer)];
    for (std::size_t i = 0; i < length(t.rank(), peer); ++i) o.push_back(value<T>(t.rank(), peer, i));
    in[static_cast<std::size_t>(peer)].resize(length(peer, t.rank()));
    requests.push_back(t.irecv(std::span<T>(in[static_cast<std::size_t>(peer)]), peer, tag));
  }
  for (int peer = 0; peer < n; ++peer) {
    requests.push_back(t.isend(std::span<const T>(out[static_cast<std::size_t>(peer)]), peer, tag));
  }
  for (hybrid::request& r : requests) r.wait();
  for (int peer = 0; peer < n; ++peer) {
    const auto& got = in[static_cast<std::size_t>(peer)];
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i] != value<T>(peer, t.rank(), i)) {
        failures.push_back(sy::detail::str("rank ", t.rank(), ": element ", i, " from rank ", peer, " is wrong"));
        break;
      }
    }
  }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

template <class Error, class Call>
void expect_error(Call call, const std::string& part, const std::string& what, std::vector<std::string>& failures) {
  try {
    call();
    failures.push_back(what + ": no error");
  } catch (const Error& e) {
    if (!contains(e.what(), part)) failures.push_back(what + ": '" + e.what() + "' does not say '" + part + "'");
  }
}

using fixtures::train;

}  // namespace

TEST_CASE("hybrid.world: ranks are numbered process by process, and each process is a node") {
  const std::vector<int> counts = shape();
  const int c = threads_per_process();
  const int p = processes();
  const int me = boost::mpi::communicator().rank();
  const int first = std::accumulate(counts.begin(), counts.begin() + me, 0);
  const int largest = *std::max_element(counts.begin(), counts.end());
  const int smallest = *std::min_element(counts.begin(), counts.end());
  sy::transport::hybrid_world world(c);
  CHECK(world.size() == world_size());
  CHECK(world.threads() == c);
  CHECK(world.process() == me);
  CHECK(world.processes() == p);
  const std::vector<sy::transport::node_topology> seen =
      world.run([](hybrid& t) { return sy::transport::node_topology(t.topology()); });
  const std::vector<int> ranks = world.run([](hybrid& t) { return t.rank(); });
  REQUIRE(seen.size() == static_cast<std::size_t>(c));
  for (int thread = 0; thread < c; ++thread) {
    CHECK(ranks[static_cast<std::size_t>(thread)] == first + thread);
    CHECK(seen[static_cast<std::size_t>(thread)] ==
          sy::transport::node_topology{me, thread, c, p, largest, smallest});
  }
  CHECK(seen[0].hierarchical() == hierarchical_shape());
  // Twice on one world: each run starts its threads afresh on the same communicators.
  on_every_rank([](hybrid& t) {
    std::vector<std::string> failures;
    exchange_with_everyone<int>(t, 1, failures);
    return failures;
  });
}

TEST_CASE("hybrid.world.refuses: fewer than 1 thread on a process, on every process") {
  const int me = boost::mpi::communicator().rank();
  // Process 0 asks for none: every process refuses, naming it.
  CHECK_THROWS_WITH_AS(sy::transport::hybrid_world(me == 0 ? 0 : 2),
                       doctest::Contains("process 0 asks for 0 threads; every process needs at least 1"),
                       sy::usage_error);
  sy::transport::hybrid_options bad;
  bad.timeout = std::chrono::milliseconds(0);
  CHECK_THROWS_WITH_AS(sy::transport::hybrid_world(1, bad), doctest::Contains("hybrid_options::timeout must be positive"),
                       sy::usage_error);
}

TEST_CASE("hybrid.point_to_point: every pair of ranks, inside a process and across, uneven lengths, five types") {
  on_every_rank([](hybrid& t) {
    std::vector<std::string> failures;
    exchange_with_everyone<float>(t, 0, failures);
    exchange_with_everyone<double>(t, 32767, failures);
    exchange_with_everyone<std::int64_t>(t, 5, failures);
    exchange_with_everyone<std::uint64_t>(t, 5, failures);
    exchange_with_everyone<std::uint16_t>(t, 6, failures);
    // Blocking send and receive around a ring, one tag reused: messages keep their order.
    const int n = t.size();
    for (int round = 0; round < 3; ++round) {
      std::vector<double> out{double(t.rank()), double(round)};
      std::vector<double> in(2);
      auto sent = t.isend(std::span<const double>(out), (t.rank() + 1) % n, 9);
      t.recv(std::span<double>(in), (t.rank() + n - 1) % n, 9);
      sent.wait();
      if (in[0] != double((t.rank() + n - 1) % n) || in[1] != double(round)) {
        failures.push_back(sy::detail::str("rank ", t.rank(), ": ring round ", round, " got the wrong message"));
      }
    }
    return failures;
  });
}

TEST_CASE("hybrid.recv_any: rank 0 hears every other rank, on its process and on others, with shorter messages") {
  on_every_rank([](hybrid& t) {
    std::vector<std::string> failures;
    const int n = t.size();
    for (int round = 0; round < 2; ++round) {
      if (t.rank() == 0) {
        std::set<int> heard;
        for (int k = 1; k < n; ++k) {
          std::vector<float> in(16, -1.0f);
          const sy::transport::message_status got = t.recv_any(std::span<float>(in), 3);
          heard.insert(got.source);
          if (got.tag != 3 || got.count != static_cast<std::size_t>(got.source) ||
              in[0] != (got.count == 0 ? -1.0f : float(got.source))) {
            failures.push_back(sy::detail::str("recv_any from rank ", got.source, ": tag ", got.tag, ", count ",
                                               got.count));
          }
        }
        if (static_cast<int>(heard.size()) != n - 1) failures.push_back("recv_any missed a rank");
        // The exact any-source receive: one message from every rank, of exactly 2 elements.
        for (int k = 1; k < n; ++k) {
          std::vector<std::int64_t> in(2);
          auto r = t.irecv(std::span<std::int64_t>(in), sy::transport::any_source, 4);
          r.wait();
          if (in[0] != r.status().source || r.status().count != 2) failures.push_back("irecv(any_source) wrong");
        }
      } else {
        std::vector<float> out(static_cast<std::size_t>(t.rank()), float(t.rank()));
        t.send(std::span<const float>(out), 0, 3);
        std::vector<std::int64_t> pair{t.rank(), round};
        t.send(std::span<const std::int64_t>(pair), 0, 4);
      }
      // Sends to other processes may complete before they are received: without it a later
      // round's message could answer this round's receive from any rank.
      t.barrier();
    }
    return failures;
  });
}

TEST_CASE("hybrid.errors: sizes that differ, tags and peers out of range, any tag across processes") {
  on_every_rank([](hybrid& t) {
    std::vector<std::string> failures;
    const int n = t.size();
    std::vector<float> four(4);
    expect_error<sy::usage_error>([&] { t.send(std::span<const float>(four), n, 0); }, "names rank", "peer", failures);
    expect_error<sy::usage_error>([&] { t.send(std::span<const float>(four), 0, 32768); },
                                  "tags of transport::hybrid run from 0 to 32767", "tag", failures);
    if (t.topology().nodes > 1) {
      expect_error<sy::usage_error>([&] { t.recv_any(std::span<float>(four), sy::transport::any_tag); },
                                    "needs a tag for messages from another process", "any tag", failures);
    }
    // The last rank (on the last process) sends 3 elements to rank 0, which expects 4.
    // The sender learns of it too when both share a process (one copy, made by whichever comes second).
    const bool same_process = t.topology().nodes == 1;
    if (n > 1 && t.rank() == n - 1) {
      std::vector<float> three(3);
      if (same_process) {
        expect_error<sy::transport_error>([&] { t.send(std::span<const float>(three), 0, 8); },
                                          "has 3 elements but the receive", "size at the sender", failures);
      } else {
        t.send(std::span<const float>(three), 0, 8);
      }
    }
    if (n > 1 && t.rank() == 0) {
      expect_error<sy::transport_error>([&] { t.recv(std::span<float>(four), n - 1, 8); },
                                        "has 3 elements but the receive", "size", failures);
    }
    t.barrier();
    return failures;
  });
}

TEST_CASE("hybrid.split: odd and even ranks reversed, by process, one rank per process, nested") {
  on_every_rank([](hybrid& t) {
    std::vector<std::string> failures;
    const int n = t.size();
    const auto expect = [&](bool ok, const std::string& what) {
      if (!ok) failures.push_back(sy::detail::str("rank ", t.rank(), ": ", what));
    };
    hybrid parity = t.split(t.rank() % 2, -t.rank());
    const int members = (n - t.rank() % 2 + 1) / 2;
    expect(parity.size() == members, "parity group size");
    expect(parity.rank() == members - 1 - t.rank() / 2, "parity group rank");
    std::vector<std::int64_t> sum{t.rank()};
    sy::collective::allreduce(parity, sum, sy::ops::sum{}, sy::algorithm::ring{});
    std::int64_t expected = 0;
    for (int r = t.rank() % 2; r < n; r += 2) expected += r;
    expect(sum[0] == expected, "parity sum");
    exchange_with_everyone<double>(parity, 2, failures);

    const sy::transport::node_topology where = t.topology();
    hybrid node = t.split(where.node, t.rank());
    expect(node.size() == where.local_size && node.rank() == where.local_rank, "node group");
    expect(node.topology().nodes == 1, "a node group is one node");
    // The nodes with a rank of this local rank, and those of them before this one.
    const std::vector<int> counts = shape();
    const auto deeper = [&](int c) { return c > where.local_rank; };
    const auto across_size = static_cast<int>(std::count_if(counts.begin(), counts.end(), deeper));
    const auto across_rank = static_cast<int>(std::count_if(counts.begin(), counts.begin() + where.node, deeper));
    hybrid across = t.split(where.local_rank, where.node);
    expect(across.size() == across_size && across.rank() == across_rank, "across group");
    expect(across.topology().largest_node == 1, "one rank per node across");
    exchange_with_everyone<float>(across, 7, failures);
    hybrid nested = across.split(0, -across.rank());
    expect(nested.rank() == across.size() - 1 - across.rank(), "nested split");
    std::vector<double> one{1.0};
    sy::collective::allreduce(nested, one, sy::ops::sum{});
    expect(one[0] == double(across_size), "nested sum");
    expect_error<sy::usage_error>([&] { static_cast<void>(t.split(-1, 0)); }, "split color must be >= 0", "color",
                                  failures);
    return failures;
  });
}

TEST_CASE("hybrid.allreduce.bitwise: ring, recursive doubling, hierarchical and automatic give the in-process "
          "transport's bits on virtual nodes of the same shape") {
  const int ranks = world_size();
  // What automatic must pick on the hybrid transport, which has no native all-reduce.
  const bool hierarchical = hierarchical_shape();
  const auto hashes = [&](auto& t, bool reference) {
    std::vector<std::uint64_t> out;
    const auto each = [&]<class Algorithm, class T>(std::size_t count) {
      std::vector<T> data(count);
      for (std::size_t i = 0; i < count; ++i) data[i] = scenarios::rounding_value<T>(t.rank(), i);
      if (reference && std::is_same_v<Algorithm, sy::algorithm::automatic>) {
        if (count * sizeof(T) < sy::collective::ring_threshold_bytes) {
          sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::recursive_doubling{});
        } else if (hierarchical) {
          sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::hierarchical{});
        } else {
          sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::ring{});
        }
      } else {
        sy::collective::allreduce(t, data, sy::ops::sum{}, Algorithm{});
      }
      out.push_back(scenarios::bit_hash(data));
    };
    for (const std::size_t count : {std::size_t{7}, std::size_t{1001}, std::size_t{100003}}) {
      each.template operator()<sy::algorithm::ring, float>(count);
      each.template operator()<sy::algorithm::recursive_doubling, float>(count);
      each.template operator()<sy::algorithm::hierarchical, float>(count);
      each.template operator()<sy::algorithm::automatic, float>(count);
      each.template operator()<sy::algorithm::automatic, double>(count);
    }
    return out;
  };
  const auto reference = sy::transport::run_inproc(
      ranks, [&](sy::transport::inproc& t) { return hashes(t, true); }, same_shape());
  const auto got = sy::transport::run_hybrid(threads_per_process(), [&](hybrid& t) {
    return std::make_pair(t.rank(), hashes(t, false));
  });
  for (const auto& [rank, mine] : got) {
    CHECK(mine == reference[static_cast<std::size_t>(rank)]);
    CHECK(mine == reference[0]);
  }
}

TEST_CASE("hybrid.collectives: the scenarios of every collective") {
  on_every_rank([](hybrid& t) {
    std::vector<std::string> failures;
    for (auto suite : {scenarios::hierarchical_suite<hybrid>, scenarios::identical_bits_suite<hybrid>,
                       scenarios::broadcast_suite<hybrid>, scenarios::allgather_suite<hybrid>,
                       scenarios::reduce_scatter_suite<hybrid>, scenarios::barrier_suite<hybrid>}) {
      for (std::string& failure : suite(t)) failures.push_back(std::move(failure));
    }
    return failures;
  });
}

TEST_CASE("hybrid.train: all-reduce and a synchronous parameter server through the trainer give the in-process "
          "transport's parameters on virtual nodes of the same shape") {
  const int ranks = world_size();
  if (24 % ranks == 0) {
    const auto batch = static_cast<std::size_t>(24 / ranks);
    const std::vector<float> reference = sy::transport::run_inproc(
        ranks, [&](sy::transport::inproc& t) { return train(t, batch); }, same_shape())[0];
    const auto trained = sy::transport::run_hybrid(threads_per_process(), [&](hybrid& t) { return train(t, batch); });
    // On several nodes of several ranks both take the hierarchical all-reduce, to the bit; else the
    // in-process transport takes its native one, which rounds in another order.
    const bool hierarchical = hierarchical_shape();
    for (const std::vector<float>& each : trained) {
      CHECK(each == trained[0]);
      if (hierarchical) CHECK(each == reference);
      CHECK(fixtures::max_difference(each, reference) < 1e-6);
    }
  }
  if (ranks >= 2) {
    using sync_server = sy::strategy::parameter_server<sy::strategy::consistency::sync>;
    const std::vector<float> reference = sy::transport::run_inproc(
        ranks, [&](sy::transport::inproc& t) { return train(t, 8, sync_server(1)); }, same_shape())[0];
    const auto served =
        sy::transport::run_hybrid(threads_per_process(), [&](hybrid& t) { return train(t, 8, sync_server(1)); });
    for (const std::vector<float>& each : served) CHECK(fixtures::max_difference(each, reference) < 1e-6);
  }
}

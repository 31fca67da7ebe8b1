// Checked collectives (collective/detail/fingerprint.hpp): every kind of mismatch raises the same
// usage_error on every rank, naming the ranks and what differed; matched calls stay exact; with
// checks off no fingerprint is exchanged.
#include <switchyard/collective/allgather.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/collective/barrier.hpp>
#include <switchyard/collective/broadcast.hpp>
#include <switchyard/collective/reduce_scatter.hpp>
#include <switchyard/collective/stage.hpp>
#include <switchyard/transport/faulty.hpp>
#include <switchyard/transport/inproc.hpp>

#include "scenarios.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace sy = switchyard;

sy::transport::inproc_options checked(bool on = true) {
  sy::transport::inproc_options o;
  o.timeout = std::chrono::seconds(30);
  o.check_collectives = on;
  return o;
}

// Runs `body` on every rank of a checked world and returns each rank's usage_error message, or
// "no error". A body that raised nothing on one rank while others did would leave them waiting:
// the timeout turns that into a failure of the test.
std::vector<std::string> messages_at(int ranks, const std::function<void(sy::transport::inproc&)>& body) {
  return sy::transport::run_inproc(
      ranks,
      [&](sy::transport::inproc& t) -> std::string {
        try {
          body(t);
        } catch (const sy::usage_error& e) {
          return e.what();
        }
        return "no error";
      },
      checked());
}

// Every rank raised, each naming itself and the difference.
void expect_everywhere(const std::vector<std::string>& messages, const std::vector<std::string>& parts) {
  for (std::size_t r = 0; r < messages.size(); ++r) {
    CAPTURE(r);
    CAPTURE(messages[r]);
    CHECK(messages[r].find("rank " + std::to_string(r) + ": collective #") != std::string::npos);
    CHECK(messages[r].find("does not match across the " + std::to_string(messages.size()) + " ranks") !=
          std::string::npos);
    for (const std::string& part : parts) CHECK(messages[r].find(part) != std::string::npos);
  }
}

// "ranks 0, 1" / "ranks 0-2": every rank but the last, as the report lists them.
std::string all_but_last(int ranks) {
  if (ranks == 2) return "rank 0";
  if (ranks == 3) return "ranks 0, 1";
  return "ranks 0-" + std::to_string(ranks - 2);
}

struct abs_max {
  template <class T>
  T operator()(T a, T b) const {
    return (a < 0 ? -a : a) >= (b < 0 ? -b : b) ? a : b;
  }
};

}  // namespace

TEST_CASE("collective.checked.count: one rank's allreduce count differs, every rank is told, at 2-4, 8 and 9 ranks "
          "(from 8 the fingerprints travel by Bruck's all-gather)" *
          doctest::timeout(120)) {
  for (int ranks : {2, 3, 4, 8, 9}) {
    CAPTURE(ranks);
    const int odd = ranks - 1;
    auto messages = messages_at(ranks, [odd](sy::transport::inproc& t) {
      std::vector<float> data(t.rank() == odd ? 999 : 1000, 1.0f);
      sy::collective::allreduce(t, data);
    });
    expect_everywhere(messages, {"collective #0", "element count: 1000 (" + all_but_last(ranks) + ") vs 999 (rank " +
                                                      std::to_string(odd) + ")"});
    // The same through the message-based algorithms: the check precedes every algorithm.
    messages = messages_at(ranks, [odd](sy::transport::inproc& t) {
      std::vector<double> data(t.rank() == odd ? 5 : 7, 1.0);
      sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::recursive_doubling{});
    });
    expect_everywhere(messages,
                      {"element count: 7 (" + all_but_last(ranks) + ") vs 5 (rank " + std::to_string(odd) + ")",
                       "this rank called allreduce of "});
  }
}

TEST_CASE("collective.checked.type: float on some ranks, double on one" * doctest::timeout(60)) {
  const auto messages = messages_at(3, [](sy::transport::inproc& t) {
    if (t.rank() == 1) {
      std::vector<double> data(100, 1.0);
      sy::collective::allreduce(t, data);
    } else {
      std::vector<float> data(100, 1.0f);
      sy::collective::allreduce(t, data);
    }
  });
  expect_everywhere(messages, {"element type: float (ranks 0, 2) vs double (rank 1)"});
  CHECK(messages[1].find("this rank called allreduce of 100 double elements, reduction sum") != std::string::npos);
}

TEST_CASE("collective.checked.op: different reductions, the library's and a user's, by name" * doctest::timeout(60)) {
  auto messages = messages_at(4, [](sy::transport::inproc& t) {
    std::vector<float> data(10, 1.0f);
    if (t.rank() == 0) {
      sy::collective::allreduce(t, data, sy::ops::max{});
    } else {
      sy::collective::allreduce(t, data, sy::ops::sum{});
    }
  });
  expect_everywhere(messages, {"reduction: max (rank 0) vs sum (ranks 1-3)"});
  messages = messages_at(2, [](sy::transport::inproc& t) {
    std::vector<std::int32_t> data(10, 1);
    if (t.rank() == 0) {
      sy::collective::reduce_scatter(t, data, abs_max{});
    } else {
      sy::collective::reduce_scatter(t, data, sy::ops::min{});
    }
  });
  expect_everywhere(messages, {"reduction: (anonymous namespace)::abs_max (rank 0) vs min (rank 1)"});
}

TEST_CASE("collective.checked.root: one rank broadcasts from another root" * doctest::timeout(60)) {
  for (int ranks = 2; ranks <= 4; ++ranks) {
    CAPTURE(ranks);
    const auto messages = messages_at(ranks, [ranks](sy::transport::inproc& t) {
      std::vector<float> data(8, 1.0f);
      sy::collective::broadcast(t, data, t.rank() == ranks - 1 ? 1 : 0);
    });
    expect_everywhere(messages,
                      {"root: 0 (" + all_but_last(ranks) + ") vs 1 (rank " + std::to_string(ranks - 1) + ")"});
  }
  // A root outside the group on one rank is reported on every rank, not only there.
  const auto messages = messages_at(3, [](sy::transport::inproc& t) {
    std::vector<float> data(8, 1.0f);
    sy::collective::broadcast(t, data, t.rank() == 2 ? 7 : 0);
  });
  expect_everywhere(messages, {"root: 0 (ranks 0, 1) vs 7 (rank 2)"});
}

TEST_CASE("collective.checked.operation: a broadcast meets an allreduce, an allgather a barrier" *
          doctest::timeout(60)) {
  auto messages = messages_at(3, [](sy::transport::inproc& t) {
    std::vector<float> data(16, 1.0f);
    if (t.rank() == 1) {
      sy::collective::broadcast(t, data, 0);
    } else {
      sy::collective::allreduce(t, data);
    }
  });
  expect_everywhere(messages, {"operation: allreduce (ranks 0, 2) vs broadcast (rank 1)"});
  messages = messages_at(2, [](sy::transport::inproc& t) {
    const std::vector<float> mine(3, 1.0f);
    std::vector<float> all(6);
    if (t.rank() == 0) {
      sy::collective::allgather(t, mine, all);
    } else {
      sy::collective::barrier(t);
    }
  });
  expect_everywhere(messages,
                    {"operation: allgather (rank 0) vs barrier (rank 1)", "element count: 3 (rank 0) vs 0 (rank 1)"});
}

TEST_CASE("collective.checked.algorithm_and_output: a forced algorithm, a wrong allgather output on one rank" *
          doctest::timeout(60)) {
  auto messages = messages_at(3, [](sy::transport::inproc& t) {
    std::vector<float> data(16, 1.0f);
    if (t.rank() == 0) {
      sy::collective::allreduce(t, data, sy::ops::sum{}, sy::algorithm::ring{});
    } else {
      sy::collective::allreduce(t, data);
    }
  });
  // In process, automatic resolves to the native collective: the ranks compare what they resolved.
  expect_everywhere(messages, {"algorithm: ring (rank 0) vs native (ranks 1, 2)"});
  messages = messages_at(4, [](sy::transport::inproc& t) {
    const std::vector<float> mine(2, 1.0f);
    std::vector<float> all(t.rank() == 3 ? 7 : 8);
    sy::collective::allgather(t, mine, all);
  });
  expect_everywhere(messages, {"output size: 8 (ranks 0-2) vs 7 (rank 3)"});
}

TEST_CASE("collective.checked.sequence_skew: a rank that skipped a collective is caught at its next one" *
          doctest::timeout(60)) {
  // Rank 1 skips the broadcast: its allreduce #0 meets the others' broadcast #0.
  auto messages = messages_at(3, [](sy::transport::inproc& t) {
    std::vector<float> params(10, 1.0f);
    std::vector<float> grad(20, 1.0f);
    if (t.rank() != 1) sy::collective::broadcast(t, params, 0);
    sy::collective::allreduce(t, grad);
  });
  expect_everywhere(messages, {"collective #0", "operation: broadcast (ranks 0, 2) vs allreduce (rank 1)",
                               "element count: 10 (ranks 0, 2) vs 20 (rank 1)"});
  // Rank 2 skips the second of two identical all-reduces: its barrier #2 meets the others' allreduce #2.
  messages = messages_at(4, [](sy::transport::inproc& t) {
    std::vector<float> grad(20, 1.0f);
    sy::collective::allreduce(t, grad);
    sy::collective::allreduce(t, grad);
    if (t.rank() != 2) sy::collective::allreduce(t, grad);
    sy::collective::barrier(t);
  });
  expect_everywhere(messages, {"collective #2", "operation: allreduce (ranks 0, 1, 3) vs barrier (rank 2)"});
}

TEST_CASE("collective.checked.stage: ranks in different stages are named by their labels" * doctest::timeout(60)) {
  const auto messages = messages_at(3, [](sy::transport::inproc& t) {
    const sy::collective::stage_scope stage{t.rank() == 1 ? "all-reduce" : "parameter server"};
    {
      const sy::collective::stage_scope inner{"inner"};
      CHECK(sy::collective::current_stage() == "inner");
    }
    CHECK(sy::collective::current_stage() == (t.rank() == 1 ? "all-reduce" : "parameter server"));
    std::vector<float> data(4, 1.0f);
    sy::collective::allreduce(t, data);
  });
  expect_everywhere(messages, {"stage: \"parameter server\" (ranks 0, 2) vs \"all-reduce\" (rank 1)"});
  CHECK(sy::collective::current_stage().empty());
}

TEST_CASE("collective.checked.matched: with checks on, every collective scenario stays exact at 1-4 ranks" *
          doctest::timeout(600)) {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    CAPTURE(ranks);
    const auto failures = sy::transport::run_inproc(
        ranks,
        [](sy::transport::inproc& t) {
          std::vector<std::string> found;
          for (auto suite : {&scenarios::allreduce_suite<sy::transport::inproc>,
                             &scenarios::broadcast_suite<sy::transport::inproc>,
                             &scenarios::allgather_suite<sy::transport::inproc>,
                             &scenarios::reduce_scatter_suite<sy::transport::inproc>,
                             &scenarios::barrier_suite<sy::transport::inproc>}) {
            for (std::string& failure : suite(t)) found.push_back(std::move(failure));
          }
          if (t.collective_checks().sequence == 0) found.emplace_back("no collective was counted");
          return found;
        },
        checked());
    for (const auto& of_rank : failures) {
      CHECK(of_rank.empty());
      for (const std::string& failure : of_rank) FAIL_CHECK(failure);
    }
  }
}

TEST_CASE("collective.checked.messages: checks off exchange nothing; on, one fingerprint all-gather per collective" *
          doctest::timeout(120)) {
  for (int ranks : {1, 2, 3, 4, 8, 9}) {
    CAPTURE(ranks);
    const auto counts = [ranks](bool on) {
      return sy::transport::run_inproc(
          ranks,
          [](sy::transport::inproc& t) {
            sy::transport::faulty f(t);
            std::vector<std::size_t> seen;
            sy::collective::barrier(f);
            seen.push_back(f.messages());
            std::vector<float> data(1000, 1.0f);
            sy::collective::allreduce(f, data);
            seen.push_back(f.messages());
            seen.push_back(f.collective_checks().sequence);
            return seen;
          },
          checked(on));
    };
    const auto off = counts(false);
    const auto on = counts(true);
    // Below 8 ranks the ring: a send and a receive per step. From 8, Bruck's all-gather: a send
    // and a receive per round, or two of each where a run of blocks wraps past the last rank.
    const std::size_t ring = 2 * static_cast<std::size_t>(ranks - 1);
    std::size_t rounds = 0;
    while ((std::size_t{1} << rounds) < static_cast<std::size_t>(ranks)) ++rounds;
    for (int r = 0; r < ranks; ++r) {
      CAPTURE(r);
      const auto& o = off[static_cast<std::size_t>(r)];
      const auto& c = on[static_cast<std::size_t>(r)];
      CHECK(o[0] == 0);  // barrier: the transport's own, no message
      CHECK(o[2] == 0);  // nothing counted
      if (ranks < 8) {
        CHECK(c[0] == ring);
      } else {
        CHECK(c[0] >= 2 * rounds);
        CHECK(c[0] <= 4 * rounds);
      }
      CHECK(c[1] - c[0] == o[1] - o[0] + c[0]);
      CHECK(c[2] == 2);
    }
  }
}

TEST_CASE("collective.checked.faulty: a mismatch through faulty<inproc> is reported on every rank" *
          doctest::timeout(60)) {
  const auto messages = messages_at(4, [](sy::transport::inproc& t) {
    sy::transport::faulty f(t, {.delay = std::chrono::microseconds(100)});
    std::vector<float> data(t.rank() == 2 ? 64 : 65, 1.0f);
    sy::collective::allreduce(f, data);
  });
  expect_everywhere(messages, {"element count: 65 (ranks 0, 1, 3) vs 64 (rank 2)"});
}

TEST_CASE("collective.checked.split: each group counts its own collectives" * doctest::timeout(60)) {
  sy::transport::run_inproc(
      4,
      [](sy::transport::inproc& t) {
        std::vector<float> data(3, 1.0f);
        sy::collective::allreduce(t, data);
        sy::transport::inproc half = t.split(t.rank() % 2, 0);
        CHECK(half.collective_checks().enabled);
        CHECK(half.collective_checks().sequence == 0);
        sy::collective::allreduce(half, data);
        CHECK(half.collective_checks().sequence == 1);
        CHECK(t.collective_checks().sequence == 1);
      },
      checked());
}

// Run by meson with SWITCHYARD_CHECK_COLLECTIVES=1 (test collective.checked.environment).
TEST_CASE("collective.checked.environment: SWITCHYARD_CHECK_COLLECTIVES=1 turns checks on without code" *
          doctest::timeout(60) * doctest::skip()) {
  REQUIRE(std::string_view(std::getenv("SWITCHYARD_CHECK_COLLECTIVES")) == "1");
  CHECK(sy::transport::inproc_options{}.check_collectives);
  const auto messages = sy::transport::run_inproc(2, [](sy::transport::inproc& t) -> std::string {
    std::vector<float> data(t.rank() == 0 ? 3 : 4, 1.0f);
    try {
      sy::collective::allreduce(t, data);
    } catch (const sy::usage_error& e) {
      return e.what();
    }
    return "no error";
  });
  expect_everywhere(messages, {"element count: 3 (rank 0) vs 4 (rank 1)"});
}

#include <switchyard/collective/allreduce.hpp>
#include <switchyard/transport/faulty.hpp>

#include "harness.hpp"
#include "scenarios.hpp"

TEST_CASE("allreduce.inproc: against the sequential reference at 1, 2, 3, 4 and 7 ranks" * doctest::timeout(300)) {
  harness::run_at_every_size([](switchyard::transport::inproc& t) { return scenarios::allreduce_suite(t); });
}

TEST_CASE("allreduce.inproc.identical_bits: replicas agree to the last bit when sums round" * doctest::timeout(300)) {
  harness::run_at_every_size([](switchyard::transport::inproc& t) { return scenarios::identical_bits_suite(t); });
}

namespace {

// Runs allreduce with a count that differs on the last rank; returns what each rank caught.
template <class Algorithm>
std::vector<std::string> mismatched_counts(int ranks) {
  switchyard::transport::inproc_options o;
  o.timeout = std::chrono::seconds(2);
  return switchyard::transport::run_inproc(
      ranks,
      [](switchyard::transport::inproc& t) -> std::string {
        std::vector<float> data(t.rank() == t.size() - 1 ? 11 : 10, 1.0f);
        try {
          switchyard::collective::allreduce(t, data, switchyard::ops::sum{}, Algorithm{});
        } catch (const switchyard::error& e) {
          return e.what();
        }
        return "no error";
      },
      o);
}

}  // namespace

TEST_CASE_TEMPLATE("allreduce.inproc.mismatched_counts: every rank gets an error naming the sizes", Algorithm,
                   switchyard::algorithm::ring, switchyard::algorithm::recursive_doubling,
                   switchyard::algorithm::halving_doubling, switchyard::algorithm::native) {
  for (int ranks : {2, 3, 4}) {
    CAPTURE(ranks);
    const std::vector<std::string> caught = mismatched_counts<Algorithm>(ranks);
    std::string all_messages;
    for (const std::string& what : caught) {
      CAPTURE(what);
      CHECK(what != "no error");
      CHECK(what.find("allreduce") != std::string::npos);
      all_messages += what;
    }
    // Together the ranks' messages show both counts.
    CHECK(all_messages.find("10") != std::string::npos);
    CHECK(all_messages.find("11") != std::string::npos);
  }
}

TEST_CASE("allreduce.inproc.failure_propagates: a rank that throws releases the others") {
  auto run = [] {
    switchyard::transport::run_inproc(3, [](switchyard::transport::inproc& t) {
      std::vector<double> data(100, 1.0);
      if (t.rank() == 1) throw std::runtime_error("rank 1 ran out of data");
      switchyard::collective::allreduce(t, data, switchyard::ops::sum{}, switchyard::algorithm::ring{});
    });
  };
  CHECK_THROWS_WITH_AS(run(), "rank 1 ran out of data", std::runtime_error);
}

namespace {

// A user operation that is associative but not commutative: the later rank's value wins where
// it is set (like "last writer wins"). It does not specialize is_commutative: a user's operation
// is non-commutative by default.
struct last_set {
  std::int32_t operator()(std::int32_t a, std::int32_t b) const { return b != 0 ? b : a; }
};

}  // namespace

static_assert(!switchyard::is_commutative_v<last_set>);

TEST_CASE("allreduce.inproc.user_operation: a non-commutative operation keeps rank order, also on buffers large "
          "enough for the ring") {
  harness::run_at_every_size([](switchyard::transport::inproc& t) {
    std::vector<std::string> failures;
    // Element i is set on ranks r <= i % size: the highest such rank's value must win.
    std::vector<std::int32_t> data(switchyard::collective::ring_threshold_bytes / sizeof(std::int32_t) + 37);
    for (std::size_t i = 0; i < data.size(); ++i) {
      data[i] = t.rank() <= static_cast<int>(i % static_cast<std::size_t>(t.size())) ? t.rank() + 1 : 0;
    }
    std::vector<std::int32_t> by_doubling = data;
    std::vector<std::int32_t> by_halving = data;
    switchyard::collective::allreduce(t, by_doubling, last_set{}, switchyard::algorithm::recursive_doubling{});
    switchyard::collective::allreduce(t, by_halving, last_set{}, switchyard::algorithm::halving_doubling{});
    switchyard::collective::allreduce(t, data, last_set{}, switchyard::algorithm::automatic{});
    for (std::size_t i = 0; i < data.size(); ++i) {
      const auto expected = static_cast<std::int32_t>(i % static_cast<std::size_t>(t.size()) + 1);
      if (data[i] != expected || by_doubling[i] != expected || by_halving[i] != expected) {
        failures.push_back("element " + std::to_string(i) + " is " + std::to_string(data[i]) + "/" +
                           std::to_string(by_doubling[i]) + "/" + std::to_string(by_halving[i]) + ", expected " +
                           std::to_string(expected));
      }
    }
    return failures;
  });
}

TEST_CASE("allreduce.inproc.views: a temporary span over part of a buffer is reduced in place") {
  const auto results = switchyard::transport::run_inproc(3, [](switchyard::transport::inproc& t) {
    std::vector<float> arena(10, 1.0f);
    switchyard::collective::allreduce(t, std::span<float>(arena).subspan(2, 5), switchyard::ops::sum{},
                                      switchyard::algorithm::ring{});
    return arena;
  });
  for (const auto& arena : results) {
    CHECK(arena[1] == 1.0f);
    CHECK(arena[2] == 3.0f);
    CHECK(arena[6] == 3.0f);
    CHECK(arena[7] == 1.0f);
  }
}

TEST_CASE("allreduce.inproc.halving_doubling: 5, 6, 8, 12 and 13 ranks, beyond the sizes every algorithm runs at" *
          doctest::timeout(300)) {
  for (int ranks : {5, 6, 8, 12, 13}) {
    CAPTURE(ranks);
    harness::report(switchyard::transport::run_inproc(
        ranks,
        [](switchyard::transport::inproc& t) {
          std::vector<std::string> failures;
          scenarios::allreduce_all_ops<std::int32_t, switchyard::algorithm::halving_doubling>(t, failures);
          scenarios::allreduce_all_ops<double, switchyard::algorithm::halving_doubling>(t, failures);
          for (std::size_t count : {std::size_t{7}, std::size_t{13}, std::size_t{100003}}) {
            scenarios::identical_bits_case<float, switchyard::algorithm::halving_doubling, switchyard::ops::sum>(
                t, count, failures);
          }
          return failures;
        },
        harness::options()));
  }
}

TEST_CASE("allreduce.automatic.halving_doubling: taken without a native all-reduce as prefers_halving_doubling says" *
          doctest::timeout(120)) {
  // faulty<inproc> has no native all-reduce: automatic chooses among the library's algorithms.
  auto bits = [](int ranks, std::size_t count, auto algorithm) {
    return switchyard::transport::run_inproc(
        ranks,
        [&](switchyard::transport::inproc& t) {
          switchyard::transport::faulty f(t);
          std::vector<float> data(count);
          for (std::size_t i = 0; i < count; ++i) data[i] = scenarios::rounding_value<float>(t.rank(), i);
          switchyard::collective::allreduce(f, data, switchyard::ops::sum{}, algorithm);
          return scenarios::bit_hash(data);
        },
        harness::options());
  };
  constexpr std::size_t threshold = switchyard::collective::ring_threshold_bytes;
  const std::size_t large = threshold / sizeof(float) + 3;
  const std::size_t beyond = 7 * threshold / sizeof(float);
  using switchyard::algorithm::automatic;
  using switchyard::algorithm::halving_doubling;
  using switchyard::algorithm::ring;
  // Rounding sums differ between the algorithms, so equal bits say which one ran.
  CHECK(bits(8, large, automatic{}) == bits(8, large, halving_doubling{}));
  CHECK(bits(8, large, automatic{}) != bits(8, large, ring{}));
  CHECK(bits(12, large, automatic{}) == bits(12, large, halving_doubling{}));
  CHECK(bits(12, beyond, automatic{}) == bits(12, beyond, ring{}));
  CHECK(bits(12, beyond, automatic{}) != bits(12, beyond, halving_doubling{}));
  CHECK(bits(7, large, automatic{}) == bits(7, large, ring{}));
}

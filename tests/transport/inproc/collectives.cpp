// transport/inproc/collectives.hpp: the native collectives, called on a group with one thread per
// rank: rank-order folding in tiles, identical results on every rank, and an error on every rank
// when the ranks' arguments differ.
#include <switchyard/transport/inproc/collectives.hpp>

#include "threads.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
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

// The rank the calling thread plays, for operations that behave differently per rank.
thread_local int playing = -1;

// Raises on rank 0; is slow on the others, so that they are still folding when rank 0 raises, and
// still after the timeout of the test's group (2 s).
struct raises_on_rank_0 {
  float operator()(float a, float b) const {
    if (playing == 0) throw std::runtime_error("bad operation on rank 0");
    std::this_thread::sleep_for(std::chrono::milliseconds(2200));
    return a + b;
  }
};

// Not commutative: folding a, b, c in rank order gives the digits abc.
struct append_digit {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a * 10 + b; }
};

}  // namespace

TEST_CASE("inproc.collectives.fold_block: every rank's block is folded in rank order, tile by tile") {
  // Three tiles of int64 (1024 per 8 KiB tile) and a partial one.
  const std::size_t count = 3 * 1024 + 5;
  std::vector<std::vector<std::int64_t>> inputs(3);
  std::vector<d::window_slot> window(3);
  for (std::size_t r = 0; r < 3; ++r) {
    inputs[r].assign(count, static_cast<std::int64_t>(r + 1));
    window[r].input = reinterpret_cast<const std::byte*>(inputs[r].data());
  }
  std::vector<std::int64_t> out(count, 0);
  std::size_t tiles = 0;
  d::fold_block<std::int64_t>(window, 2, count - 2, append_digit{},
                              [&](std::size_t at, std::span<const std::int64_t> tile) {
                                ++tiles;
                                CHECK(tile.size() <= 1024);
                                std::copy(tile.begin(), tile.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
                              });
  CHECK(tiles == 4);
  CHECK(out[0] == 0);
  CHECK(out[1] == 0);
  for (std::size_t i = 2; i < count; ++i) REQUIRE(out[i] == 123);
}

TEST_CASE("inproc.collectives.allreduce: every rank ends with the same bits, averaged where asked") {
  for (const int ranks : {1, 2, 3, 5}) {
    CAPTURE(ranks);
    auto g = make_group(ranks);
    const std::size_t count = 5000;  // more than one tile of floats per block
    std::vector<std::vector<float>> data(static_cast<std::size_t>(ranks));
    const auto raised = on_threads(ranks, [&](int rank) {
      std::vector<float>& mine = data[static_cast<std::size_t>(rank)];
      mine.resize(count);
      for (std::size_t i = 0; i < count; ++i) mine[i] = 0.1F * static_cast<float>(rank + 1) + static_cast<float>(i);
      d::native_allreduce(*g, rank, std::span<float>(mine), sy::ops::average{});
    });
    for (const std::string& r : raised) CHECK(r.empty());
    for (std::size_t i = 0; i < count; i += 499) {
      float sum = 0.1F + static_cast<float>(i);
      for (int r = 1; r < ranks; ++r) sum += 0.1F * static_cast<float>(r + 1) + static_cast<float>(i);
      CHECK(data[0][i] == doctest::Approx(sum / static_cast<float>(ranks)).epsilon(1e-6));
    }
    for (int r = 1; r < ranks; ++r) CHECK(data[static_cast<std::size_t>(r)] == data[0]);
  }
}

TEST_CASE("inproc.collectives.broadcast: every rank gets the root's buffer; a root outside the group is refused") {
  auto g = make_group(3);
  std::vector<std::vector<int>> data(3);
  const auto raised = on_threads(3, [&](int rank) {
    std::vector<int>& mine = data[static_cast<std::size_t>(rank)];
    mine.assign(4, rank == 1 ? 7 : -1);
    d::native_broadcast(*g, rank, std::span<int>(mine), 1);
  });
  for (const std::string& r : raised) CHECK(r.empty());
  for (const auto& mine : data) CHECK(mine == std::vector<int>(4, 7));
  std::vector<int> one(1);
  CHECK_THROWS_WITH_AS(d::native_broadcast(*g, 0, std::span<int>(one), 3),
                       doctest::Contains("rank 0: broadcast names rank 3 but the group has ranks 0 to 2"),
                       sy::usage_error);
}

TEST_CASE("inproc.collectives.allgather: blocks in rank order; an output of the wrong size is refused") {
  auto g = make_group(3);
  std::vector<std::vector<double>> all(3, std::vector<double>(6));
  const auto raised = on_threads(3, [&](int rank) {
    const std::vector<double> mine{static_cast<double>(rank), 10.0 + rank};
    d::native_allgather(*g, rank, std::span<const double>(mine), std::span<double>(all[static_cast<std::size_t>(rank)]));
  });
  for (const std::string& r : raised) CHECK(r.empty());
  for (const auto& out : all) CHECK(out == std::vector<double>{0, 10, 1, 11, 2, 12});
  const std::vector<double> two(2);
  std::vector<double> five(5);
  CHECK_THROWS_WITH_AS(d::native_allgather(*g, 0, std::span<const double>(two), std::span<double>(five)),
                       doctest::Contains("rank 0: allgather of 2 elements per rank over 3 ranks needs an output of 6 "
                                         "elements, got 5"),
                       sy::usage_error);
}

TEST_CASE("inproc.collectives.reduce_scatter: rank r gets block r of the reduction") {
  auto g = make_group(3);
  std::vector<std::vector<int>> data(3);
  std::vector<std::span<int>> blocks(3);
  const auto raised = on_threads(3, [&](int rank) {
    std::vector<int>& mine = data[static_cast<std::size_t>(rank)];
    mine.assign(10, rank + 1);
    blocks[static_cast<std::size_t>(rank)] = d::native_reduce_scatter(*g, rank, std::span<int>(mine), sy::ops::sum{});
  });
  for (const std::string& r : raised) CHECK(r.empty());
  // block_of(10, 3, r): {0, 4}, {4, 3}, {7, 3}.
  const std::size_t offsets[] = {0, 4, 7};
  const std::size_t sizes[] = {4, 3, 3};
  for (std::size_t r = 0; r < 3; ++r) {
    CAPTURE(r);
    CHECK(blocks[r].data() == data[r].data() + offsets[r]);
    REQUIRE(blocks[r].size() == sizes[r]);
    for (const int v : blocks[r]) CHECK(v == 6);
  }
}

TEST_CASE("inproc.collectives.mismatch: ranks that disagree all get the same error naming each rank's count") {
  auto g = make_group(3);
  const auto raised = on_threads(3, [&](int rank) {
    std::vector<float> mine(rank == 2 ? 5 : 4);
    d::native_allreduce(*g, rank, std::span<float>(mine), sy::ops::sum{});
  });
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    CHECK(raised[static_cast<std::size_t>(r)].ends_with(
        "] rank " + std::to_string(r) +
        ": allreduce called with mismatched arguments across ranks (rank 0: 4, rank 1: 4, rank 2: 5)"));
  }
}

TEST_CASE("inproc.collectives.mismatch: another element type or root is named, and the group works right after") {
  auto g = make_group(3);
  // Each rank catches the error and reduces again at once: a rank must not overwrite its window
  // slot while another is still reading the slots for its report.
  std::vector<std::vector<float>> after(3, std::vector<float>(4));
  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    std::vector<std::string> messages(3);
    const auto raised = on_threads(3, [&](int rank) {
      try {
        if (rank == 1) {
          std::vector<double> mine(4);
          d::native_allreduce(*g, rank, std::span<double>(mine), sy::ops::sum{});
        } else {
          std::vector<float> mine(4);
          d::native_allreduce(*g, rank, std::span<float>(mine), sy::ops::sum{});
        }
      } catch (const sy::usage_error& e) {
        messages[static_cast<std::size_t>(rank)] = e.what();
      }
      std::vector<float>& mine = after[static_cast<std::size_t>(rank)];
      std::fill(mine.begin(), mine.end(), static_cast<float>(rank + 1));
      d::native_allreduce(*g, rank, std::span<float>(mine), sy::ops::sum{});
    });
    for (const std::string& r : raised) CHECK(r.empty());
    const std::string mismatched = ": allreduce called with mismatched arguments across ranks (";
    CHECK(messages[0].ends_with("] rank 0" + mismatched + "rank 0: 4, rank 1: 4 (other element type), rank 2: 4)"));
    CHECK(messages[1].ends_with("] rank 1" + mismatched +
                                "rank 0: 4 (other element type), rank 1: 4, rank 2: 4 (other element type))"));
    CHECK(messages[2].ends_with("] rank 2" + mismatched + "rank 0: 4, rank 1: 4 (other element type), rank 2: 4)"));
    for (const auto& mine : after) CHECK(mine == std::vector<float>(4, 6.0F));
  }

  std::vector<std::string> messages(3);
  const auto raised = on_threads(3, [&](int rank) {
    std::vector<int> mine(4, rank);
    try {
      d::native_broadcast(*g, rank, std::span<int>(mine), rank == 2 ? 1 : 0);
    } catch (const sy::usage_error& e) {
      messages[static_cast<std::size_t>(rank)] = e.what();
    }
    d::native_broadcast(*g, rank, std::span<int>(mine), 2);
    if (mine != std::vector<int>(4, 2)) throw std::runtime_error("the broadcast after the error went wrong");
  });
  for (const std::string& r : raised) CHECK(r.empty());
  const std::string mismatched = ": broadcast called with mismatched arguments across ranks (";
  CHECK(messages[0].ends_with("] rank 0" + mismatched + "rank 0: 4, rank 1: 4, rank 2: 4 root 1)"));
  CHECK(messages[1].ends_with("] rank 1" + mismatched + "rank 0: 4, rank 1: 4, rank 2: 4 root 1)"));
  CHECK(messages[2].ends_with("] rank 2" + mismatched + "rank 0: 4 root 0, rank 1: 4 root 0, rank 2: 4)"));
}

TEST_CASE("inproc.collectives.timeout: a rank that gave up at the first barrier is not waited past") {
  // Rank 0 times out alone; rank 1 comes later and must not take rank 0's stale slot for an arrival.
  auto g = make_group(2, quick(50));
  std::vector<float> zero(4, 1.0F);
  std::vector<float> one(4, 2.0F);
  CHECK_THROWS_AS(d::native_allreduce(*g, 0, std::span<float>(zero), sy::ops::sum{}), sy::timeout_error);
  CHECK_THROWS_AS(d::native_allreduce(*g, 1, std::span<float>(one), sy::ops::sum{}), sy::timeout_error);
  CHECK(zero == std::vector<float>(4, 1.0F));
  CHECK(one == std::vector<float>(4, 2.0F));
}

TEST_CASE("inproc.collectives.operation_raises: every rank raises, and none leaves while others use its buffer") {
  auto g = make_group(2, quick(2000));
  std::vector<std::vector<float>> data(2, std::vector<float>(2, 1.0F));
  std::vector<float> when_rank_0_left;
  const auto raised = on_threads(2, [&](int rank) {
    playing = rank;
    try {
      d::native_allreduce(*g, rank, std::span<float>(data[static_cast<std::size_t>(rank)]), raises_on_rank_0{});
    } catch (...) {
      if (rank == 0) when_rank_0_left = data[0];
      throw;
    }
  });
  CHECK(raised[0].ends_with("bad operation on rank 0"));
  CHECK(raised[1].ends_with("] rank 1: allreduce abandoned because another rank's part of it raised"));
  // Rank 1 folded block 1 into both buffers (slowly, past the timeout) before rank 0 returned.
  CHECK(data[0] == when_rank_0_left);
  CHECK(data[0][1] == 2.0F);
}

TEST_CASE("inproc.collectives.mismatch: a broadcast that meets an allreduce is refused on both, naming each") {
  auto g = make_group(2);
  std::vector<std::vector<int>> data{std::vector<int>(4, 7), std::vector<int>(4, 1)};
  const auto raised = on_threads(2, [&](int rank) {
    std::span<int> mine(data[static_cast<std::size_t>(rank)]);
    if (rank == 0) {
      d::native_broadcast(*g, rank, mine, 0);
    } else {
      d::native_allreduce(*g, rank, mine, sy::ops::sum{});
    }
  });
  const std::string table = " called with mismatched arguments across ranks (rank 0: broadcast of 4, rank 1: allreduce of 4)";
  CHECK(raised[0].ends_with("] rank 0: broadcast" + table));
  CHECK(raised[1].ends_with("] rank 1: allreduce" + table));
  CHECK(data[0] == std::vector<int>(4, 7));
  CHECK(data[1] == std::vector<int>(4, 1));
}

TEST_CASE("inproc.collectives.mismatch: a rank that calls barrier() where the others reduce is named, and its old "
          "buffer is not touched") {
  // After a first all-reduce every slot holds a call like the next one: rank 2's is of that call.
  auto g = make_group(3, quick(300));
  std::vector<std::vector<float>> first(3, std::vector<float>(4, 1.0F));
  const auto raised_first = on_threads(3, [&](int rank) {
    d::native_allreduce(*g, rank, std::span<float>(first[static_cast<std::size_t>(rank)]), sy::ops::sum{});
  });
  for (const std::string& r : raised_first) CHECK(r.empty());
  std::vector<std::vector<float>> second(3, std::vector<float>(4, 2.0F));
  const auto raised = on_threads(3, [&](int rank) {
    if (rank == 2) {
      d::barrier(*g, rank);
    } else {
      d::native_allreduce(*g, rank, std::span<float>(second[static_cast<std::size_t>(rank)]), sy::ops::sum{});
    }
  });
  const std::string table = ": allreduce called with mismatched arguments across ranks (rank 0: 4, rank 1: 4, rank 2: "
                            "not in this collective)";
  CHECK(raised[0].ends_with("] rank 0" + table));
  CHECK(raised[1].ends_with("] rank 1" + table));
  CHECK(raised[2].empty());
  CHECK(first[2] == std::vector<float>(4, 3.0F));
  for (int r = 0; r < 2; ++r) CHECK(second[static_cast<std::size_t>(r)] == std::vector<float>(4, 2.0F));
}

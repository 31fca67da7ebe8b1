#include <switchyard/collective/choice.hpp>

#include <doctest/doctest.h>

#include <cstddef>

namespace {

constexpr std::size_t threshold = switchyard::collective::ring_threshold_bytes;
using switchyard::collective::prefers_halving_doubling;
using switchyard::collective::prefers_scatter_allgather;

}  // namespace

// Below halving_doubling_min_ranks: the ring. Powers of two from there: halving-doubling.
static_assert(!prefers_halving_doubling(threshold, 4) && !prefers_halving_doubling(threshold, 7));
static_assert(prefers_halving_doubling(threshold, 8) && prefers_halving_doubling(std::size_t{1} << 40, 1024));
// 12 ranks: p' = 8, the ring pays 22 latencies and halving-doubling 8, the fold 2 buffers more:
// halving-doubling below 7 thresholds.
static_assert(prefers_halving_doubling(7 * threshold - 1, 12) && !prefers_halving_doubling(7 * threshold, 12));
// 1,000 ranks: p' = 512, 989 latencies saved.
static_assert(prefers_halving_doubling(989 * threshold - 1, 1000) && !prefers_halving_doubling(989 * threshold, 1000));

TEST_CASE("choice.prefers_halving_doubling: the ring below 8 ranks, halving-doubling at powers of two, and off them "
          "while the buffer is below (p - 2 - log2 p') x 64 KiB") {
  for (int ranks = 1; ranks < switchyard::collective::halving_doubling_min_ranks; ++ranks) {
    CAPTURE(ranks);
    CHECK_FALSE(prefers_halving_doubling(threshold, ranks));
  }
  for (int ranks : {8, 16, 64, 256, 1024, 1 << 20}) {
    CAPTURE(ranks);
    CHECK(prefers_halving_doubling(threshold, ranks));
    CHECK(prefers_halving_doubling(std::size_t{1} << 40, ranks));
  }
  // 9 ranks: p' = 8; 9 - 2 - 3 = 4 thresholds.
  CHECK(prefers_halving_doubling(4 * threshold - 1, 9));
  CHECK_FALSE(prefers_halving_doubling(4 * threshold, 9));
}

// The tree below 8 ranks, whatever the size. With L = ceil(log2 p) rounds: scatter_allgather above
// L / (L - 2) thresholds. 8 ranks: L = 3, above 3 thresholds; 9 ranks: L = 4, above 2.
static_assert(!prefers_scatter_allgather(std::size_t{1} << 40, 7));
static_assert(!prefers_scatter_allgather(3 * threshold, 8) && prefers_scatter_allgather(3 * threshold + 1, 8));
static_assert(!prefers_scatter_allgather(2 * threshold, 9) && prefers_scatter_allgather(2 * threshold + 1, 9));
// 1,024 ranks: L = 10, above 10/8 thresholds (81,920 bytes).
static_assert(!prefers_scatter_allgather(81920, 1024) && prefers_scatter_allgather(81921, 1024));

TEST_CASE("choice.prefers_scatter_allgather: the tree below 8 ranks and for small buffers, scatter_allgather above "
          "L / (L - 2) x 64 KiB") {
  for (int ranks = 1; ranks < switchyard::collective::halving_doubling_min_ranks; ++ranks) {
    CAPTURE(ranks);
    CHECK_FALSE(prefers_scatter_allgather(std::size_t{1} << 40, ranks));
  }
  for (int ranks : {8, 16, 100, 1024, 1 << 20}) {
    CAPTURE(ranks);
    CHECK_FALSE(prefers_scatter_allgather(threshold, ranks));
    CHECK(prefers_scatter_allgather(3 * threshold + 1, ranks));
  }
  // 128 ranks: L = 7, above 7/5 thresholds.
  CHECK_FALSE(prefers_scatter_allgather(7 * threshold / 5, 128));
  CHECK(prefers_scatter_allgather(7 * threshold / 5 + 1, 128));
}

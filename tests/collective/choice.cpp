#include <switchyard/collective/choice.hpp>

#include <doctest/doctest.h>

#include <cstddef>

namespace {

constexpr std::size_t threshold = switchyard::collective::ring_threshold_bytes;
using switchyard::collective::prefers_halving_doubling;

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

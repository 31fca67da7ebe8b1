// Tests of switchyard/data/sequential_batches.hpp: every example once, in order, in batches
// that view the data set, the last one short.
#include "switchyard/data/sequential_batches.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <iterator>
#include <ranges>
#include <vector>

#include "fixtures.hpp"

using switchyard::usage_error;
using switchyard::data::batch_view;
using switchyard::data::sequential_batches;

static_assert(std::forward_iterator<sequential_batches::iterator>);
static_assert(std::ranges::forward_range<const sequential_batches>);

TEST_CASE("sequential_batches.cover_in_order" * doctest::timeout(60)) {
  for (const std::size_t size : {0, 1, 9, 10, 11}) {
    for (const std::size_t batch_size : {1, 3, 10, 32}) {
      CAPTURE(size);
      CAPTURE(batch_size);
      const auto data = fixtures::numbered_dataset(size, 2, 2);
      const sequential_batches batches(*data, batch_size);
      CHECK(batches.size() == (size + batch_size - 1) / batch_size);

      std::size_t next = 0;
      std::size_t count = 0;
      for (const batch_view batch : batches) {
        CHECK(batch.size() == std::min(batch_size, size - next));
        CHECK(batch.rows == 2);
        CHECK(batch.cols == 2);
        // A view into the data set itself: evaluation copies nothing.
        CHECK(batch.images.data() == data->image(next).data());
        CHECK(batch.labels.data() == data->labels().data() + next);
        next += batch.size();
        ++count;
      }
      CHECK(next == size);
      CHECK(count == batches.size());
    }
  }
}

TEST_CASE("sequential_batches.rejects_batch_size_0" * doctest::timeout(60)) {
  const auto data = fixtures::numbered_dataset(3, 2, 2);
  fixtures::check_mentions(
      fixtures::message_of<usage_error>([&] { (void)sequential_batches(*data, 0); }),
      {"batch size 0"});
}

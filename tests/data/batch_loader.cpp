// Tests of switchyard/data/batch_loader.hpp: gathered batches hold the right examples, a whole
// epoch of a shard_plan goes through it, and no batch allocates.
#include "switchyard/data/batch_loader.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "../common/counting_new.hpp"
#include "fixtures.hpp"
#include "switchyard/data/shard_plan.hpp"

using counting_new::allocations;

using switchyard::usage_error;
using switchyard::data::batch_loader;
using switchyard::data::shard_plan;

TEST_CASE("batch_loader.gathers_examples_in_order" * doctest::timeout(60)) {
  batch_loader loader(fixtures::numbered_dataset(20, 2, 3), 4);
  CHECK(loader.capacity() == 4);
  const std::vector<std::size_t> indices{17, 3, 11};
  const auto batch = loader.gather(indices);
  CHECK(batch.size() == 3);
  CHECK(batch.rows == 2);
  CHECK(batch.cols == 3);
  REQUIRE(batch.images.size() == 18);
  for (std::size_t slot = 0; slot < indices.size(); ++slot) {
    CHECK(std::ranges::all_of(batch.images.subspan(slot * 6, 6),
                              [&](std::uint8_t pixel) { return pixel == indices[slot]; }));
    CHECK(batch.labels[slot] == indices[slot] % 10);
  }
  // The view is of the loader's buffer, not the data set.
  CHECK(batch.images.data() != loader.data().image(17).data());
  CHECK(loader.gather({}).size() == 0);
}

TEST_CASE("batch_loader.rejects_bad_requests" * doctest::timeout(60)) {
  batch_loader loader(fixtures::numbered_dataset(20, 2, 3), 2);
  const std::vector<std::size_t> three{0, 1, 2};
  fixtures::check_mentions(fixtures::message_of<usage_error>([&] { (void)loader.gather(three); }),
                           {"3 examples do not fit the capacity of 2"});
  const std::vector<std::size_t> outside{19, 20};
  fixtures::check_mentions(fixtures::message_of<usage_error>([&] { (void)loader.gather(outside); }),
                           {"example 20 of a data set of 20"});
  fixtures::check_mentions(fixtures::message_of<usage_error>([] { batch_loader(nullptr, 4); }),
                           {"no data set"});
}

TEST_CASE("batch_loader.one_epoch_of_a_plan_without_allocating" * doctest::timeout(60)) {
  const auto data = fixtures::numbered_dataset(250, 4, 4);
  const std::size_t workers = 3;
  const std::size_t batch_size = 16;
  const shard_plan plan(data->size(), workers, batch_size, 11, 2);
  const std::size_t before_loaders = allocations.load();
  std::vector<batch_loader> loaders;
  for (std::size_t worker = 0; worker < workers; ++worker) loaders.emplace_back(data, batch_size);
  CHECK(allocations.load() > before_loaders);  // the counter sees the buffers being allocated

  std::vector<std::size_t> seen(data->size());
  std::size_t allocations_in_gather = 0;
  for (std::size_t step = 0; step < plan.steps(); ++step) {
    for (std::size_t worker = 0; worker < workers; ++worker) {
      const std::size_t before = allocations.load();
      const auto batch = loaders[worker].gather(plan.batch(worker, step));
      allocations_in_gather += allocations.load() - before;
      REQUIRE(batch.size() == batch_size);
      // Every image of the numbered set is filled with its index (mod 256), and there are fewer
      // than 256 of them: the first pixel names the example.
      for (std::size_t slot = 0; slot < batch.size(); ++slot) ++seen[batch.images[slot * 16]];
    }
  }
  CHECK(allocations_in_gather == 0);
  // Each example once, except the dropped tail of the plan's order.
  std::vector<std::size_t> expected(data->size(), 1);
  for (const std::size_t index : plan.order().last(plan.dropped())) expected[index] = 0;
  CHECK(seen == expected);
}

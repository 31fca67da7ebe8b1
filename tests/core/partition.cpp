#include <switchyard/core/partition.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <initializer_list>

using switchyard::block;
using switchyard::block_of;

static_assert(block_of(10, 3, 0).offset == 0 && block_of(10, 3, 0).size == 4);
static_assert(block_of(10, 3, 1).offset == 4 && block_of(10, 3, 1).size == 3);
static_assert(block_of(10, 3, 2).offset == 7 && block_of(10, 3, 2).size == 3);

TEST_CASE("partition.block_of: blocks tile the buffer in order and differ in size by at most one") {
  for (std::size_t count : {0u, 1u, 2u, 5u, 7u, 1000u, 1001u}) {
    for (std::size_t parts : {1u, 2u, 3u, 4u, 7u, 9u}) {
      CAPTURE(count);
      CAPTURE(parts);
      std::size_t next = 0;
      std::size_t smallest = count;
      std::size_t largest = 0;
      for (std::size_t i = 0; i < parts; ++i) {
        const block b = block_of(count, parts, i);
        CHECK(b.offset == next);
        next += b.size;
        smallest = std::min(smallest, b.size);
        largest = std::max(largest, b.size);
      }
      CHECK(next == count);
      CHECK(largest - smallest <= 1);
      CHECK(block_of(count, parts, 0).size == largest);
    }
  }
}

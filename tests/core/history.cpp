#include <switchyard/core/history.hpp>

#include <doctest/doctest.h>

#include <cstddef>

TEST_CASE("history: epochs in order, the last one at hand") {
  switchyard::train::history h;
  CHECK(h.empty());
  for (std::size_t epoch : {1u, 2u}) {
    switchyard::train::epoch_record record;
    record.epoch = epoch;
    record.test_accuracy = 0.25 * static_cast<double>(epoch + 1);
    h.epochs.push_back(record);
  }
  CHECK(!h.empty());
  CHECK(h.last().epoch == 2);
  CHECK(h.last().test_accuracy == 0.75);
}

// The trainer's hand-out of an epoch's batches: strided for synchronous stages, handed out by the
// stage otherwise.
#include <switchyard/train/batch_source.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace sy = switchyard;

namespace {

// The batches one worker trains when every step's outcome is `outcome`.
std::vector<std::size_t> drawn(const sy::train::batch_source& source, const sy::strategy::step_outcome& outcome) {
  std::vector<std::size_t> batches;
  std::optional<std::size_t> next = source.first();
  for (std::size_t s = 0; next; ++s) {
    batches.push_back(*next);
    next = source.next(s, outcome);
  }
  return batches;
}

}  // namespace

TEST_CASE("batch_source.strided: worker w of W trains w, w + W, ...; the remainder is left out") {
  // 11 batches over 3 workers: 3 each, 9 in all; batches 9 and 10 are not trained.
  for (std::size_t w = 0; w < 3; ++w) {
    const sy::train::batch_source source(11, 3, w, false);
    CHECK(source.batches() == 9u);
    CHECK(drawn(source, {}) == std::vector<std::size_t>{w, w + 3, w + 6});
  }
  const sy::train::batch_source one(5, 1, 0, false);
  CHECK(drawn(one, {}) == std::vector<std::size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("batch_source.strided: a step that says it is the stage's last ends the part") {
  const sy::train::batch_source source(12, 2, 1, false);
  sy::strategy::step_outcome last;
  last.last = true;
  CHECK(drawn(source, last) == std::vector<std::size_t>{1});
}

TEST_CASE("batch_source.handed_out: every remaining batch belongs to the part; the stage names the next") {
  const sy::train::batch_source source(11, 3, 2, true);
  CHECK(source.batches() == 11u);
  REQUIRE(source.first() == 2u);
  sy::strategy::step_outcome outcome;
  outcome.next_batch = 7;
  CHECK(source.next(0, outcome) == 7u);
  CHECK_FALSE(source.next(1, {}).has_value());  // nothing handed out: the worker is done
}

TEST_CASE("batch_source: a rank that is not a worker, or a worker beyond the part's batches, trains none") {
  CHECK_FALSE(sy::train::batch_source(10, 2, std::nullopt, false).first().has_value());
  CHECK_FALSE(sy::train::batch_source(2, 3, 2, true).first().has_value());  // 2 batches for 3 workers
  CHECK_FALSE(sy::train::batch_source(2, 3, 0, false).first().has_value());  // strided: 0 each
}

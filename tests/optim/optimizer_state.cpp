// Tests of optim/optimizer_state.hpp: slicing, assembling, their errors, and the serialize hook
// driven by a minimal archive (Boost's archives call it the same way).
#include "switchyard/optim/optimizer_state.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/core/sequence.hpp"
#include "../common/byte_archive.hpp"

namespace optim = switchyard::optim;
using test_support::byte_archive;
using state = optim::optimizer_state<float>;

namespace {

state sample() { return {5, 6, {{0, 1, 2, 3, 4, 5}, {10, 11, 12, 13, 14, 15}}, 15}; }

}  // namespace

TEST_CASE("optimizer_state.slice_takes_the_same_range_of_every_slot") {
  const state part = sample().slice(2, 3);
  CHECK(part.step == 5);
  CHECK(part.clock == 15);
  CHECK(part.size == 3);
  CHECK(part.slots == std::vector<std::vector<float>>{{2, 3, 4}, {12, 13, 14}});
  CHECK(sample().slice(6, 0).size == 0);
}

TEST_CASE("optimizer_state.assemble_inverts_slicing_for_uneven_shards") {
  const state whole = sample();
  const std::vector<state> shards{whole.slice(0, 1), whole.slice(1, 0), whole.slice(1, 4),
                                  whole.slice(5, 1)};
  CHECK(state::assemble(shards) == whole);
  const state stateless{3, 4, {}};
  const std::vector<state> sgd_shards{stateless.slice(0, 3), stateless.slice(3, 1)};
  CHECK(state::assemble(sgd_shards) == stateless);
}

TEST_CASE("optimizer_state.errors_name_the_problem") {
  CHECK_THROWS_AS((void)sample().slice(4, 3), switchyard::usage_error);
  CHECK_THROWS_AS((void)sample().slice(7, 0), switchyard::usage_error);
  CHECK_THROWS_AS((void)state::assemble({}), switchyard::usage_error);
  state later = sample().slice(3, 3);
  later.step = 6;
  const std::vector<state> mixed{sample().slice(0, 3), later};
  CHECK_THROWS_WITH((void)state::assemble(mixed), doctest::Contains("shard 1 has step 6"));
  state behind = sample().slice(3, 3);
  behind.clock = 14;
  const std::vector<state> unsynchronized{sample().slice(0, 3), behind};
  CHECK_THROWS_WITH((void)state::assemble(unsynchronized), doctest::Contains("clock 14"));
}

TEST_CASE("optimizer_state.serialize_round_trip") {
  std::vector<unsigned char> bytes;
  state written = sample();
  byte_archive<false> out{&bytes};
  serialize(out, written, 0);  // found by argument-dependent lookup, as Boost finds it
  state read;
  byte_archive<true> in{&bytes};
  serialize(in, read, 0);
  CHECK(read == sample());
}

TEST_CASE("optimizer_state.serialize: a corrupt slot count is refused before anything is allocated") {
  std::vector<unsigned char> bytes;
  state written = sample();
  byte_archive<false> out{&bytes};
  serialize(out, written, 0);
  // step, size, then the number of slots and the first slot's count: make that one absurd.
  const std::uint64_t absurd = std::uint64_t{1} << 60;
  std::memcpy(bytes.data() + 3 * sizeof(std::uint64_t), &absurd, sizeof absurd);
  const switchyard::sequence_budget_scope budget{bytes.size()};
  state read;
  byte_archive<true> in{&bytes};
  CHECK_THROWS_WITH_AS(serialize(in, read, 0), doctest::Contains("claims 1152921504606846976 elements"),
                       switchyard::data_error);
}

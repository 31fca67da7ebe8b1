// Tests of core/sequence.hpp: sequences round-trip through an archive, nested and as strings, and
// a loaded count above the budget is refused before anything is allocated.
#include "switchyard/core/sequence.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "switchyard/core/error.hpp"
#include "../common/byte_archive.hpp"

namespace {

using test_support::byte_archive;

template <class Sequence>
std::vector<unsigned char> saved(Sequence s) {
  std::vector<unsigned char> bytes;
  byte_archive<false> out{&bytes};
  switchyard::serialize_sequence(out, s);
  return bytes;
}

}  // namespace

TEST_CASE("serialize_sequence: vectors, nested vectors and strings round-trip") {
  const std::vector<std::vector<float>> nested{{1.5f, -2.0f}, {}, {3.0f}};
  std::vector<unsigned char> bytes = saved(nested);
  CHECK(bytes.size() == 8 + (8 + 8) + 8 + (8 + 4));
  std::vector<std::vector<float>> back;
  byte_archive<true> in{&bytes};
  switchyard::serialize_sequence(in, back);
  CHECK(back == nested);

  std::vector<unsigned char> text = saved(std::string("ps>allreduce"));
  std::string word;
  byte_archive<true> in_text{&text};
  switchyard::serialize_sequence(in_text, word);
  CHECK(word == "ps>allreduce");
}

TEST_CASE("serialize_sequence: a count above the budget is refused before the sequence grows") {
  std::vector<unsigned char> bytes = saved(std::vector<double>{1.0, 2.0, 3.0});
  const std::uint64_t absurd = std::uint64_t{1} << 62;
  std::memcpy(bytes.data(), &absurd, sizeof absurd);
  {
    const switchyard::sequence_budget_scope budget{bytes.size()};
    CHECK(switchyard::sequence_budget() == bytes.size());
    std::vector<double> back;
    byte_archive<true> in{&bytes};
    CHECK_THROWS_WITH_AS(switchyard::serialize_sequence(in, back),
                         doctest::Contains("claims 4611686018427387904 elements, more than the 32"),
                         switchyard::data_error);
    CHECK(back.empty());
  }
  // The scope restores the previous budget: none.
  CHECK(switchyard::sequence_budget() == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("serialize_flag: a flag is one byte, 0 or 1; any other byte is refused instead of read into a bool") {
  for (bool flag : {false, true}) {
    std::vector<unsigned char> bytes;
    byte_archive<false> out{&bytes};
    switchyard::serialize_flag(out, flag);
    REQUIRE(bytes.size() == 1);
    CHECK(bytes[0] == (flag ? 1 : 0));
    bool back = !flag;
    byte_archive<true> in{&bytes};
    switchyard::serialize_flag(in, back);
    CHECK(back == flag);
  }
  std::vector<unsigned char> corrupt{62};  // the byte the checkpoint fuzzer put into a bool
  bool back = false;
  byte_archive<true> in{&corrupt};
  CHECK_THROWS_WITH_AS(switchyard::serialize_flag(in, back), doctest::Contains("a loaded flag holds 62, not 0 or 1"),
                       switchyard::data_error);
}

// train/checkpoint/progress.hpp: a strategy's progress as bytes, decoded back into a strategy,
// refusing bytes of another strategy and leaving a copyable strategy as it was when they do not fit.
#include <switchyard/train/checkpoint/progress.hpp>

#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/trigger/after_epochs.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sy = switchyard;

namespace {

// A user's strategy with progress: a counter and a name of the phase it is in.
struct counting {
  std::uint64_t steps = 0;
  std::string phase = "warm";
  template <class Archive>
  void serialize_progress(Archive& archive) {
    archive & steps;
    sy::serialize_sequence(archive, phase);
  }
};

struct stateless {};

}  // namespace

TEST_CASE("checkpoint.progress.round_trip: a user strategy's progress comes back from its bytes") {
  counting trained{41, "steady"};
  const std::vector<std::uint8_t> bytes = sy::train::encode_progress(trained);
  REQUIRE_FALSE(bytes.empty());
  counting resumed;
  sy::train::decode_progress(resumed, bytes, "run.bin");
  CHECK(resumed.steps == 41);
  CHECK(resumed.phase == "steady");
}

TEST_CASE("checkpoint.progress.none: a strategy without progress writes no bytes and refuses some") {
  stateless s;
  CHECK(sy::train::encode_progress(s).empty());
  CHECK_NOTHROW(sy::train::decode_progress(s, {}, "run.bin"));
  const std::vector<std::uint8_t> some{1, 2, 3};
  CHECK_THROWS_WITH_AS(sy::train::decode_progress(s, some, "run.bin"),
                       doctest::Contains("checkpoint run.bin holds 3 bytes of strategy progress, this strategy "
                                         "keeps none; was it written by a strategy switch?"),
                       sy::data_error);
}

TEST_CASE("checkpoint.progress.partial: bytes that fail partway leave the strategy as it was") {
  counting trained{41, "a phase with a long name"};
  std::vector<std::uint8_t> bytes = sy::train::encode_progress(trained);
  bytes.resize(bytes.size() - 5);  // the steps decode, the phase does not
  counting kept{7, "kept"};
  CHECK_THROWS_WITH_AS(sy::train::decode_progress(kept, bytes, "cut.bin"),
                       doctest::Contains("checkpoint cut.bin does not hold this strategy's progress"), sy::data_error);
  CHECK(kept.steps == 7);
  CHECK(kept.phase == "kept");
  // A count that claims more than the bytes hold is refused before anything is allocated.
  std::vector<std::uint8_t> absurd = sy::train::encode_progress(trained);
  for (std::size_t i = 8; i < 16; ++i) absurd[i] = 0xff;  // the phase's 64-bit count follows the steps
  CHECK_THROWS_WITH_AS(sy::train::decode_progress(kept, absurd, "absurd.bin"), doctest::Contains("claims"),
                       sy::data_error);
  CHECK(kept.steps == 7);
}

TEST_CASE("checkpoint.progress: progress that does not fit the strategy is refused") {
  using chain =
      sy::strategy::switch_to<sy::strategy::all_reduce<>, sy::strategy::all_reduce<>, sy::trigger::after_epochs<2>>;
  chain switching;
  CHECK_THROWS_WITH_AS(sy::train::decode_progress(switching, {}, "file.bin"),
                       doctest::Contains("checkpoint file.bin does not hold this strategy's progress"), sy::data_error);
  std::vector<std::uint8_t> bytes = sy::train::encode_progress(switching);
  REQUIRE_FALSE(bytes.empty());
  sy::strategy::all_reduce<> plain;
  CHECK_THROWS_WITH_AS(sy::train::decode_progress(plain, bytes, "file.bin"),
                       doctest::Contains("this strategy keeps none; was it written by a strategy switch?"),
                       sy::data_error);
  bytes.push_back(0);
  CHECK_THROWS_WITH_AS(sy::train::decode_progress(switching, bytes, "file.bin"),
                       doctest::Contains("holds more strategy progress than this strategy has"), sy::data_error);
}


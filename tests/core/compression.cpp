// switchyard/core/compression.hpp: fp16 and bf16 round to nearest even within their formats'
// bounds, keep every word through a round trip, and match the compiler's own _Float16 conversion
// where the compiler has one.
#include <switchyard/core/compression.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace sy = switchyard;
using sy::compression::bf16;
using sy::compression::fp16;

static_assert(sy::compression::codec<fp16> && sy::compression::codec<bf16>);
static_assert(fp16::encode(1.0f) == 0x3c00 && fp16::decode(0x3c00) == 1.0f);
static_assert(bf16::encode(1.0f) == 0x3f80 && bf16::decode(0x3f80) == 1.0f);

namespace {

float from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// Every float bit pattern with a stride: 17 million values over every exponent and sign.
template <class Visit>
void sweep_floats(Visit visit) {
  for (std::uint64_t bits = 0; bits <= 0xffffffffull; bits += 251) visit(from_bits(static_cast<std::uint32_t>(bits)));
}

template <class Codec>
void check_bound(float x) {
  const float back = Codec::decode(Codec::encode(x));
  const float limit = std::fmax(std::fabs(x), Codec::min_normal) * Codec::unit_roundoff;
  if (!(std::fabs(back - x) <= limit)) {
    INFO("x = " << x << " (bits " << std::bit_cast<std::uint32_t>(x) << ") came back as " << back);
    FAIL("beyond the format's rounding bound");
  }
}

}  // namespace

TEST_CASE_TEMPLATE("compression: every word survives a decode and an encode", Codec, fp16, bf16) {
  std::size_t mismatches = 0;
  for (std::uint32_t w = 0; w <= 0xffff; ++w) {
    const float value = Codec::decode(static_cast<std::uint16_t>(w));
    const std::uint16_t again = Codec::encode(value);
    if (std::isnan(value)) {
      if (!std::isnan(Codec::decode(again))) ++mismatches;
    } else if (again != w) {
      ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE_TEMPLATE("compression: the round trip stays within the format's bound", Codec, fp16, bf16) {
  const float largest = Codec::decode(std::is_same_v<Codec, fp16> ? 0x7bff : 0x7f7f);
  std::size_t checked = 0;
  sweep_floats([&](float x) {
    if (!std::isfinite(x) || std::fabs(x) > largest) return;
    check_bound<Codec>(x);
    ++checked;
  });
  CHECK(checked > 1'000'000);
}

TEST_CASE("compression.fp16: ties go to the even word, and the range ends where IEEE binary16 ends") {
  CHECK(fp16::encode(1.0f + 0x1p-11f) == 0x3c00);        // halfway between 1 and the next: to even (1)
  CHECK(fp16::encode(1.0f + 3 * 0x1p-11f) == 0x3c02);    // halfway, the upper neighbour is even
  CHECK(fp16::encode(1.0f + 0x1p-11f + 0x1p-23f) == 0x3c01);  // just above halfway
  CHECK(fp16::encode(65504.0f) == 0x7bff);
  CHECK(fp16::encode(65519.996f) == 0x7bff);
  CHECK(fp16::encode(65520.0f) == 0x7c00);  // the tie above the largest rounds to infinity
  CHECK(fp16::encode(-1e9f) == 0xfc00);
  CHECK(fp16::encode(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(std::isnan(fp16::decode(fp16::encode(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(fp16::encode(0x1p-14f) == 0x0400);  // the least normal
  CHECK(fp16::encode(0x1p-24f) == 0x0001);  // the least subnormal
  CHECK(fp16::encode(0x1p-25f) == 0x0000);  // halfway to it: to even (zero)
  CHECK(fp16::encode(0x1.8p-25f) == 0x0001);
  CHECK(fp16::encode(0x1.ff8p-15f) == 0x03ff);  // the largest subnormal
  CHECK(fp16::encode(0x1.ffcp-15f) == 0x0400);  // halfway above it: to even, the least normal
  CHECK(fp16::encode(-0.0f) == 0x8000);
  CHECK(fp16::encode(FLT_TRUE_MIN) == 0x0000);
  CHECK(fp16::decode(0x0001) == 0x1p-24f);
  CHECK(fp16::decode(0x03ff) == 0x1.ff8p-15f);
  CHECK(fp16::decode(0xc000) == -2.0f);
}

TEST_CASE("compression.bf16: ties go to the even word, and float's range is kept") {
  CHECK(bf16::encode(1.0f + 0x1p-8f) == 0x3f80);
  CHECK(bf16::encode(1.0f + 3 * 0x1p-8f) == 0x3f82);
  CHECK(bf16::encode(1.0f + 0x1p-8f + 0x1p-23f) == 0x3f81);
  CHECK(bf16::decode(bf16::encode(1e30f)) == doctest::Approx(1e30f).epsilon(0x1p-8));
  CHECK(bf16::encode(FLT_MAX) == 0x7f80);  // past bf16's largest: infinity, as float arithmetic would
  CHECK(bf16::encode(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(std::isnan(bf16::decode(bf16::encode(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(bf16::decode(bf16::encode(from_bits(0x7f800001)))));  // a NaN with a low payload stays NaN
  CHECK(bf16::encode(-0.0f) == 0x8000);
}

#if defined(__FLT16_MANT_DIG__)
TEST_CASE("compression.fp16: the same words as the compiler's _Float16 conversion") {
  std::size_t mismatches = 0;
  sweep_floats([&](float x) {
    const auto reference = std::bit_cast<std::uint16_t>(static_cast<_Float16>(x));
    if (std::isnan(x) ? !std::isnan(fp16::decode(fp16::encode(x))) : fp16::encode(x) != reference) ++mismatches;
  });
  for (std::uint32_t w = 0; w <= 0xffff; ++w) {
    const auto word = static_cast<std::uint16_t>(w);
    const float reference = static_cast<float>(std::bit_cast<_Float16>(word));
    if (!std::isnan(reference) && std::bit_cast<std::uint32_t>(fp16::decode(word)) != std::bit_cast<std::uint32_t>(reference)) {
      ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}
#endif

TEST_CASE("compression: spans encode and decode element by element") {
  const std::vector<float> values{0.1f, -2.5f, 1e-6f, 3e4f};
  std::vector<std::uint16_t> words(values.size());
  std::vector<float> back(values.size());
  sy::compression::encode<fp16>(values, words);
  sy::compression::decode<fp16>(words, back);
  for (std::size_t i = 0; i < values.size(); ++i) {
    CHECK(words[i] == fp16::encode(values[i]));
    CHECK(back[i] == fp16::decode(words[i]));
  }
}

TEST_CASE("compression: formats by name") {
  using sy::compression::format;
  CHECK(sy::compression::parse_format("none") == format::none);
  CHECK(sy::compression::parse_format("fp16") == format::fp16);
  CHECK(sy::compression::parse_format("bf16") == format::bf16);
  CHECK(sy::compression::name(format::bf16) == "bf16");
  CHECK_THROWS_WITH_AS(sy::compression::parse_format("fp8"), "unknown compression 'fp8': choose none, fp16 or bf16",
                       sy::usage_error);
}

TEST_CASE_TEMPLATE("compression.error_feedback: over 1000 steps the decoded sum stays within one rounding of the "
                   "exact sum",
                   Codec, fp16, bf16) {
  constexpr std::size_t size = 64;
  sy::compression::error_feedback feedback;
  std::vector<std::uint16_t> words(size);
  std::vector<double> exact(size, 0.0);
  std::vector<double> received(size, 0.0);
  std::vector<double> without_feedback(size, 0.0);
  std::vector<float> values(size);
  std::uint64_t state = 12345;
  double worst = 0;
  for (int step = 0; step < 1000; ++step) {
    for (std::size_t i = 0; i < size; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const double unit = static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5;
      // Element 0 is a constant too small for fp16 (it rounds to zero alone); the others span
      // magnitudes from 1e-3 to 1.
      values[i] = i == 0 ? 1e-8f : static_cast<float>(unit * std::pow(10.0, -3.0 * static_cast<double>(i % 4) / 3.0));
    }
    feedback.encode<Codec>(values, words);
    double largest = 0;
    for (std::size_t i = 0; i < size; ++i) {
      exact[i] += values[i];
      received[i] += Codec::decode(words[i]);
      without_feedback[i] += Codec::decode(Codec::encode(values[i]));
      largest = std::max(largest, std::abs(static_cast<double>(values[i])) + 1.0);
      worst = std::max(worst, std::abs(received[i] - exact[i]));
    }
    // The sums differ by the residual alone: at most one rounding of one step's value.
    for (std::size_t i = 0; i < size; ++i) {
      REQUIRE(std::abs(received[i] - exact[i] + static_cast<double>(feedback.residual()[i])) < 1e-6);
    }
    REQUIRE(worst <= largest * Codec::unit_roundoff);
  }
  // The tiny constant arrives in full, which it does not without feedback under fp16.
  CHECK(received[0] == doctest::Approx(exact[0]).epsilon(0.01));
  if constexpr (std::is_same_v<Codec, fp16>) CHECK(without_feedback[0] == 0.0);
  feedback.reset();
  CHECK(feedback.residual().empty());
}

TEST_CASE("compression.error_feedback.restore: a saved residual continues the stream to the same words") {
  using sy::compression::fp16;
  const std::vector<float> first{0.1f, 1e-8f, -3.3f, 2e-5f};
  const std::vector<float> second{0.2f, 1e-8f, 1.7f, -1e-6f};
  std::vector<std::uint16_t> words(first.size());
  sy::compression::error_feedback running;
  running.encode<fp16>(first, words);
  const std::vector<float> saved(running.residual().begin(), running.residual().end());
  REQUIRE(std::any_of(saved.begin(), saved.end(), [](float r) { return r != 0.0f; }));
  running.encode<fp16>(second, words);
  sy::compression::error_feedback restored;
  restored.restore(saved);
  std::vector<std::uint16_t> again(second.size());
  restored.encode<fp16>(second, again);
  CHECK(again == words);
  CHECK(std::ranges::equal(restored.residual(), running.residual()));
  // A fresh stream, or one restored from an empty residual, sends other words.
  sy::compression::error_feedback fresh;
  fresh.restore({});
  fresh.encode<fp16>(second, again);
  CHECK(again != words);
}

TEST_CASE("compression.with_codec: the codec a format names, and none refused") {
  using sy::compression::format;
  CHECK(sy::compression::with_codec(format::fp16, [](auto codec) { return decltype(codec)::name; }) == "fp16");
  CHECK(sy::compression::with_codec(format::bf16, [](auto codec) { return decltype(codec)::name; }) == "bf16");
  CHECK_THROWS_AS(sy::compression::with_codec(format::none, [](auto) { return 0; }), sy::usage_error);
}

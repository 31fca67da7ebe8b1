// Narrow floating-point encodings for the wire: IEEE 754 binary16 (fp16) and bfloat16 (bf16).
//
// Both put a float in 16 bits, half of the bytes a gradient takes on the link. fp16 keeps 11
// significant bits over a narrow range; bf16 keeps float's range with 8 significant bits. Both
// round to nearest, ties to even, and depend on no floating-point mode: encoding and decoding are
// integer operations, so they give the same bits with or without flush-to-zero.
#pragma once

#include <switchyard/core/error.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchyard::compression {

/// @brief A Codec: a 16-bit word type and the encoding of a float in it, with its rounding bound.
///
/// For every finite float x whose magnitude is between `C::min_normal` and the largest finite
/// value of the format, `|decode(encode(x)) - x| <= C::unit_roundoff * |x|`; below `min_normal`,
/// the error is at most `C::unit_roundoff * C::min_normal`. A user's codec needs these members only.
template <class C>
concept codec = requires(float x, typename C::word w) {
  { C::encode(x) } noexcept -> std::same_as<typename C::word>;
  { C::decode(w) } noexcept -> std::same_as<float>;
  { C::unit_roundoff } -> std::convertible_to<float>;
  { C::min_normal } -> std::convertible_to<float>;
  { C::name } -> std::convertible_to<std::string_view>;
};

/// @brief IEEE 754 binary16: 1 sign, 5 exponent and 10 fraction bits.
///
/// Relative error at most 2^-11 from 6.1e-5 (2^-14) to 65504; below, fp16's subnormals keep an
/// absolute error of at most 2^-25, and magnitudes of 65520 and more become infinity.
struct fp16 {
  using word = std::uint16_t;
  static constexpr std::string_view name = "fp16";
  static constexpr float unit_roundoff = 0x1p-11f;
  static constexpr float min_normal = 0x1p-14f;

  static constexpr word encode(float value) noexcept {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<word>((bits >> 16) & 0x8000u);
    const std::uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<word>(sign | 0x7e00u);  // NaN stays a (quiet) NaN
    if (magnitude >= 0x477ff000u) return static_cast<word>(sign | 0x7c00u);  // 65520 and up round to infinity
    if (magnitude >= 0x38800000u) {  // 2^-14 and up: a normal fp16
      // Round the 13 dropped fraction bits to nearest, ties to the even result, then rebias the
      // exponent from 127 to 15; a carry out of the fraction moves to the exponent, as it should.
      const std::uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
      return static_cast<word>(sign | ((rounded - (112u << 23)) >> 13));
    }
    // Below 2^-14: an fp16 subnormal, the float's significand in units of 2^-24.
    const std::uint32_t exponent = magnitude >> 23;
    if (exponent < 102) return sign;  // below 2^-25: rounds to zero (2^-25 itself is a tie to 0)
    const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // 14 to 24
    std::uint32_t units = significand >> shift;
    const std::uint32_t rest = significand & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (units & 1u) != 0)) ++units;  // may reach 2^-14, the least normal
    return static_cast<word>(sign | units);
  }

  static constexpr float decode(word w) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(w & 0x8000u) << 16;
    const std::uint32_t exponent = (w >> 10) & 0x1fu;
    const std::uint32_t fraction = w & 0x3ffu;
    if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (fraction << 13));
    if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (fraction << 13));
    if (fraction == 0) return std::bit_cast<float>(sign);
    // A subnormal, fraction * 2^-24: a normal float, with the leading bit moved to the exponent.
    const int top = std::bit_width(fraction) - 1;  // 0 to 9
    const std::uint32_t float_exponent = static_cast<std::uint32_t>(top + 103);
    const std::uint32_t float_fraction = (fraction << (23 - top)) & 0x7fffffu;
    return std::bit_cast<float>(sign | (float_exponent << 23) | float_fraction);
  }
};

/// @brief bfloat16: float's sign and 8 exponent bits with 7 fraction bits, float's range.
///
/// Relative error at most 2^-8 for every normal float; values that round past float's largest
/// become infinity, as in float arithmetic.
struct bf16 {
  using word = std::uint16_t;
  static constexpr std::string_view name = "bf16";
  static constexpr float unit_roundoff = 0x1p-8f;
  static constexpr float min_normal = 0x1p-126f;

  static constexpr word encode(float value) noexcept {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<word>((bits >> 16) | 0x40u);  // a quiet NaN
    return static_cast<word>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }

  static constexpr float decode(word w) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(w) << 16); }
};

/// @brief Encodes `values` into `words`, element by element; the spans have the same size.
template <codec C>
void encode(std::span<const float> values, std::span<typename C::word> words) noexcept {
  for (std::size_t i = 0; i < values.size(); ++i) words[i] = C::encode(values[i]);
}

/// @brief Decodes `words` into `values`, element by element; the spans have the same size.
template <codec C>
void decode(std::span<const typename C::word> words, std::span<float> values) noexcept {
  for (std::size_t i = 0; i < words.size(); ++i) values[i] = C::decode(words[i]);
}

/// @brief Encodes a stream of values step after step, each step carrying the rounding error of the
/// last into the next (error feedback, as in EF-SGD and 1-bit SGD).
///
/// Step k sends `encode(g_k + e_k)` and keeps `e_{k+1} = g_k + e_k - decode(sent)`. What the
/// receiver decodes over any number of steps then sums to the values' sum minus the one residual
/// left, at most one rounding of one step's value, instead of an error that grows with the steps.
/// A value too small for the codec (below fp16's range, say) is not lost: it accumulates until it
/// counts. The residual is the only state: one float per element, sized by the first `encode`.
class error_feedback {
 public:
  /// Encodes `values` plus the residual into `words` (same size as `values`), and keeps the new
  /// residual. A value the codec cannot hold leaves a non-finite residual, and every later word
  /// of that element is non-finite until `reset`. This includes a finite value beyond fp16's
  /// 65504, which encodes to infinity. The receiver then applies a non-finite value, and a
  /// trainer's divergence check stops the run; bf16 has float's range.
  template <codec C>
  void encode(std::span<const float> values, std::span<typename C::word> words) {
    if (residual_.size() != values.size()) residual_.assign(values.size(), 0.0f);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const float owed = values[i] + residual_[i];
      words[i] = C::encode(owed);
      residual_[i] = owed - C::decode(words[i]);
    }
  }

  /// What the words sent so far still owe the values, element by element.
  [[nodiscard]] std::span<const float> residual() const noexcept { return residual_; }

  /// Forgets the residual (a new stage, a new model).
  void reset() noexcept { residual_.clear(); }

  /// Continues from a saved `residual()` (a checkpoint's): the next `encode` sends what the one
  /// after the save would have sent. An empty span is the same as `reset`.
  void restore(std::span<const float> residual) { residual_.assign(residual.begin(), residual.end()); }

 private:
  std::vector<float> residual_;
};

/// @brief The encoding chosen at run time: a stage's option, a command line's value.
enum class format { none, fp16, bf16 };

/// @brief "none", "fp16" or "bf16".
constexpr std::string_view name(format f) noexcept {
  switch (f) {
    case format::fp16: return fp16::name;
    case format::bf16: return bf16::name;
    case format::none: break;
  }
  return "none";
}

/// @brief Calls `f(fp16{})` or `f(bf16{})` for the codec `f` names; `format::none` has none.
/// @throws usage_error for `format::none`.
template <class F>
decltype(auto) with_codec(format chosen, F&& f) {
  switch (chosen) {
    case format::fp16: return std::forward<F>(f)(fp16{});
    case format::bf16: return std::forward<F>(f)(bf16{});
    case format::none: break;
  }
  throw usage_error("with_codec: format none has no codec");
}

/// @brief The format `text` names ("none", "fp16", "bf16").
/// @throws usage_error naming the text and the choices for anything else.
inline format parse_format(std::string_view text) {
  if (text == "none") return format::none;
  if (text == fp16::name) return format::fp16;
  if (text == bf16::name) return format::bf16;
  throw usage_error("unknown compression '" + std::string(text) + "': choose none, fp16 or bf16");
}

}  // namespace switchyard::compression

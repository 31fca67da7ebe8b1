// All-reduce with narrow words on the wire: a float buffer is encoded (fp16, bf16 or a user's
// codec), reduced as words by any all-reduce algorithm over any transport, and decoded.
#pragma once

#include <switchyard/collective/algorithm.hpp>
#include <switchyard/collective/allreduce.hpp>
#include <switchyard/core/compression.hpp>
#include <switchyard/core/operations.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace switchyard::collective {

/// @brief The reduction `Op` on encoded words: both operands are decoded, combined in float, and
/// the result encoded again. Every hop of an algorithm then carries words, and each partial result
/// is rounded to the codec once.
template <compression::codec Codec, class Op>
struct encoded_op {
  Op op;
  typename Codec::word operator()(typename Codec::word a, typename Codec::word b) const {
    return Codec::encode(op(Codec::decode(a), Codec::decode(b)));
  }
};

/// @brief Reduces the floats of `data` in place over every rank of `t` with `op`, sending
/// `Codec`'s words (half the bytes of float for fp16 and bf16) instead of floats.
///
/// The algorithm reduces the words as it would any element type, so every rank ends with the same
/// bits (the all-reduce's promise), and any algorithm and transport take part unchanged, without
/// a native collective (MPI's reductions do not know the codec). Each partial sum is rounded to
/// the codec: with n ranks, a sum's error is at most about n rounding steps of the codec, and a
/// single rank gets its values rounded once. `ops::average`'s division is done in float, after
/// decoding. `words` is scratch, kept by the caller between calls so that a step allocates nothing.
/// @code
/// std::vector<std::uint16_t> words;
/// switchyard::collective::compressed_allreduce<switchyard::compression::bf16>(t, grad, words, switchyard::ops::average{});
/// @endcode
template <compression::codec Codec, class Transport, class Op = ops::sum, class Algorithm = algorithm::automatic>
void compressed_allreduce(Transport& t, std::span<float> data, std::vector<typename Codec::word>& words, Op op = {},
                          Algorithm algorithm = {}) {
  words.resize(data.size());
  compression::encode<Codec>(data, words);
  allreduce(t, words, encoded_op<Codec, Op>{op}, algorithm);
  compression::decode<Codec>(words, data);
  finalize_all<Op>(data, t.size());
}

/// @brief `compressed_allreduce` with the codec chosen at run time; `format::none` is the plain
/// float all-reduce.
template <class Transport, class Op = ops::sum, class Algorithm = algorithm::automatic>
void compressed_allreduce(compression::format format, Transport& t, std::span<float> data,
                          std::vector<std::uint16_t>& words, Op op = {}, Algorithm algorithm = {}) {
  if (format == compression::format::none) {
    allreduce(t, data, op, algorithm);
    return;
  }
  compression::with_codec(format, [&]<class Codec>(Codec) {
    compressed_allreduce<Codec>(t, data, words, op, algorithm);
  });
}

}  // namespace switchyard::collective

namespace switchyard {

/// Decoding, combining and encoding commutes when the operation does.
template <compression::codec Codec, class Op>
struct is_commutative<collective::encoded_op<Codec, Op>> : is_commutative<Op> {};

}  // namespace switchyard

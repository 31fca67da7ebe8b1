// The Model role the trainer and the strategies program against: two flat arenas (parameters and
// gradients) plus a training call and an evaluation call per batch.
#pragma once

#include <concepts>
#include <span>
#include <type_traits>

#include "switchyard/data/batch.hpp"
#include "switchyard/nn/evaluation.hpp"

namespace switchyard::nn {

namespace detail {

template <class S>
inline constexpr bool is_mutable_float_span = false;
template <std::floating_point E>
  requires(!std::is_const_v<E>)
inline constexpr bool is_mutable_float_span<std::span<E>> = true;

}  // namespace detail

/// @brief A Model: all parameters and all gradients as two flat arenas, a training call that
/// fills the gradients for a batch, and an evaluation call.
///
/// Required expressions, for `M& m` and `const data::batch_view& batch`:
/// @code
/// std::span<E> p = m.parameters();          // E a floating-point type, not const
/// std::span<E> g = m.gradients();           // same E, g.size() == p.size()
/// double loss = m.forward_backward(batch);  // convertible to double
/// nn::evaluation e = m.evaluate(batch);
/// @endcode
/// Semantics the trainer relies on:
/// - `parameters()` and `gradients()` cover the whole model, have equal lengths, and return the
///   same memory on every call for the model's lifetime (strategies keep the spans, broadcast
///   and all-reduce them in place, and optimizers update `parameters()` in place);
/// - `forward_backward(batch)` returns the mean loss over the batch and OVERWRITES `gradients()`
///   with the gradient of that mean (nothing accumulates across calls); it reads `parameters()`
///   and does not write them;
/// - `evaluate(batch)` returns the summed loss, the number of correct predictions and
///   `batch.size()`, and touches neither arena;
/// - a model is used by one thread at a time; ranks that are threads each own a replica.
///
/// `nn::sequential`, `nn::mlp` and `nn::cnn` model it; docs/models.md shows a user model
/// (logistic regression) written from scratch.
template <class M>
concept model = requires(M& m, const data::batch_view& batch) {
  { m.parameters() } -> std::same_as<decltype(m.gradients())>;
  requires detail::is_mutable_float_span<decltype(m.parameters())>;
  { m.forward_backward(batch) } -> std::convertible_to<double>;
  { m.evaluate(batch) } -> std::same_as<evaluation>;
};

}  // namespace switchyard::nn

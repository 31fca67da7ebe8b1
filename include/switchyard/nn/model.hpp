// The Model role the trainer and the strategies program against: two flat arenas (parameters and
// gradients) plus a training call and an evaluation call per batch.
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>

#include "switchyard/core/buffer.hpp"
#include "switchyard/data/batch.hpp"
#include "switchyard/nn/evaluation.hpp"

namespace switchyard::nn {

namespace detail {

// What parameters() and gradients() may return: a std::span<E> by value, or a reference to a
// Buffer (an xtensor, a std::vector, a user's tensor type) that the model owns; E a non-const
// floating-point type.
template <class R>
concept arena = (std::is_lvalue_reference_v<R> || std::same_as<R, std::remove_cvref_t<decltype(as_span(std::declval<R&>()))>>) &&
                mutable_buffer<std::remove_reference_t<R>> && std::floating_point<buffer_element_t<std::remove_reference_t<R>>>;

}  // namespace detail

/// @brief A Model: all parameters and all gradients as two flat arenas, a training call that
/// fills the gradients for a batch, and an evaluation call.
///
/// Required expressions, for `M& m` and `const data::batch_view& batch`:
/// @code
/// auto&& p = m.parameters();   // a std::span<E>, or a reference to a Buffer the model owns (an
///                              // xt::xtensor<E, 1>, a std::vector<E>, a user's tensor type:
///                              // core/buffer.hpp); E a floating-point type, not const
/// auto&& g = m.gradients();    // the same type, as_span(g).size() == as_span(p).size()
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
  requires detail::arena<decltype(m.parameters())>;
  { m.forward_backward(batch) } -> std::convertible_to<double>;
  { m.evaluate(batch) } -> std::same_as<evaluation>;
};

/// @brief A Model whose backward pass reports each part of the gradient arena as it finishes, so
/// that a strategy can communicate it while the rest is computed (`strategy::all_reduce` with
/// `exchange::overlapped`, as PyTorch DDP's autograd hooks do). Optional: a model without it trains the same,
/// with communication after the whole pass.
///
/// Required expression, besides `model`'s, for any `Ready& ready` callable with
/// `(std::size_t first, std::size_t count)`:
/// @code
/// double loss = m.forward_backward(batch, ready);
/// @endcode
/// It does what `forward_backward(batch)` does, and calls `ready(first, count)` once the pass has
/// written its last value of `gradients()[first, first + count)`. The ranges are disjoint, cover
/// the arena, and come in the same order on every call and every replica (a bucketed all-reduce
/// relies on that to reduce the same buckets on every rank). `nn::sequential` (so `nn::mlp` and
/// `nn::cnn`) reports one range per layer with parameters, last layer first.
namespace detail {
struct ready_archetype {  // a callable of (first, count) that is nothing more
  void operator()(std::size_t, std::size_t) const noexcept {}
};
}  // namespace detail

template <class M>
concept gradient_hooks = model<M> && requires(M& m, const data::batch_view& batch, detail::ready_archetype ready) {
  { m.forward_backward(batch, ready) } -> std::convertible_to<double>;
};

/// The element type of a model's parameters.
template <model M>
using parameter_t = std::remove_const_t<buffer_element_t<std::remove_reference_t<decltype(std::declval<M&>().parameters())>>>;

}  // namespace switchyard::nn

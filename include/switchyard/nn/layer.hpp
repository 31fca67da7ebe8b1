// The Layer role that nn::sequential chains, the per-example feature shape layers pass along, and
// the GEMM and buffer helpers the shipped layers share.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <span>
#include <vector>

#include <xtensor-blas/xblas.hpp>
#include <xtensor/xadapt.hpp>

#include "switchyard/nn/rng.hpp"

namespace switchyard::nn {

/// @brief The shape of one example's features, stored height-major, channels innermost (NHWC
/// for a batch). A flat feature vector of `k` values is `{1, 1, k}`.
struct feature_shape {
  std::size_t height = 1;
  std::size_t width = 1;
  std::size_t channels = 1;

  /// Values per example.
  [[nodiscard]] constexpr std::size_t size() const noexcept { return height * width * channels; }
  /// True for `{1, 1, k}`, the input dense layers accept.
  [[nodiscard]] constexpr bool flat() const noexcept { return height == 1 && width == 1; }
  friend constexpr bool operator==(const feature_shape&, const feature_shape&) = default;
};

/// @brief A Layer: one stage of `nn::sequential`, computing a batch forward and its gradients
/// backward on buffers it owns, with its parameters in slices of the model's arenas.
///
/// Required expressions, for `L& l`, `const L& cl`, `feature_shape in`, `std::span<T> params,
/// grads`, `portable_rng& rng`, `std::span<const T> x, dy`, `std::size_t n`, `bool propagate`,
/// with `T = typename L::value_type`:
/// @code
/// feature_shape out = l.configure(in);     // once, first: checks `in`, fixes the geometry
/// std::size_t k = cl.parameter_count();    // after configure
/// l.bind(params, grads);                   // its slices (k elements each) of the two arenas
/// l.initialize(rng);                       // writes initial values into `params`
/// std::span<const T> y = l.forward(x, n);  // x: n examples of `in`; y: n examples of `out`
/// std::span<const T> dx = l.backward(dy, n, propagate);
/// @endcode
/// `forward` may keep `x` for `backward` (the caller keeps it alive until then); `y` stays valid
/// until the next `forward`. `backward` takes dLoss/dy for the last forward, OVERWRITES `grads`
/// with dLoss/dparams, and returns dLoss/dx, or an empty span when `propagate` is false (layers
/// with no parameters before them skip that work). Buffers are sized for the largest batch seen, so a fixed batch
/// size allocates nothing after the first call. `bind` is called again when the model is copied.
///
/// Optional: `std::string d = cl.describe();`, the layer's kind and sizes (`"dense 784x256"`), for
/// `nn::sequential::layout()`; without it the layer appears as `"layer of K parameters"`.
template <class L>
concept layer = requires { typename L::value_type; } &&
    requires(L& l, const L& cl, feature_shape in, std::span<typename L::value_type> arena,
             portable_rng& rng, std::span<const typename L::value_type> x, std::size_t n,
             bool propagate) {
      { l.configure(in) } -> std::same_as<feature_shape>;
      { cl.parameter_count() } -> std::same_as<std::size_t>;
      l.bind(arena, arena);
      l.initialize(rng);
      { l.forward(x, n) } -> std::same_as<std::span<const typename L::value_type>>;
      { l.backward(x, n, propagate) } -> std::same_as<std::span<const typename L::value_type>>;
    };

namespace detail {

/// Grows `buffer` to at least `size` elements; never shrinks, so a steady batch size reuses it.
template <class T>
void grow(std::vector<T>& buffer, std::size_t size) {
  if (buffer.size() < size) buffer.resize(size);
}

/// A row-major `rows x cols` xtensor adaptor over `data`: no copy, no allocation (the shape is a
/// std::array). Built at the point of use rather than stored, because assigning one adaptor to
/// another copies the elements instead of rebinding the view.
template <class T>
auto matrix(T* data, std::size_t rows, std::size_t cols) {
  return xt::adapt(data, rows * cols, xt::no_ownership(), std::array<std::size_t, 2>{rows, cols});
}

/// C = op(A) op(B) + beta C over row-major matrices, written in place by xtensor-blas into the
/// caller's buffer; A is `a_rows x a_cols` as stored, op transposes it when `transpose_a`.
template <class T>
void gemm(const T* a, std::size_t a_rows, std::size_t a_cols, bool transpose_a, const T* b,
          std::size_t b_rows, std::size_t b_cols, bool transpose_b, T* c, T beta) {
  const auto lhs = matrix(a, a_rows, a_cols);
  const auto rhs = matrix(b, b_rows, b_cols);
  auto result = matrix(c, transpose_a ? a_cols : a_rows, transpose_b ? b_rows : b_cols);
  xt::blas::gemm(lhs, rhs, result, transpose_a, transpose_b, T{1}, beta);
}

/// Writes the column sums of the row-major `rows x cols` matrix `m` into `sums` (bias gradients).
template <class T>
void column_sums(const T* m, std::size_t rows, std::size_t cols, T* sums) {
  std::fill(sums, sums + cols, T{0});
  for (std::size_t r = 0; r < rows; ++r) {
    const T* row = m + r * cols;
    for (std::size_t c = 0; c < cols; ++c) sums[c] += row[c];
  }
}

/// Writes `bias` into each of the `rows` rows of `m`, so that a GEMM with beta = 1 adds onto it.
template <class T>
void broadcast_rows(const T* bias, std::size_t rows, std::size_t cols, T* m) {
  for (std::size_t r = 0; r < rows; ++r) std::copy(bias, bias + cols, m + r * cols);
}

}  // namespace detail
}  // namespace switchyard::nn

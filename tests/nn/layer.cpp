// Tests of nn/layer.hpp: the Layer concept, feature_shape, and the GEMM and buffer helpers
// (every transpose combination against a naive product).
#include "switchyard/nn/layer.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

#include "switchyard/nn/conv2d.hpp"
#include "switchyard/nn/dense.hpp"
#include "switchyard/nn/flatten.hpp"
#include "switchyard/nn/max_pool.hpp"
#include "switchyard/nn/relu.hpp"

namespace nn = switchyard::nn;

namespace {

struct missing_backward {
  using value_type = float;
  nn::feature_shape configure(nn::feature_shape in) { return in; }
  [[nodiscard]] std::size_t parameter_count() const { return 0; }
  void bind(std::span<float>, std::span<float>) {}
  void initialize(nn::portable_rng&) {}
  std::span<const float> forward(std::span<const float> x, std::size_t) { return x; }
};

}  // namespace

TEST_CASE("layer.concept_accepts_shipped_layers_and_rejects_incomplete_ones") {
  static_assert(nn::layer<nn::dense<float>> && nn::layer<nn::dense<double>>);
  static_assert(nn::layer<nn::conv2d<>> && nn::layer<nn::max_pool<>>);
  static_assert(nn::layer<nn::relu<>> && nn::layer<nn::flatten<>>);
  static_assert(!nn::layer<missing_backward>);
  static_assert(!nn::layer<int>);
  CHECK(nn::layer<nn::dense<>>);
}

TEST_CASE("layer.feature_shape") {
  constexpr nn::feature_shape image{28, 28, 3};
  static_assert(image.size() == 28 * 28 * 3);
  static_assert(!image.flat());
  static_assert(nn::feature_shape{1, 1, 7}.flat());
  CHECK(image == nn::feature_shape{28, 28, 3});
  CHECK(image != nn::feature_shape{28, 28, 1});
}

TEST_CASE_TEMPLATE("layer.gemm_all_transposes_match_naive_product", T, float, double) {
  // op(A) is m x k, op(B) is k x n; C = op(A) op(B) + beta C.
  constexpr std::size_t m = 3, k = 4, n = 5;
  std::vector<T> a(m * k), b(k * n), c0(m * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(i % 7) - T{3};
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(i % 5) * T{0.5};
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = static_cast<T>(i);
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      for (const T beta : {T{0}, T{1}}) {
        CAPTURE(ta);
        CAPTURE(tb);
        CAPTURE(beta);
        // Store A as k x m when transposed, B as n x k when transposed, with the same op values.
        std::vector<T> as(a.size()), bs(b.size());
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t p = 0; p < k; ++p) (ta ? as[p * m + i] : as[i * k + p]) = a[i * k + p];
        for (std::size_t p = 0; p < k; ++p)
          for (std::size_t j = 0; j < n; ++j) (tb ? bs[j * k + p] : bs[p * n + j]) = b[p * n + j];
        std::vector<T> c = c0;
        nn::detail::gemm(as.data(), ta ? k : m, ta ? m : k, ta, bs.data(), tb ? n : k, tb ? k : n,
                         tb, c.data(), beta);
        for (std::size_t i = 0; i < m; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            T expected = beta * c0[i * n + j];
            for (std::size_t p = 0; p < k; ++p) expected += a[i * k + p] * b[p * n + j];
            CHECK(c[i * n + j] == doctest::Approx(expected));
          }
        }
      }
    }
  }
}

TEST_CASE("layer.column_sums_and_broadcast_rows") {
  const std::vector<double> m{1, 2, 3, 4, 5, 6};  // 2 x 3
  std::vector<double> sums(3);
  nn::detail::column_sums(m.data(), 2, 3, sums.data());
  CHECK(sums == std::vector<double>{5, 7, 9});
  std::vector<double> rows(6);
  nn::detail::broadcast_rows(sums.data(), 2, 3, rows.data());
  CHECK(rows == std::vector<double>{5, 7, 9, 5, 7, 9});
}

TEST_CASE("layer.grow_never_shrinks") {
  std::vector<float> buffer;
  nn::detail::grow(buffer, 10);
  CHECK(buffer.size() == 10);
  const float* data = buffer.data();
  nn::detail::grow(buffer, 4);
  CHECK(buffer.size() == 10);
  CHECK(buffer.data() == data);
}

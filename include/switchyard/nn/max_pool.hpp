// Non-overlapping max pooling over square windows, per channel, remembering the winner of each
// window so that backward routes the gradient without a second search.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/nn/layer.hpp"
#include "switchyard/nn/rng.hpp"

namespace switchyard::nn {

/// @brief Max pooling with a `window x window` window and stride `window`.
///
/// The output is `{h / window, w / window, c}` (rows and columns that do not fill a window are
/// dropped, as in PyTorch's default). Ties go to the first maximum in row-major window order.
/// @tparam T element type (default `float`).
/// @code
/// nn::sequential model{seed, nn::feature_shape{28, 28, 1}, nn::conv2d{1, 8, 5}, nn::relu{},
///                      nn::max_pool{2}, nn::flatten{}, nn::dense{12 * 12 * 8, 10}};
/// @endcode
template <class T = float>
class max_pool {
 public:
  using value_type = T;

  /// A pooling layer with square windows of side `window` (> 0).
  explicit max_pool(std::size_t window) : window_(window) {
    if (window == 0) switchyard::detail::raise<usage_error>("nn::max_pool: window must be > 0");
  }

  feature_shape configure(feature_shape in) {
    if (in.height < window_ || in.width < window_) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str("nn::max_pool: window ", window_, " exceeds the input ",
                                             in.height, "x", in.width));
    }
    if (in.size() > std::numeric_limits<std::uint32_t>::max()) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str("nn::max_pool: ", in.size(),
                                             " values per example exceed the 32-bit winner index"));
    }
    in_ = in;
    out_ = {in.height / window_, in.width / window_, in.channels};
    return out_;
  }
  [[nodiscard]] std::size_t parameter_count() const noexcept { return 0; }
  /// `"max_pool 2"`: its part of `nn::sequential::layout()`.
  [[nodiscard]] std::string describe() const { return "max_pool " + std::to_string(window_); }
  void bind(std::span<T>, std::span<T>) noexcept {}
  void initialize(portable_rng&) noexcept {}

  std::span<const T> forward(std::span<const T> x, std::size_t n) {
    const std::size_t count = n * out_.size();
    detail::grow(output_, count);
    detail::grow(winner_, count);
    const std::size_t channels = in_.channels;
    for (std::size_t example = 0; example < n; ++example) {
      const std::size_t in_base = example * in_.size();
      for (std::size_t oy = 0; oy < out_.height; ++oy) {
        for (std::size_t ox = 0; ox < out_.width; ++ox) {
          const std::size_t out_at = ((example * out_.height + oy) * out_.width + ox) * channels;
          T* best = output_.data() + out_at;
          std::uint32_t* where = winner_.data() + out_at;
          // Channels innermost: each window row is a run of `window * channels` contiguous values.
          for (std::size_t wy = 0; wy < window_; ++wy) {
            for (std::size_t wx = 0; wx < window_; ++wx) {
              const std::size_t at =
                  in_base + ((oy * window_ + wy) * in_.width + ox * window_ + wx) * channels;
              const bool first = wy == 0 && wx == 0;
              for (std::size_t c = 0; c < channels; ++c) {
                if (first || x[at + c] > best[c]) {
                  best[c] = x[at + c];
                  where[c] = static_cast<std::uint32_t>(at + c - in_base);
                }
              }
            }
          }
        }
      }
    }
    return {output_.data(), count};
  }

  std::span<const T> backward(std::span<const T> dy, std::size_t n, bool propagate) {
    if (!propagate) return {};
    detail::grow(input_gradient_, n * in_.size());
    std::fill_n(input_gradient_.begin(), n * in_.size(), T{0});
    for (std::size_t example = 0; example < n; ++example) {
      T* dx = input_gradient_.data() + example * in_.size();
      const std::size_t out_base = example * out_.size();
      for (std::size_t i = 0; i < out_.size(); ++i) dx[winner_[out_base + i]] = dy[out_base + i];
    }
    return {input_gradient_.data(), n * in_.size()};
  }

  [[nodiscard]] std::size_t window() const noexcept { return window_; }

 private:
  std::size_t window_;
  feature_shape in_;
  feature_shape out_;
  std::vector<T> output_;
  std::vector<std::uint32_t> winner_;  // offset of each output's maximum within its example
  std::vector<T> input_gradient_;
};

}  // namespace switchyard::nn

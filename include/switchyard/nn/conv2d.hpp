// The 2-D convolution layer: im2col of the whole batch into one matrix, then a single GEMM per
// pass, so the work runs at BLAS speed; the column buffer is reused for the input gradient.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/nn/initializer.hpp"
#include "switchyard/nn/layer.hpp"
#include "switchyard/nn/rng.hpp"

namespace switchyard::nn {

/// @brief A 2-D convolution (cross-correlation, as in every framework) with square kernels,
/// a stride and zero padding, over NHWC batches.
///
/// Parameters, in arena order: the weights, `(kernel * kernel * inputs) x outputs` row-major with
/// the patch index ordered (ky, kx, input channel), then the bias of `outputs`. With `h x w`
/// inputs the output is `{(h + 2 padding - kernel) / stride + 1, (same for w), outputs}`.
///
/// Forward builds the im2col matrix (one row per output pixel of the batch, one column per patch
/// element) and computes `rows x outputs = columns x W` in one GEMM, which lands directly in NHWC
/// order. Backward: dW = columns^T dy, then dcolumns = dy W^T written over the column buffer
/// (no longer needed) and scattered back (col2im). Memory: the column buffer holds
/// `n * out_h * out_w * kernel^2 * inputs` values.
/// @tparam T element type (default `float`).
/// @code
/// nn::conv2d first{1, 32, 5};                   // 1 -> 32 channels, 5x5, stride 1, no padding
/// nn::conv2d same{32, 32, 3, 1, 1};             // 3x3 with padding 1 keeps h and w
/// @endcode
template <class T = float>
class conv2d {
 public:
  using value_type = T;

  /// A convolution from `inputs` to `outputs` channels with `kernel x kernel` windows.
  conv2d(std::size_t inputs, std::size_t outputs, std::size_t kernel, std::size_t stride = 1,
         std::size_t padding = 0, initializer scheme = initializer::he_uniform)
      : inputs_(inputs), outputs_(outputs), kernel_(kernel), stride_(stride), padding_(padding),
        scheme_(scheme) {
    if (inputs == 0 || outputs == 0 || kernel == 0 || stride == 0) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str("nn::conv2d: channels (", inputs, ", ", outputs,
                                             "), kernel (", kernel, ") and stride (", stride,
                                             ") must be > 0"));
    }
  }

  feature_shape configure(feature_shape in) {
    if (in.channels != inputs_ || in.height + 2 * padding_ < kernel_ ||
        in.width + 2 * padding_ < kernel_) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          "nn::conv2d: expects ", inputs_, " channels at least ", kernel_, "x", kernel_,
          " after padding ", padding_, ", got ", in.height, "x", in.width, "x", in.channels));
    }
    in_ = in;
    out_ = {(in.height + 2 * padding_ - kernel_) / stride_ + 1,
            (in.width + 2 * padding_ - kernel_) / stride_ + 1, outputs_};
    return out_;
  }

  [[nodiscard]] std::size_t parameter_count() const noexcept { return (patch() + 1) * outputs_; }
  /// `"conv2d 5x5 1->32"`, then `" stride 2"`, `" padding 1"` when not 1 and 0: its part of
  /// `nn::sequential::layout()`.
  [[nodiscard]] std::string describe() const {
    std::string d = "conv2d " + std::to_string(kernel_) + "x" + std::to_string(kernel_) + " " +
                    std::to_string(inputs_) + "->" + std::to_string(outputs_);
    if (stride_ != 1) d += " stride " + std::to_string(stride_);
    if (padding_ != 0) d += " padding " + std::to_string(padding_);
    return d;
  }

  void bind(std::span<T> params, std::span<T> grads) noexcept {
    params_ = params;
    grads_ = grads;
  }

  void initialize(portable_rng& rng) {
    const std::size_t receptive = kernel_ * kernel_;
    detail::initialize(params_.first(patch() * outputs_), scheme_, receptive * inputs_,
                       receptive * outputs_, rng);
    std::fill(params_.begin() + static_cast<std::ptrdiff_t>(patch() * outputs_), params_.end(), T{0});
  }

  std::span<const T> forward(std::span<const T> x, std::size_t n) {
    const std::size_t rows = n * out_.height * out_.width;
    detail::grow(columns_, rows * patch());
    gather(x.data(), n);
    detail::grow(output_, rows * outputs_);
    detail::broadcast_rows(params_.data() + patch() * outputs_, rows, outputs_, output_.data());
    detail::gemm(static_cast<const T*>(columns_.data()), rows, patch(), false,
                 static_cast<const T*>(params_.data()), patch(), outputs_, false, output_.data(), T{1});
    return {output_.data(), rows * outputs_};
  }

  std::span<const T> backward(std::span<const T> dy, std::size_t n, bool propagate) {
    const std::size_t rows = n * out_.height * out_.width;
    detail::gemm(static_cast<const T*>(columns_.data()), rows, patch(), true, dy.data(), rows,
                 outputs_, false, grads_.data(), T{0});
    detail::column_sums(dy.data(), rows, outputs_, grads_.data() + patch() * outputs_);
    if (!propagate) return {};
    // The columns are dead once dW is known, so dcolumns overwrites them instead of taking a
    // second buffer of the same (largest-in-the-model) size.
    detail::gemm(dy.data(), rows, outputs_, false, static_cast<const T*>(params_.data()), patch(),
                 outputs_, true, columns_.data(), T{0});
    detail::grow(input_gradient_, n * in_.size());
    std::fill_n(input_gradient_.begin(), n * in_.size(), T{0});
    scatter(input_gradient_.data(), n);
    return {input_gradient_.data(), n * in_.size()};
  }

  /// The weights as a `(kernel^2 * inputs) x outputs` xtensor view into the parameter arena.
  [[nodiscard]] auto weights() const {
    return detail::matrix(static_cast<const T*>(params_.data()), patch(), outputs_);
  }
  /// The bias as an xtensor view of `outputs` values into the parameter arena.
  [[nodiscard]] auto bias() const {
    return xt::adapt(static_cast<const T*>(params_.data()) + patch() * outputs_, outputs_,
                     xt::no_ownership(), std::array<std::size_t, 1>{outputs_});
  }
  [[nodiscard]] std::size_t kernel() const noexcept { return kernel_; }
  [[nodiscard]] std::size_t stride() const noexcept { return stride_; }
  [[nodiscard]] std::size_t padding() const noexcept { return padding_; }

 private:
  /// Values per im2col row: one kernel window over all input channels.
  [[nodiscard]] std::size_t patch() const noexcept { return kernel_ * kernel_ * inputs_; }

  /// Walks the batch's im2col layout: for each output pixel and kernel row, the in-bounds kernel
  /// columns form one contiguous run of the NHWC input (channels innermost) and the rest of that
  /// `kernel * inputs` segment is padding. Calls `visit(offset, input_at, first, last, inside)`
  /// with the segment's offset in the column buffer, the input offset of the run, the run's
  /// bounds [first, last) within the segment, and `inside` false when the whole segment is padding.
  template <class Visit>
  void for_each_run(std::size_t n, Visit&& visit) const {
    const auto signed_kernel = static_cast<std::ptrdiff_t>(kernel_);
    const auto height = static_cast<std::ptrdiff_t>(in_.height);
    const auto width = static_cast<std::ptrdiff_t>(in_.width);
    const std::size_t segment = kernel_ * inputs_;
    std::size_t row = 0;
    for (std::size_t example = 0; example < n; ++example) {
      const std::size_t example_base = example * in_.size();
      for (std::size_t oy = 0; oy < out_.height; ++oy) {
        const auto top = static_cast<std::ptrdiff_t>(oy * stride_) - static_cast<std::ptrdiff_t>(padding_);
        for (std::size_t ox = 0; ox < out_.width; ++ox, ++row) {
          const auto left = static_cast<std::ptrdiff_t>(ox * stride_) - static_cast<std::ptrdiff_t>(padding_);
          const std::ptrdiff_t kx_first = std::max<std::ptrdiff_t>(0, -left);
          const std::ptrdiff_t kx_last = std::max(kx_first, std::min(signed_kernel, width - left));
          for (std::ptrdiff_t ky = 0; ky < signed_kernel; ++ky) {
            const std::size_t offset = row * patch() + static_cast<std::size_t>(ky) * segment;
            const std::ptrdiff_t iy = top + ky;
            if (iy < 0 || iy >= height || kx_first == kx_last) {
              visit(offset, std::size_t{0}, std::size_t{0}, std::size_t{0}, false);
              continue;
            }
            const std::size_t input_at =
                example_base + (static_cast<std::size_t>(iy) * in_.width +
                                static_cast<std::size_t>(left + kx_first)) * inputs_;
            visit(offset, input_at, static_cast<std::size_t>(kx_first) * inputs_,
                  static_cast<std::size_t>(kx_last) * inputs_, true);
          }
        }
      }
    }
  }

  /// im2col: copies each in-bounds run into the column buffer and zeroes the padding.
  void gather(const T* x, std::size_t n) {
    const std::size_t segment = kernel_ * inputs_;
    T* columns = columns_.data();
    for_each_run(n, [&](std::size_t offset, std::size_t input_at, std::size_t first,
                        std::size_t last, bool inside) {
      T* out = columns + offset;
      if (!inside) {
        std::fill_n(out, segment, T{0});
        return;
      }
      std::fill(out, out + first, T{0});
      std::copy(x + input_at, x + input_at + (last - first), out + first);
      std::fill(out + last, out + segment, T{0});
    });
  }

  /// col2im: adds each run of the column-gradient buffer back onto the input gradient.
  void scatter(T* dx, std::size_t n) const {
    const T* columns = columns_.data();
    for_each_run(n, [&](std::size_t offset, std::size_t input_at, std::size_t first,
                        std::size_t last, bool inside) {
      if (!inside) return;
      const T* in = columns + offset + first;
      T* out = dx + input_at;
      for (std::size_t i = 0; i < last - first; ++i) out[i] += in[i];
    });
  }

  std::size_t inputs_;
  std::size_t outputs_;
  std::size_t kernel_;
  std::size_t stride_;
  std::size_t padding_;
  initializer scheme_;
  feature_shape in_;
  feature_shape out_;
  std::span<T> params_;
  std::span<T> grads_;
  std::vector<T> columns_;  // im2col of the last forward; dcolumns during backward
  std::vector<T> output_;
  std::vector<T> input_gradient_;
};

}  // namespace switchyard::nn

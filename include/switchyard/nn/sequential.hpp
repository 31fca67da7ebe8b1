// The container that turns a list of layers into a Model: it lays out one parameter arena and one
// gradient arena for all layers, runs them forward and backward, and puts the loss on top.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/data/batch.hpp"
#include "switchyard/nn/evaluation.hpp"
#include "switchyard/nn/layer.hpp"
#include "switchyard/nn/rng.hpp"
#include "switchyard/nn/softmax_cross_entropy.hpp"

namespace switchyard::nn {

/// @brief A classifier made of `Layers...` applied in order, with softmax cross-entropy on the
/// last layer's outputs; a Model (see nn/model.hpp).
///
/// Construction configures each layer with the previous one's output shape, allocates the
/// parameter and gradient arenas once (layer after layer, each layer's parameters contiguous,
/// in the order the layer documents), hands every layer its slices, and initializes them from
/// `seed` in layer order: equal seeds give bitwise equal parameters on every platform with the
/// default (uniform) initializers, so replicas built apart start identical.
///
/// Images arrive as bytes and are scaled to [0, 1] (pixel / 255) into a buffer the model owns,
/// as each batch arrives. Every buffer (scaled input, activations, im2col columns, gradients
/// w.r.t. activations) grows to the largest batch seen and is then reused: a fixed batch size
/// allocates nothing after the first call. Evaluate with batches no larger than training ones
/// to keep that footprint.
///
/// Matrix products go to OpenBLAS through xtensor-blas from the calling thread. How many threads
/// OpenBLAS itself uses is the caller's choice: when every rank is already a thread (the
/// in-process transport) or a process per core (MPI), call `openblas_set_num_threads(1)` or set
/// `OPENBLAS_NUM_THREADS=1`; results do not depend on it beyond GEMM rounding order.
///
/// Copies rebind the copied layers to the copy's own arenas; moves keep the arenas' storage, so
/// spans taken from `parameters()` stay valid across a move.
/// @tparam Layers the layers, each a `nn::layer` with the same `value_type`.
/// @code
/// nn::sequential model{42, nn::feature_shape{28, 28, 1},
///                      nn::flatten{}, nn::dense{784, 64}, nn::relu{}, nn::dense{64, 10}};
/// const double loss = model.forward_backward(batch);   // gradients() now holds d(loss)/d(params)
/// @endcode
template <class... Layers>
  requires(sizeof...(Layers) > 0) && (layer<Layers> && ...) &&
          (std::same_as<typename Layers::value_type,
                        typename std::tuple_element_t<0, std::tuple<Layers...>>::value_type> && ...)
class sequential {
 public:
  using value_type = typename std::tuple_element_t<0, std::tuple<Layers...>>::value_type;

  /// Builds the model for examples of shape `input` (`{rows, cols, 1}` for byte images) and
  /// initializes its parameters from `seed`. The last layer's output must be flat; its size is
  /// the number of classes (at most 256, since labels are bytes).
  sequential(std::uint64_t seed, feature_shape input, Layers... layers)
      : input_(input), layers_(std::move(layers)...), loss_(configure(input)) {
    parameters_.resize(offsets_.back());
    gradients_.resize(offsets_.back());
    bind();
    portable_rng rng{seed};
    std::apply([&](auto&... each) { (each.initialize(rng), ...); }, layers_);
  }

  sequential(const sequential& other)
      : input_(other.input_), layers_(other.layers_), offsets_(other.offsets_),
        parameters_(other.parameters_), gradients_(other.gradients_), loss_(other.loss_) {
    bind();
  }
  sequential& operator=(const sequential& other) {
    if (this != &other) {
      input_ = other.input_;
      layers_ = other.layers_;
      offsets_ = other.offsets_;
      parameters_ = other.parameters_;
      gradients_ = other.gradients_;
      loss_ = other.loss_;
      bind();
    }
    return *this;
  }
  sequential(sequential&&) noexcept = default;
  sequential& operator=(sequential&&) noexcept = default;
  ~sequential() = default;

  /// All parameters, layer after layer (see `layer_offsets()`).
  [[nodiscard]] std::span<value_type> parameters() noexcept { return parameters_; }
  [[nodiscard]] std::span<const value_type> parameters() const noexcept { return parameters_; }
  /// All gradients, aligned element for element with `parameters()`.
  [[nodiscard]] std::span<value_type> gradients() noexcept { return gradients_; }
  [[nodiscard]] std::span<const value_type> gradients() const noexcept { return gradients_; }

  /// Mean loss over `batch`; overwrites `gradients()` with the gradient of that mean.
  double forward_backward(const data::batch_view& batch) {
    return forward_backward(batch, [](std::size_t, std::size_t) {});
  }

  /// The same, calling `ready(first, count)` as soon as the backward pass has finished
  /// `gradients()[first, first + count)`: once per layer with parameters, last layer first, so the
  /// ranges come in decreasing order and together cover the arena. A strategy can start
  /// communicating a range while the layers before it are still computing (nn/model.hpp,
  /// `gradient_hooks`).
  template <std::invocable<std::size_t, std::size_t> Ready>
  double forward_backward(const data::batch_view& batch, Ready&& ready) {
    const std::size_t n = load(batch);
    const double loss = loss_.forward_backward(forward(n, indices()), batch.labels);
    backward(loss_.gradient(), n, ready, indices());
    return loss;
  }

  /// Summed loss and correct predictions over `batch`; leaves both arenas alone.
  [[nodiscard]] evaluation evaluate(const data::batch_view& batch) {
    const std::size_t n = load(batch);
    return loss_.evaluate(forward(n, indices()), batch.labels);
  }

  /// Writes the predicted class of each example of `batch` into `classes` (`batch.size()` long).
  void predict(const data::batch_view& batch, std::span<std::uint8_t> classes) {
    const std::size_t n = load(batch);
    if (classes.size() != n) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str("nn::sequential::predict: ", classes.size(),
                                             " outputs for a batch of ", n));
    }
    const std::span<const value_type> logits = forward(n, indices());
    const std::size_t k = loss_.classes();
    for (std::size_t example = 0; example < n; ++example) {
      const value_type* z = logits.data() + example * k;
      classes[example] = static_cast<std::uint8_t>(std::max_element(z, z + k) - z);
    }
  }

  /// Where each layer's parameters start in the arenas, plus the total at the end
  /// (`sizeof...(Layers) + 1` values), e.g. to communicate the arena in per-layer buckets.
  [[nodiscard]] std::span<const std::size_t> layer_offsets() const noexcept { return offsets_; }
  /// The `I`-th layer.
  template <std::size_t I>
  [[nodiscard]] const auto& layer() const noexcept { return std::get<I>(layers_); }
  /// The shape of one input example.
  [[nodiscard]] feature_shape input_shape() const noexcept { return input_; }
  /// The number of classes (outputs of the last layer).
  [[nodiscard]] std::size_t classes() const noexcept { return loss_.classes(); }
  /// The layers in order, each as its `describe()` gives it, joined by ", " (`nn::mlp` on 28x28
  /// images: `"flatten, dense 784x256, relu, dense 256x128, relu, dense 128x10"`); a layer without
  /// `describe()` is `"layer of K parameters"`. Part of a checkpoint's model fingerprint, so two
  /// models with equal parameter counts but other shapes are told apart.
  [[nodiscard]] std::string layout() const {
    std::string joined;
    std::apply([&](const auto&... each) { ((joined += describe(each) + ", "), ...); }, layers_);
    joined.resize(joined.size() - 2);  // the last ", "
    return joined;
  }

 private:
  static constexpr std::size_t layer_count = sizeof...(Layers);
  static constexpr auto indices() { return std::make_index_sequence<layer_count>{}; }

  template <class Layer>
  static std::string describe(const Layer& l) {
    if constexpr (requires { { l.describe() } -> std::convertible_to<std::string>; }) {
      return l.describe();
    } else {
      const std::size_t count = l.parameter_count();
      return "layer of " + std::to_string(count) + (count == 1 ? " parameter" : " parameters");
    }
  }

  /// Chains the layers' shapes and records the arena offsets; returns the number of classes.
  std::size_t configure(feature_shape input) {
    feature_shape shape = input;
    std::size_t index = 0;
    offsets_[0] = 0;
    std::apply([&](auto&... each) {
      ((shape = each.configure(shape), offsets_[index + 1] = offsets_[index] + each.parameter_count(),
        ++index), ...);
    }, layers_);
    if (!shape.flat() || shape.size() > 256) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str("nn::sequential: the last layer gives ", shape.height,
                                             "x", shape.width, "x", shape.channels,
                                             " outputs; it must be flat, with at most 256 classes"));
    }
    return shape.size();
  }

  /// Points every layer at its slices of the arenas.
  void bind() {
    std::size_t index = 0;
    std::apply([&](auto&... each) {
      ((each.bind(std::span(parameters_).subspan(offsets_[index], offsets_[index + 1] - offsets_[index]),
                  std::span(gradients_).subspan(offsets_[index], offsets_[index + 1] - offsets_[index])),
        ++index), ...);
    }, layers_);
  }

  /// Checks `batch` against the input shape and scales its pixels into the input buffer.
  std::size_t load(const data::batch_view& batch) {
    const std::size_t n = batch.size();
    if (n == 0 || batch.rows != input_.height || batch.cols != input_.width ||
        input_.channels != 1 || batch.images.size() != n * input_.size()) {
      switchyard::detail::raise<usage_error>(switchyard::detail::str(
          "nn::sequential: batch of ", n, " labels and ", batch.images.size(), " pixels of ",
          batch.rows, "x", batch.cols, " does not fit the model's input ", input_.height, "x",
          input_.width, "x", input_.channels, " (and must not be empty)"));
    }
    detail::grow(input_buffer_, batch.images.size());
    constexpr value_type scale = value_type{1} / value_type{255};
    std::transform(batch.images.begin(), batch.images.end(), input_buffer_.begin(),
                   [](std::uint8_t pixel) { return static_cast<value_type>(pixel) * scale; });
    return n;
  }

  template <std::size_t... I>
  std::span<const value_type> forward(std::size_t n, std::index_sequence<I...>) {
    std::span<const value_type> x{input_buffer_.data(), n * input_.size()};
    ((x = std::get<I>(layers_).forward(x, n)), ...);
    return x;
  }

  /// Runs the layers backward, last first. A layer with no parameters before it (the first, or the
  /// first after parameter-free layers such as flatten) skips its input gradient: nobody reads it.
  /// Each layer with parameters then reports its range to `ready`.
  template <class Ready, std::size_t... I>
  void backward(std::span<const value_type> dy, std::size_t n, Ready& ready, std::index_sequence<I...>) {
    const auto one = [&](auto& layer, std::size_t index) {
      dy = layer.backward(dy, n, offsets_[index] != 0);
      if (offsets_[index + 1] != offsets_[index]) ready(offsets_[index], offsets_[index + 1] - offsets_[index]);
    };
    (one(std::get<layer_count - 1 - I>(layers_), layer_count - 1 - I), ...);
  }

  feature_shape input_;
  std::tuple<Layers...> layers_;
  std::array<std::size_t, layer_count + 1> offsets_{};
  std::vector<value_type> parameters_;
  std::vector<value_type> gradients_;
  std::vector<value_type> input_buffer_;
  softmax_cross_entropy<value_type> loss_;
};

}  // namespace switchyard::nn

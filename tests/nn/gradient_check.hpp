// Shared by the nn suites: central-difference gradient checks in double precision, and fixtures
// of random inputs and random byte batches drawn from the library's portable generator.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "switchyard/data/batch.hpp"
#include "switchyard/nn/layer.hpp"
#include "switchyard/nn/rng.hpp"

namespace switchyard::test {

/// The largest error of `analytic` against central differences of `loss` around `values`,
/// measured as |numeric - analytic| / max(1, |numeric|, |analytic|). Checks every element, or
/// `samples` elements spread by a fixed generator when given. Restores `values`.
///
/// Why 1e-6 is a sound bound for callers: in double with step h = 1e-5 the truncation error of
/// a central difference is O(h^2 f''') ~ 1e-10 and the rounding error is O(eps |f| / h) ~ 1e-11
/// for losses of order 1, so a correct gradient lands below 1e-8; a wrong term (missing factor,
/// transposed index, off-by-one window) shows up at 1e-2 or more. ReLU and max-pool kinks lie
/// within h of a random input with probability ~1e-5 per element.
template <class Loss>
double gradient_error(std::span<double> values, std::span<const double> analytic, Loss&& loss,
                      std::size_t samples = 0) {
  constexpr double h = 1e-5;
  nn::portable_rng pick{12345};
  const std::size_t checks = samples == 0 ? values.size() : std::min(samples, values.size());
  double worst = 0.0;
  for (std::size_t k = 0; k < checks; ++k) {
    const std::size_t i = samples == 0 ? k : static_cast<std::size_t>(pick.next() % values.size());
    const double saved = values[i];
    values[i] = saved + h;
    const double plus = loss();
    values[i] = saved - h;
    const double minus = loss();
    values[i] = saved;
    const double numeric = (plus - minus) / (2 * h);
    const double scale = std::max({1.0, std::abs(numeric), std::abs(analytic[i])});
    worst = std::max(worst, std::abs(numeric - analytic[i]) / scale);
  }
  return worst;
}

/// `count` doubles uniform in [low, high) from `seed`.
inline std::vector<double> random_values(std::size_t count, std::uint64_t seed, double low = -1.0,
                                         double high = 1.0) {
  nn::portable_rng rng{seed};
  std::vector<double> out(count);
  for (double& v : out) v = rng.uniform(low, high);
  return out;
}

/// A layer in double precision with its own arenas, parameters set to random values (so that
/// biases are nonzero too), a random input batch and a random linear read-out of its output:
/// loss = sum_j readout_j y_j, whose gradient w.r.t. y is `readout`.
template <class Layer>
struct layer_fixture {
  Layer layer;
  std::size_t batch;
  nn::feature_shape out;
  std::vector<double> params;
  std::vector<double> grads;
  std::vector<double> input;
  std::vector<double> readout;

  layer_fixture(Layer built, nn::feature_shape in, std::size_t n)
      : layer(std::move(built)), batch(n), out(layer.configure(in)),
        params(random_values(layer.parameter_count(), 1)), grads(params.size()),
        input(random_values(n * in.size(), 2)), readout(random_values(n * out.size(), 3)) {
    layer.bind(std::span(params), std::span(grads));
  }

  double loss() {
    const std::span<const double> y = layer.forward(input, batch);
    double sum = 0.0;
    for (std::size_t j = 0; j < readout.size(); ++j) sum += readout[j] * y[j];
    return sum;
  }

  /// Runs forward and backward; returns d(loss)/d(input) (the gradients land in `grads`).
  std::vector<double> backward() {
    loss();
    const std::span<const double> dx = layer.backward(readout, batch, true);
    return {dx.begin(), dx.end()};
  }

  double input_error() {
    const std::vector<double> dx = backward();
    return gradient_error(std::span(input), std::span<const double>(dx), [&] { return loss(); });
  }

  double parameter_error() {
    backward();
    const std::vector<double> analytic = grads;
    return gradient_error(std::span(params), std::span<const double>(analytic), [&] { return loss(); });
  }
};

/// Random images and labels for a batch of `n` examples of `rows x cols` bytes.
struct random_batch {
  std::vector<std::uint8_t> images;
  std::vector<std::uint8_t> labels;
  std::size_t rows;
  std::size_t cols;

  random_batch(std::size_t n, std::size_t rows, std::size_t cols, std::size_t classes,
               std::uint64_t seed)
      : images(n * rows * cols), labels(n), rows(rows), cols(cols) {
    nn::portable_rng rng{seed};
    for (std::uint8_t& pixel : images) pixel = static_cast<std::uint8_t>(rng.next() & 0xff);
    for (std::uint8_t& label : labels) label = static_cast<std::uint8_t>(rng.next() % classes);
  }

  [[nodiscard]] data::batch_view view() const { return {images, labels, rows, cols}; }
};

/// Checks a model's gradient arena against central differences of its mean loss on `batch`,
/// over `samples` parameters.
template <class Model>
double model_gradient_error(Model& model, const data::batch_view& batch, std::size_t samples) {
  model.forward_backward(batch);
  const std::vector<double> analytic(model.gradients().begin(), model.gradients().end());
  return gradient_error(model.parameters(), std::span<const double>(analytic),
                        [&] { return model.evaluate(batch).mean_loss(); }, samples);
}

}  // namespace switchyard::test

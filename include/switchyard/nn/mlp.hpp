// The reference multilayer perceptron: 784-256-128-10 with ReLU, the model of the examples and
// benchmarks (≈235k parameters, the size at which communication starts to matter).
#pragma once

#include <cstddef>
#include <cstdint>

#include "switchyard/nn/dense.hpp"
#include "switchyard/nn/flatten.hpp"
#include "switchyard/nn/layer.hpp"
#include "switchyard/nn/relu.hpp"
#include "switchyard/nn/sequential.hpp"

namespace switchyard::nn {

/// @brief Multilayer perceptron: flatten, dense 256, ReLU, dense 128, ReLU, dense `classes`.
///
/// For 28x28 inputs and 10 classes it has 784*256+256 + 256*128+128 + 128*10+10 = 235,146
/// parameters. Everything else (arenas, seeding, threading) is `nn::sequential`'s.
/// @tparam T element type (default `float`).
/// @code
/// nn::mlp model{42};                        // 28x28 inputs, 10 classes
/// const double loss = model.forward_backward(batch);
/// @endcode
template <class T = float>
class mlp : public sequential<flatten<T>, dense<T>, relu<T>, dense<T>, relu<T>, dense<T>> {
  using base = sequential<flatten<T>, dense<T>, relu<T>, dense<T>, relu<T>, dense<T>>;

 public:
  /// Width of the first hidden layer.
  static constexpr std::size_t hidden1 = 256;
  /// Width of the second hidden layer.
  static constexpr std::size_t hidden2 = 128;

  /// An MLP for examples of shape `input` and `classes` classes, initialized from `seed`.
  explicit mlp(std::uint64_t seed, feature_shape input = {28, 28, 1}, std::size_t classes = 10)
      : base(seed, input, flatten<T>{}, dense<T>{input.size(), hidden1}, relu<T>{},
             dense<T>{hidden1, hidden2}, relu<T>{}, dense<T>{hidden2, classes}) {}
};

}  // namespace switchyard::nn

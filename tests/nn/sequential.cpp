// Tests of nn/sequential.hpp: arena layout and views, seeding, the Model semantics (overwrite,
// evaluation leaves the arenas alone), copies and moves, a full gradient check, the layout
// description, and errors.
#include "switchyard/nn/sequential.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gradient_check.hpp"
#include "switchyard/core/error.hpp"
#include "switchyard/nn/conv2d.hpp"
#include "switchyard/nn/dense.hpp"
#include "switchyard/nn/flatten.hpp"
#include "switchyard/nn/max_pool.hpp"
#include "switchyard/nn/model.hpp"
#include "switchyard/nn/relu.hpp"

namespace nn = switchyard::nn;
using switchyard::test::random_batch;

namespace {

// 6x6x1 -> conv 3x3 (2 ch) -> 4x4x2 -> pool 2 -> 2x2x2 -> flatten 8 -> dense 3.
template <class T>
auto small_model(std::uint64_t seed) {
  return nn::sequential{seed, nn::feature_shape{6, 6, 1}, nn::conv2d<T>{1, 2, 3}, nn::relu<T>{},
                        nn::max_pool<T>{2}, nn::flatten<T>{}, nn::dense<T>{8, 3}};
}

template <class T>
std::vector<T> copy_of(std::span<const T> values) {
  return {values.begin(), values.end()};
}

// A layer of a user's without describe(): one scale factor for all its inputs.
class scale {
 public:
  using value_type = float;
  nn::feature_shape configure(nn::feature_shape in) {
    size_ = in.size();
    return in;
  }
  [[nodiscard]] std::size_t parameter_count() const noexcept { return 1; }
  void bind(std::span<float> params, std::span<float> grads) noexcept {
    params_ = params;
    grads_ = grads;
  }
  void initialize(nn::portable_rng&) noexcept { params_[0] = 1.0f; }
  std::span<const float> forward(std::span<const float> x, std::size_t n) {
    input_.assign(x.begin(), x.end());
    output_.resize(n * size_);
    for (std::size_t i = 0; i < output_.size(); ++i) output_[i] = params_[0] * x[i];
    return output_;
  }
  std::span<const float> backward(std::span<const float> dy, std::size_t, bool propagate) {
    grads_[0] = 0.0f;
    for (std::size_t i = 0; i < dy.size(); ++i) grads_[0] += dy[i] * input_[i];
    if (!propagate) return {};
    input_gradient_.resize(dy.size());
    for (std::size_t i = 0; i < dy.size(); ++i) input_gradient_[i] = params_[0] * dy[i];
    return input_gradient_;
  }

 private:
  std::size_t size_ = 0;
  std::span<float> params_, grads_;
  std::vector<float> input_, output_, input_gradient_;
};
static_assert(nn::layer<scale>);

}  // namespace

TEST_CASE("sequential.arena_layout_and_layer_views") {
  auto model = small_model<float>(1);
  static_assert(nn::model<decltype(model)>);
  CHECK(model.parameters().size() == 47);
  CHECK(model.gradients().size() == 47);
  const auto offsets = model.layer_offsets();
  CHECK(std::vector<std::size_t>(offsets.begin(), offsets.end()) ==
        std::vector<std::size_t>{0, 20, 20, 20, 20, 47});
  CHECK(model.layer<0>().weights().data() == model.parameters().data());
  CHECK(model.layer<4>().weights().data() == model.parameters().data() + 20);
  CHECK(model.classes() == 3);
  CHECK(model.input_shape() == nn::feature_shape{6, 6, 1});
}

TEST_CASE("sequential.seed_fixes_the_initial_parameters") {
  const auto a = small_model<float>(7);
  const auto b = small_model<float>(7);
  const auto c = small_model<float>(8);
  CHECK(copy_of(a.parameters()) == copy_of(b.parameters()));
  CHECK(copy_of(a.parameters()) != copy_of(c.parameters()));
  // Biases start at zero, weights do not.
  CHECK(a.parameters()[19] == 0.0f);
  CHECK(a.parameters()[0] != 0.0f);
}

TEST_CASE("sequential.gradient_matches_central_differences") {
  auto model = small_model<double>(3);
  const random_batch batch{5, 6, 6, 3, 4};
  CHECK(switchyard::test::model_gradient_error(model, batch.view(), 0) < 1e-6);
}

TEST_CASE("sequential.forward_backward_overwrites_and_evaluate_leaves_arenas_alone") {
  auto model = small_model<float>(5);
  const random_batch batch{4, 6, 6, 3, 6};
  const double loss = model.forward_backward(batch.view());
  const auto gradients = copy_of<float>(model.gradients());
  const auto parameters = copy_of<float>(model.parameters());
  CHECK(model.forward_backward(batch.view()) == loss);
  CHECK(copy_of<float>(model.gradients()) == gradients);  // not accumulated

  const random_batch other{7, 6, 6, 3, 9};
  const nn::evaluation result = model.evaluate(other.view());
  CHECK(result.count == 7);
  CHECK(copy_of<float>(model.gradients()) == gradients);
  CHECK(copy_of<float>(model.parameters()) == parameters);
  CHECK(model.evaluate(batch.view()).mean_loss() == doctest::Approx(loss));

  std::vector<std::uint8_t> predicted(7);
  model.predict(other.view(), predicted);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < 7; ++i) correct += predicted[i] == other.labels[i];
  CHECK(correct == result.correct);
}

TEST_CASE("sequential.copies_rebind_and_moves_keep_the_arenas") {
  auto model = small_model<float>(11);
  const random_batch batch{3, 6, 6, 3, 12};
  const double before = model.evaluate(batch.view()).loss_sum;

  auto copy = model;
  CHECK(copy.parameters().data() != model.parameters().data());
  CHECK(copy.layer<0>().weights().data() == copy.parameters().data());
  CHECK(copy.evaluate(batch.view()).loss_sum == before);
  for (float& p : copy.parameters()) p *= 0.5f;
  CHECK(copy.evaluate(batch.view()).loss_sum != before);
  CHECK(model.evaluate(batch.view()).loss_sum == before);

  copy = model;
  CHECK(copy.layer<4>().weights().data() == copy.parameters().data() + 20);
  CHECK(copy.evaluate(batch.view()).loss_sum == before);

  const float* arena = model.parameters().data();
  auto moved = std::move(model);
  CHECK(moved.parameters().data() == arena);
  CHECK(moved.evaluate(batch.view()).loss_sum == before);
}

TEST_CASE("sequential.layout: each layer's kind and sizes, in order") {
  CHECK(small_model<float>(1).layout() == "conv2d 3x3 1->2, relu, max_pool 2, flatten, dense 8x3");
  const nn::sequential strided{1, nn::feature_shape{8, 8, 3}, nn::conv2d{3, 4, 3, 2, 1}, nn::flatten{},
                               nn::dense{64, 5}};
  CHECK(strided.layout() == "conv2d 3x3 3->4 stride 2 padding 1, flatten, dense 64x5");
  // A layer without describe() still counts its parameters.
  const nn::sequential custom{1, nn::feature_shape{1, 1, 4}, scale{}, nn::dense{4, 2}};
  CHECK(custom.layout() == "layer of 1 parameter, dense 4x2");
  CHECK(custom.parameters().size() == 11);
}

TEST_CASE("sequential.rejects_bad_batches_and_models") {
  auto model = small_model<float>(1);
  const random_batch wrong_shape{2, 5, 6, 3, 1};
  CHECK_THROWS_AS(model.forward_backward(wrong_shape.view()), switchyard::usage_error);
  const random_batch empty{0, 6, 6, 3, 1};
  CHECK_THROWS_AS((void)model.evaluate(empty.view()), switchyard::usage_error);
  random_batch bad_label{2, 6, 6, 3, 1};
  bad_label.labels[1] = 3;
  CHECK_THROWS_AS(model.forward_backward(bad_label.view()), switchyard::data_error);
  std::vector<std::uint8_t> too_short(1);
  const random_batch batch{2, 6, 6, 3, 1};
  CHECK_THROWS_AS(model.predict(batch.view(), too_short), switchyard::usage_error);
  // The last layer must give flat class scores.
  CHECK_THROWS_AS((nn::sequential{1, nn::feature_shape{6, 6, 1}, nn::relu<>{}}), switchyard::usage_error);
}

// Training through transport::simulated: the synchronous all-reduce strategy and the synchronous
// parameter server, driven by the stock trainer on 4 simulated hosts, end with bitwise the
// parameters of 4 in-process ranks, with the defaults of both transports (measured compute on the
// simulated side); the overlapped all-reduce and the co-located parameter server refuse to start a
// thread there.
#include <switchyard/switchyard.hpp>
#include <switchyard/transport/simulated.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace sy = switchyard;

namespace {

// Softmax regression over raw pixels scaled to [0, 1]: weights (classes x pixels), then biases.
class softmax_regression {
 public:
  softmax_regression(std::size_t pixels, std::size_t classes)
      : pixels_(pixels), classes_(classes), parameters_((pixels + 1) * classes, 0.0F),
        gradients_(parameters_.size(), 0.0F), scores_(classes) {}

  std::span<float> parameters() { return parameters_; }
  std::span<float> gradients() { return gradients_; }

  double forward_backward(const sy::data::batch_view& batch) {
    std::fill(gradients_.begin(), gradients_.end(), 0.0F);
    const double loss = pass(batch, true).loss_sum;
    const float scale = 1.0F / static_cast<float>(batch.size());
    for (float& g : gradients_) g *= scale;
    return loss / static_cast<double>(batch.size());
  }

  sy::nn::evaluation evaluate(const sy::data::batch_view& batch) { return pass(batch, false); }

 private:
  sy::nn::evaluation pass(const sy::data::batch_view& batch, bool backward) {
    sy::nn::evaluation result;
    for (std::size_t n = 0; n < batch.size(); ++n) {
      const std::uint8_t* image = batch.images.data() + n * pixels_;
      for (std::size_t c = 0; c < classes_; ++c) {
        float score = parameters_[pixels_ * classes_ + c];
        for (std::size_t i = 0; i < pixels_; ++i) score += parameters_[c * pixels_ + i] * (image[i] / 255.0F);
        scores_[c] = score;
      }
      const float top = *std::max_element(scores_.begin(), scores_.end());
      float total = 0.0F;
      for (float& s : scores_) total += (s = std::exp(s - top));
      const std::size_t label = batch.labels[n];
      result.loss_sum -= std::log(scores_[label] / total);
      result.correct += static_cast<std::size_t>(std::max_element(scores_.begin(), scores_.end()) - scores_.begin()) ==
                                label
                            ? 1
                            : 0;
      ++result.count;
      if (!backward) continue;
      for (std::size_t c = 0; c < classes_; ++c) {
        const float delta = scores_[c] / total - (c == label ? 1.0F : 0.0F);
        for (std::size_t i = 0; i < pixels_; ++i) gradients_[c * pixels_ + i] += delta * (image[i] / 255.0F);
        gradients_[pixels_ * classes_ + c] += delta;
      }
    }
    return result;
  }

  std::size_t pixels_;
  std::size_t classes_;
  std::vector<float> parameters_;
  std::vector<float> gradients_;
  std::vector<float> scores_;
};

// 4x4 images, two classes: the bright half (top or bottom) is the label.
std::shared_ptr<const sy::data::dataset> halves(std::size_t examples) {
  std::vector<std::uint8_t> images(examples * 16);
  std::vector<std::uint8_t> labels(examples);
  std::uint32_t state = 12345;
  for (std::size_t n = 0; n < examples; ++n) {
    labels[n] = static_cast<std::uint8_t>(n % 2);
    for (std::size_t i = 0; i < 16; ++i) {
      state = state * 1664525u + 1013904223u;
      const bool bright = (i < 8) == (labels[n] == 0);
      images[n * 16 + i] = static_cast<std::uint8_t>((bright ? 150u : 0u) + (state >> 25));
    }
  }
  return std::make_shared<const sy::data::dataset>(std::move(images), std::move(labels), 4, 4, 2);
}

struct outcome {
  double accuracy = 0;
  std::vector<float> parameters;
};

template <class Transport, class Strategy = sy::strategy::all_reduce<>>
outcome train(Transport& t, const std::shared_ptr<const sy::data::dataset>& data, Strategy strategy = {}) {
  softmax_regression model(16, 2);
  sy::optim::adam optimizer{model.parameters().size(), 0.05};
  sy::train::trainer_options options;
  options.epochs = 2;
  options.batch_size = 10;
  sy::train::trainer trainer{model, optimizer, strategy, options};
  const sy::train::history history = trainer.fit(t, data, *data);
  return outcome{history.last().test_accuracy, {model.parameters().begin(), model.parameters().end()}};
}

}  // namespace

TEST_CASE("simulated.training: all_reduce through the trainer on 4 simulated hosts ends with the in-process bits" *
          doctest::timeout(300)) {
  const auto data = halves(400);
  const std::vector<outcome> in_process =
      sy::transport::run_inproc(4, [&](sy::transport::inproc& t) { return train(t, data); });
  sy::transport::simulated_world world{sy::transport::simulated_options{}};
  const std::vector<outcome> simulated = world.run([&](sy::transport::simulated& t) { return train(t, data); });
  REQUIRE(simulated.size() == 4);
  CHECK(world.simulated_seconds() > 0);
  for (std::size_t r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(simulated[r].accuracy > 0.9);
    CHECK(simulated[r].accuracy == in_process[r].accuracy);
    REQUIRE(simulated[r].parameters.size() == in_process[r].parameters.size());
    CHECK(std::memcmp(simulated[r].parameters.data(), in_process[r].parameters.data(),
                      simulated[r].parameters.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("simulated.training.parameter_server: the synchronous parameter server with one server ends with the "
          "in-process bits" * doctest::timeout(300)) {
  const auto data = halves(400);
  const sy::strategy::parameter_server<sy::strategy::consistency::sync> ps{1};
  const std::vector<outcome> in_process =
      sy::transport::run_inproc(4, [&](sy::transport::inproc& t) { return train(t, data, ps); });
  const std::vector<outcome> simulated =
      sy::transport::run_simulated(4, [&](sy::transport::simulated& t) { return train(t, data, ps); });
  for (std::size_t r = 0; r < 4; ++r) {
    CAPTURE(r);
    REQUIRE(simulated[r].parameters.size() == in_process[r].parameters.size());
    CHECK(std::memcmp(simulated[r].parameters.data(), in_process[r].parameters.data(),
                      simulated[r].parameters.size() * sizeof(float)) == 0);
  }
}

// The model with a gradient hook, so that the all-reduce can take buckets from its pass.
struct hooked_regression : softmax_regression {
  using softmax_regression::softmax_regression;
  using softmax_regression::forward_backward;
  template <class Ready>
  double forward_backward(const sy::data::batch_view& batch, Ready ready) {
    const double loss = softmax_regression::forward_backward(batch);
    ready(std::size_t{0}, parameters().size());
    return loss;
  }
};

static_assert(sy::transport::ranks_share_a_thread<sy::transport::simulated>);
static_assert(sy::transport::ranks_share_a_thread<sy::transport::faulty<sy::transport::simulated>>);
static_assert(!sy::transport::ranks_share_a_thread<sy::transport::inproc>);

TEST_CASE("simulated.training.threads: the overlapped all-reduce refuses to start a thread on simulated ranks" *
          doctest::timeout(120)) {
  const auto data = halves(40);
  auto run = [&] {
    sy::transport::run_simulated(2, [&](sy::transport::simulated& t) {
      hooked_regression model(16, 2);
      sy::optim::adam optimizer{model.parameters().size(), 0.05};
      sy::train::trainer_options options;
      options.epochs = 1;
      options.batch_size = 10;
      sy::strategy::all_reduce<> overlapped{{.exchange = sy::strategy::exchange::overlapped, .bucket_bytes = 64}};
      sy::train::trainer trainer{model, optimizer, overlapped, options};
      static_cast<void>(trainer.fit(t, data, *data));
    });
  };
  CHECK_THROWS_WITH_AS(run(), doctest::Contains("a simulated transport runs no threads of a rank"), sy::usage_error);
}

TEST_CASE("simulated.training.threads: co-located parameter servers refuse to start a serving thread on simulated "
          "ranks" * doctest::timeout(120)) {
  const auto data = halves(40);
  const sy::strategy::parameter_server<> colocated{sy::strategy::colocated};
  auto run = [&] {
    sy::transport::run_simulated(2, [&](sy::transport::simulated& t) { static_cast<void>(train(t, data, colocated)); });
  };
  CHECK_THROWS_WITH_AS(run(), doctest::Contains("co-located servers serve on a thread of their own"), sy::usage_error);
}

// Training through transport::simulated: the synchronous all-reduce strategy and the synchronous
// parameter server, driven by the stock trainer on 4 simulated hosts, end with bitwise the
// parameters of 4 in-process ranks, with the defaults of both transports (measured compute on the
// simulated side); the overlapped all-reduce and the co-located parameter server run their
// communication and serving on actors of each rank, with the in-process bits; the trainer's times
// are simulated seconds.
#include <switchyard/switchyard.hpp>
#include <switchyard/transport/simulated.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
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

// The model with a gradient hook, reporting its biases, then its weights ready, so that the
// all-reduce reduces two buckets and overlaps the second with nothing but the first.
struct hooked_regression : softmax_regression {
  using softmax_regression::softmax_regression;
  using softmax_regression::forward_backward;
  template <class Ready>
  double forward_backward(const sy::data::batch_view& batch, Ready ready) {
    const double loss = softmax_regression::forward_backward(batch);
    const std::size_t weights = parameters().size() - 2;
    ready(weights, std::size_t{2});
    ready(std::size_t{0}, weights);
    return loss;
  }
};

template <class Transport>
std::vector<float> train_bucketed(Transport& t, const std::shared_ptr<const sy::data::dataset>& data,
                                  sy::strategy::exchange how) {
  hooked_regression model(16, 2);
  sy::optim::adam optimizer{model.parameters().size(), 0.05};
  sy::train::trainer_options options;
  options.epochs = 2;
  options.batch_size = 10;
  sy::strategy::all_reduce<> strategy{{.exchange = how}};
  sy::train::trainer trainer{model, optimizer, strategy, options};
  static_cast<void>(trainer.fit(t, data, *data));
  return {model.parameters().begin(), model.parameters().end()};
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

static_assert(sy::transport::ranks_share_a_thread<sy::transport::simulated>);
static_assert(sy::transport::ranks_share_a_thread<sy::transport::faulty<sy::transport::simulated>>);
static_assert(!sy::transport::ranks_share_a_thread<sy::transport::inproc>);

TEST_CASE("simulated.training.overlapped: the overlapped all-reduce runs its communication on an actor of each rank "
          "and ends with the bits of the unoverlapped one and of as many in-process ranks" * doctest::timeout(300)) {
  using sy::strategy::exchange;
  const auto data = halves(420);
  for (const int hosts : {1, 2, 3, 4, 7}) {
    CAPTURE(hosts);
    const auto in_process = sy::transport::run_inproc(
        hosts, [&](sy::transport::inproc& t) { return train_bucketed(t, data, exchange::overlapped); });
    sy::transport::simulated_options options;  // the defaults: measured compute
    const auto overlapped = sy::transport::run_simulated(
        hosts, [&](sy::transport::simulated& t) { return train_bucketed(t, data, exchange::overlapped); }, options);
    const auto buckets = sy::transport::run_simulated(
        hosts, [&](sy::transport::simulated& t) { return train_bucketed(t, data, exchange::buckets); }, options);
    for (std::size_t r = 0; r < static_cast<std::size_t>(hosts); ++r) {
      CAPTURE(r);
      CHECK(same_bits(overlapped[r], buckets[r]));
      CHECK(same_bits(overlapped[r], in_process[r]));
    }
  }
}

TEST_CASE("simulated.training.colocated: the synchronous co-located parameter server serves on an actor of each "
          "rank and ends with the in-process bits" * doctest::timeout(300)) {
  const auto data = halves(420);
  const sy::strategy::parameter_server<sy::strategy::consistency::sync> colocated{sy::strategy::colocated};
  for (const int hosts : {1, 2, 3, 4, 7}) {
    CAPTURE(hosts);
    const std::vector<outcome> in_process =
        sy::transport::run_inproc(hosts, [&](sy::transport::inproc& t) { return train(t, data, colocated); });
    const std::vector<outcome> simulated =
        sy::transport::run_simulated(hosts, [&](sy::transport::simulated& t) { return train(t, data, colocated); });
    for (std::size_t r = 0; r < static_cast<std::size_t>(hosts); ++r) {
      CAPTURE(r);
      CHECK(simulated[r].accuracy > 0.9);
      CHECK(same_bits(simulated[r].parameters, in_process[r].parameters));
    }
  }
}

TEST_CASE("simulated.training.colocated: the asynchronous co-located parameter server runs and converges on 4 "
          "simulated hosts" * doctest::timeout(300)) {
  const auto data = halves(400);
  const sy::strategy::parameter_server<> colocated{sy::strategy::colocated};
  const std::vector<outcome> simulated =
      sy::transport::run_simulated(4, [&](sy::transport::simulated& t) { return train(t, data, colocated); });
  for (const outcome& o : simulated) CHECK(o.accuracy > 0.9);
}

TEST_CASE("simulated.training.clock: the trainer's times are simulated seconds: with free compute, a step costs "
          "what its all-reduce costs on the network" * doctest::timeout(120)) {
  // Links of 1 s latency and 1 Tbit/s: each of the native all-reduce's two rounds between 2 hosts
  // crosses two links, 2 s, and its bytes cost next to nothing (within 1e-4); host time is a few ms.
  sy::transport::simulated_options options;
  options.compute = sy::transport::compute_model::none;
  options.platform.latency = "1s";
  options.platform.bandwidth = "1Tbps";
  const auto data = halves(40);
  const auto records = sy::transport::run_simulated(2, [&](sy::transport::simulated& t) {
    softmax_regression model(16, 2);
    sy::optim::adam optimizer{model.parameters().size(), 0.05};
    sy::train::trainer_options o;
    o.epochs = 1;
    o.batch_size = 10;
    sy::train::trainer trainer{model, optimizer, sy::strategy::all_reduce<>{}, o};
    std::vector<sy::train::step_record> steps;
    trainer.on_step([&](const sy::train::step_record& s) { steps.push_back(s); });
    const sy::train::history h = trainer.fit(t, data, *data);
    return std::make_pair(steps, h.last());
  }, options);
  for (const auto& [steps, epoch] : records) {
    REQUIRE(steps.size() == 2);  // 40 examples, 2 ranks, batches of 10
    for (const sy::train::step_record& s : steps) {
      CHECK(s.compute_seconds == 0.0);
      CHECK(s.communicate_seconds == doctest::Approx(4.0).epsilon(1e-4));
    }
    CHECK(epoch.train_seconds >= 8.0);
    CHECK(epoch.compute_seconds == 0.0);
    CHECK(epoch.exchange_seconds == doctest::Approx(8.0).epsilon(1e-4));
    CHECK(epoch.wall_seconds >= epoch.train_seconds);
  }
}

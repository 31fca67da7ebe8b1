// Models whose parameters are not spans: an xtensor, a std::vector and a user's tensor type, in
// float and in double, trained by every strategy and by a switch. The strategies see them through
// as_span, so a run must match, bit for bit, the same run with a model that returns spans.
#include <switchyard/optim/sgd.hpp>
#include <switchyard/strategy/all_reduce.hpp>
#include <switchyard/strategy/parameter_server.hpp>
#include <switchyard/strategy/switch_to.hpp>
#include <switchyard/tensor/xtensor.hpp>
#include <switchyard/train/trainer.hpp>
#include <switchyard/transport/inproc.hpp>
#include <switchyard/trigger/after_epochs.hpp>

#include "../train/fixtures.hpp"

#include <doctest/doctest.h>

#include <xtensor/xtensor.hpp>

#include <cmath>
#include <type_traits>
#include <utility>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace sy = switchyard;

namespace user {

// A user's tensor type: not a range, opted in with an ADL switchyard_as_span.
template <class E>
class tensor {
 public:
  explicit tensor(std::size_t n) : storage_(std::make_unique<E[]>(n)), size_(n) {}
  E* ptr() { return storage_.get(); }
  const E* ptr() const { return storage_.get(); }
  std::size_t numel() const { return size_; }

 private:
  std::unique_ptr<E[]> storage_;
  std::size_t size_;
};

template <class E>
std::span<E> switchyard_as_span(tensor<E>& t) {
  return {t.ptr(), t.numel()};
}
template <class E>
std::span<const E> switchyard_as_span(const tensor<E>& t) {
  return {t.ptr(), t.numel()};
}

}  // namespace user

namespace {

constexpr std::size_t width = 5;

// A least-squares toy: the prediction for an example is the sum of its first `width` pixels (scaled)
// weighted by the parameters, the target its label. `Arena` holds the weights; `Spans` makes
// parameters() and gradients() return spans over it instead of references to it.
template <class Arena, bool Spans = false>
struct toy_model {
  using element = std::remove_const_t<sy::buffer_element_t<Arena>>;
  Arena params;
  Arena grads;

  explicit toy_model(Arena p, Arena g) : params(std::move(p)), grads(std::move(g)) {
    auto w = sy::as_span(params);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<element>(0.1 * static_cast<double>(i + 1));
  }

  decltype(auto) parameters() {
    if constexpr (Spans) {
      return sy::as_span(params);
    } else {
      return (params);
    }
  }
  decltype(auto) gradients() {
    if constexpr (Spans) {
      return sy::as_span(grads);
    } else {
      return (grads);
    }
  }

  double forward_backward(const sy::data::batch_view& batch) {
    const auto g = sy::as_span(grads);
    for (auto& v : g) v = 0;
    double loss = 0;
    for (std::size_t e = 0; e < batch.size(); ++e) {
      const element error = predict(batch, e) - static_cast<element>(batch.labels[e]);
      loss += 0.5 * static_cast<double>(error * error);
      for (std::size_t i = 0; i < width; ++i) g[i] += error * pixel(batch, e, i) / static_cast<element>(batch.size());
    }
    return loss / static_cast<double>(batch.size());
  }

  sy::nn::evaluation evaluate(const sy::data::batch_view& batch) {
    sy::nn::evaluation result;
    for (std::size_t e = 0; e < batch.size(); ++e) {
      const element error = predict(batch, e) - static_cast<element>(batch.labels[e]);
      result.loss_sum += 0.5 * static_cast<double>(error * error);
      result.correct += std::abs(error) < 0.5 ? 1 : 0;
    }
    result.count = batch.size();
    return result;
  }

 private:
  static element pixel(const sy::data::batch_view& batch, std::size_t e, std::size_t i) {
    return static_cast<element>(batch.images[e * batch.pixels() + i]) / static_cast<element>(255);
  }
  element predict(const sy::data::batch_view& batch, std::size_t e) const {
    const auto w = sy::as_span(params);
    element y = 0;
    for (std::size_t i = 0; i < width; ++i) y += w[i] * pixel(batch, e, i);
    return y;
  }
};

template <class Arena>
Arena arena();
template <>
xt::xtensor<float, 1> arena() { return xt::xtensor<float, 1>::from_shape({width}); }
template <>
xt::xtensor<double, 1> arena() { return xt::xtensor<double, 1>::from_shape({width}); }
template <>
std::vector<float> arena() { return std::vector<float>(width); }
template <>
std::vector<double> arena() { return std::vector<double>(width); }
template <>
user::tensor<float> arena() { return user::tensor<float>(width); }
template <>
user::tensor<double> arena() { return user::tensor<double>(width); }

static_assert(sy::nn::model<toy_model<xt::xtensor<float, 1>>>);
static_assert(sy::nn::model<toy_model<user::tensor<double>>>);
static_assert(sy::nn::model<toy_model<std::vector<double>, true>>);
static_assert(std::is_same_v<sy::nn::parameter_t<toy_model<user::tensor<double>>>, double>);

// Trains on `ranks` in-process ranks under `strategy`; returns every rank's final parameters.
template <class Arena, bool Spans, class Strategy>
std::vector<std::vector<double>> train(int ranks, Strategy strategy) {
  const auto data = fixtures::quadrants(240, 5);
  return sy::transport::run_inproc(ranks, [&](sy::transport::inproc& t) {
    toy_model<Arena, Spans> model(arena<Arena>(), arena<Arena>());
    using element = typename toy_model<Arena, Spans>::element;
    sy::optim::sgd<sy::optim::constant, element> optimizer{width, sy::optim::constant{0.05}};
    sy::train::trainer_options options;
    options.epochs = 2;
    options.batch_size = 8;
    sy::train::trainer trainer{model, optimizer, strategy, options};
    const sy::train::history h = trainer.fit(t, data, *data);
    CHECK(h.last().train_loss < h.epochs.front().train_loss * 1.5);
    const auto w = sy::as_span(model.params);
    return std::vector<double>(w.begin(), w.end());
  });
}

// Every strategy on `Arena`: the same bits as with spans where the run is deterministic, and
// identical on every rank after the last epoch.
template <class Arena>
void every_strategy() {
  using ar = sy::strategy::all_reduce<>;
  using sync_ps = sy::strategy::parameter_server<sy::strategy::consistency::sync>;
  using async_ps = sy::strategy::parameter_server<>;
  const auto deterministic = [](auto strategy) {
    const auto with_arena = train<Arena, false>(3, strategy);
    const auto with_spans = train<Arena, true>(3, strategy);
    for (std::size_t r = 0; r < with_arena.size(); ++r) {
      CHECK(with_arena[r] == with_spans[r]);
      CHECK(with_arena[r] == with_arena[0]);
    }
  };
  deterministic(ar{});
  deterministic(sync_ps{1});
  deterministic(sy::strategy::switch_to{sync_ps{1}, ar{}, sy::trigger::after_epochs{1}});
  deterministic(sy::strategy::switch_to{ar{}, sync_ps{1}, sy::trigger::after_epochs{1}});
  // The asynchronous server's order of pushes is not deterministic: every rank ends with the
  // servers' parameters, and they are finite.
  for (const auto& run : {train<Arena, false>(3, async_ps{1}),
                          train<Arena, false>(3, sy::strategy::switch_to{async_ps{1}, ar{}, sy::trigger::after_epochs{1}})}) {
    for (const auto& rank : run) {
      CHECK(rank == run[0]);
      for (const double v : rank) CHECK(std::isfinite(v));
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("tensor_models: every strategy and a switch train a model whose parameters are an xtensor, a "
                   "std::vector or a user's tensor type", Arena, xt::xtensor<float, 1>, xt::xtensor<double, 1>,
                   std::vector<float>, std::vector<double>, user::tensor<float>, user::tensor<double>) {
  every_strategy<Arena>();
}

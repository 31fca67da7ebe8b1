// A model that satisfies nn::model and does nothing: the diagnostics that test the trainer's
// other arguments train it.
#pragma once

#include <switchyard/data/batch.hpp>
#include <switchyard/nn/evaluation.hpp>

#include <span>
#include <vector>

template <class E = float>
struct linear_model {
  std::vector<E> params = std::vector<E>(4), grads = std::vector<E>(4);
  std::span<E> parameters() { return params; }
  std::span<E> gradients() { return grads; }
  double forward_backward(const switchyard::data::batch_view&) { return 0.0; }
  switchyard::nn::evaluation evaluate(const switchyard::data::batch_view&) { return {}; }
};

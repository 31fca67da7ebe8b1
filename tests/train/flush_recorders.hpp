// A model and an optimizer that record the calling thread's floating-point flush mode at every
// forward-backward pass, evaluation and update: the tests of trainer_options::flush_subnormals,
// in process and under MPI.
#pragma once

#include <switchyard/core/floating_point.hpp>
#include <switchyard/nn/mlp.hpp>
#include <switchyard/optim/sgd.hpp>

#include <atomic>
#include <cstddef>
#include <span>
#include <stdexcept>

namespace fixtures {

namespace sy = switchyard;

// Counts, over every rank thread, the calls made with subnormals flushed and with them kept.
struct flush_counts {
  std::atomic<int> flushed{0};
  std::atomic<int> kept{0};
  void record() { (sy::subnormals_flushed() ? flushed : kept) += 1; }
};

// An mlp for the 8x8 quadrant problem that records the flush mode of each forward-backward pass
// and each evaluation, and can fail an evaluation on purpose.
struct recording_mlp : sy::nn::mlp<> {
  recording_mlp(flush_counts& computed, flush_counts& evaluated)
      : sy::nn::mlp<>(11, {8, 8, 1}, 4), computed_(&computed), evaluated_(&evaluated) {}
  double forward_backward(const sy::data::batch_view& batch) {
    computed_->record();
    return sy::nn::mlp<>::forward_backward(batch);
  }
  sy::nn::evaluation evaluate(const sy::data::batch_view& batch) {
    evaluated_->record();
    if (throw_at_evaluation) throw std::runtime_error("evaluation failed on purpose");
    return sy::nn::mlp<>::evaluate(batch);
  }
  bool throw_at_evaluation = false;

 private:
  flush_counts* computed_;
  flush_counts* evaluated_;
};

// SGD that records the flush mode of each update: the workers' under all-reduce, the servers'
// (inside their serving loop) under a parameter server.
struct recording_sgd : sy::optim::sgd<> {
  recording_sgd(std::size_t size, flush_counts& stepped) : sy::optim::sgd<>(size, 0.05), stepped_(&stepped) {}
  void step(std::span<float> parameters, std::span<const float> gradients) {
    stepped_->record();
    sy::optim::sgd<>::step(parameters, gradients);
  }

 private:
  flush_counts* stepped_;
};

}  // namespace fixtures

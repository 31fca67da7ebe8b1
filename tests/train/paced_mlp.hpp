// The tests' small mlp, with every forward and backward pass made `delay` longer: a worker that
// computes slowly, for the tests of time breakdowns and straggler triggers. Sleeps give lower
// bounds only (a loaded machine makes every time longer, never shorter), and a delay of a few
// milliseconds is long against the pass itself (about 0.1 ms) and the scheduler's noise.
#pragma once

#include <switchyard/data/batch.hpp>
#include <switchyard/nn/mlp.hpp>

#include <chrono>
#include <thread>

namespace fixtures {

struct paced_mlp : switchyard::nn::mlp<> {
  explicit paced_mlp(std::chrono::milliseconds delay) : switchyard::nn::mlp<>{11, {8, 8, 1}, 4}, delay(delay) {}
  double forward_backward(const switchyard::data::batch_view& batch) {
    std::this_thread::sleep_for(delay);
    return switchyard::nn::mlp<>::forward_backward(batch);
  }
  std::chrono::milliseconds delay;
};

}  // namespace fixtures

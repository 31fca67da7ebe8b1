// The tests' small mlp, with every forward and backward pass made slower: a worker that computes
// slowly, for the tests of time breakdowns and straggler triggers. Sleeps give lower bounds only
// (a loaded machine makes every time longer, never shorter), and a delay of a few milliseconds is
// long against the pass itself (about 0.1 ms) and the scheduler's noise.
#pragma once

#include <switchyard/data/batch.hpp>
#include <switchyard/nn/mlp.hpp>

#include <chrono>
#include <thread>

namespace fixtures {

// How `delay` slows a pass: `added` sleeps that long before it; `at_least` makes the whole pass
// last that long, its compute included. The straggler tests compare one rank's passes with the
// others' as a ratio, and there `at_least` keeps the ratio where the test puts it when a loaded
// machine (sanitizers, tests side by side, other tenants) stretches every pass's compute alike:
// added to both sleeps, 20 ms of compute turns 12 against 60 ms into 32 against 80, below a
// trigger's 2.5.
enum class pacing { added, at_least };

struct paced_mlp : switchyard::nn::mlp<> {
  explicit paced_mlp(std::chrono::milliseconds delay, pacing how = pacing::added)
      : switchyard::nn::mlp<>{11, {8, 8, 1}, 4}, delay(delay), how(how) {}
  double forward_backward(const switchyard::data::batch_view& batch) {
    if (how == pacing::added) {
      std::this_thread::sleep_for(delay);
      return switchyard::nn::mlp<>::forward_backward(batch);
    }
    const auto until = std::chrono::steady_clock::now() + delay;
    const double loss = switchyard::nn::mlp<>::forward_backward(batch);
    std::this_thread::sleep_until(until);
    return loss;
  }
  std::chrono::milliseconds delay;
  pacing how;
};

}  // namespace fixtures

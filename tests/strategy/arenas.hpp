// The smallest model the strategy tests need: two flat arenas, parameters and gradients, and no
// forward pass (each test fills the gradients itself). Satisfies what strategies ask of a model.
#pragma once

#include <span>
#include <vector>

namespace test_models {

struct arenas {
  std::vector<float> params;
  std::vector<float> grads;
  std::span<float> parameters() { return params; }
  std::span<float> gradients() { return grads; }
};

}  // namespace test_models

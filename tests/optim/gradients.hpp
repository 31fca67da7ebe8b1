// A deterministic gradient for the optimizer tests: n values in [-0.5, 0.5] that change with the
// step, so that successive steps differ.
#pragma once

#include <cstddef>
#include <vector>

namespace test_gradients {

inline std::vector<float> gradient(std::size_t n, int step) {
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i) {
    g[i] = static_cast<float>((static_cast<int>(i * 7) + step * 3) % 11) * 0.1f - 0.5f;
  }
  return g;
}

}  // namespace test_gradients

// A small synthetic classification problem for the training tests: side x side images (8 unless
// asked) whose bright quadrant names the class, so a few epochs learn it and every step is fast.
#pragma once

#include <switchyard/data/dataset.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace fixtures {

inline std::shared_ptr<const switchyard::data::dataset> quadrants(std::size_t examples, std::uint64_t seed,
                                                                   std::size_t side = 8) {
  std::vector<std::uint8_t> images(examples * side * side);
  std::vector<std::uint8_t> labels(examples);
  std::uint64_t state = seed;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  };
  for (std::size_t n = 0; n < examples; ++n) {
    const std::size_t label = next() % 4;
    labels[n] = static_cast<std::uint8_t>(label);
    for (std::size_t y = 0; y < side; ++y) {
      for (std::size_t x = 0; x < side; ++x) {
        const std::size_t quadrant = (y >= side / 2 ? 2 : 0) + (x >= side / 2 ? 1 : 0);
        const std::uint32_t noise = next() % 96;
        images[(n * side + y) * side + x] = static_cast<std::uint8_t>(quadrant == label ? 159 + noise : noise);
      }
    }
  }
  return std::make_shared<const switchyard::data::dataset>(std::move(images), std::move(labels), side, side, 4);
}

// The largest element-wise difference of two parameter vectors of the same length.
inline double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  }
  return worst;
}

}  // namespace fixtures

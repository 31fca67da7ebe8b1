// A mini-batch as the models see it: images kept as bytes (normalized by the model, per batch)
// and their class labels, both borrowed from storage the data loader owns and reuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace switchyard::data {

/// @brief A borrowed view of `size()` examples: `images` holds `size() * rows * cols` pixels,
/// row-major, one image after another; `labels` holds one class index per image.
struct batch_view {
  std::span<const std::uint8_t> images;
  std::span<const std::uint8_t> labels;
  std::size_t rows = 0;
  std::size_t cols = 0;

  /// Number of examples in the batch.
  [[nodiscard]] std::size_t size() const noexcept { return labels.size(); }
  /// Pixels per image.
  [[nodiscard]] std::size_t pixels() const noexcept { return rows * cols; }
};

}  // namespace switchyard::data

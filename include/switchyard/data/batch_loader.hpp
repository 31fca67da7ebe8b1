// Gathers the scattered examples of a training batch into one contiguous buffer, allocated once
// and reused for every batch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "switchyard/core/error.hpp"
#include "switchyard/data/batch.hpp"
#include "switchyard/data/dataset.hpp"

namespace switchyard::data {

/// @brief Copies the examples a `shard_plan` picks into a buffer sized for `capacity` examples
/// when the loader is built; `gather` never allocates.
///
/// One loader per rank: it shares the data set and owns its buffer.
/// @code
/// switchyard::data::batch_loader loader(train, 64);
/// switchyard::data::batch_view batch = loader.gather(plan.batch(rank, step));
/// @endcode
class batch_loader {
 public:
  /// @throws usage_error if `data` is null.
  batch_loader(std::shared_ptr<const dataset> data, std::size_t capacity);

  /// @brief Copies examples `indices` (in that order) into the buffer and returns a view of it,
  /// valid until the next `gather`.
  /// @throws usage_error if there are more than `capacity()` indices or one is not below
  /// `data().size()`.
  [[nodiscard]] batch_view gather(std::span<const std::size_t> indices);

  [[nodiscard]] const dataset& data() const noexcept { return *data_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return labels_.size(); }

 private:
  std::shared_ptr<const dataset> data_;
  std::vector<std::uint8_t> images_;
  std::vector<std::uint8_t> labels_;
};

// ----------------------------------------------------------------------------------------------
// Implementation
// ----------------------------------------------------------------------------------------------

inline batch_loader::batch_loader(std::shared_ptr<const dataset> data, std::size_t capacity)
    : data_(std::move(data)) {
  if (!data_) detail::raise<usage_error>("batch_loader: no data set (null pointer)");
  images_.resize(capacity * data_->pixels());
  labels_.resize(capacity);
}

inline batch_view batch_loader::gather(std::span<const std::size_t> indices) {
  if (indices.size() > capacity()) {
    detail::raise<usage_error>(detail::str("batch_loader::gather: ", indices.size(),
                                           " examples do not fit the capacity of ", capacity()));
  }
  const std::size_t pixels = data_->pixels();
  for (std::size_t slot = 0; slot < indices.size(); ++slot) {
    const std::size_t index = indices[slot];
    if (index >= data_->size()) {
      detail::raise<usage_error>(detail::str("batch_loader::gather: example ", index,
                                             " of a data set of ", data_->size()));
    }
    std::ranges::copy(data_->image(index), images_.begin() + slot * pixels);
    labels_[slot] = data_->labels()[index];
  }
  return {std::span(images_).first(indices.size() * pixels),
          std::span(labels_).first(indices.size()), data_->rows(), data_->cols()};
}

}  // namespace switchyard::data
